"""The REPL's input line (ui/repl_input.py): completion of slash commands and @paths, and the Shift+Tab cycle that
asks before the first move into auto. The keys themselves, read from a real terminal: tests/e2e/test_repl.py."""

from __future__ import annotations


def test_tab_completes_paths_after_an_at_sign(tmp_path):
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from mini_agent.ui.repl_input import ReplCompleter

    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / "setup.cfg").write_text("")
    (tmp_path / ".hidden").write_text("")
    completer = ReplCompleter(lambda: [("/compact", "compact"), ("/context", "tokens")], lambda: tmp_path)

    def complete(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent(completion_requested=True))]

    assert complete("look at @s") == ["setup.cfg", "src/"]
    assert complete("look at @src/") == ["src/main.py", "src/pkg/"]
    assert complete("@src/m") == ["src/main.py"]
    assert complete("/co") == ["/compact", "/context"]
    assert complete("no mention here") == []


def test_the_first_move_into_auto_by_shift_tab_waits_for_a_yes():
    from mini_agent.ui.repl_input import ModeSwitch

    state = {"mode": "default"}
    modes = ModeSwitch(lambda: state["mode"], lambda mode: state.update(mode=mode))
    modes.cycle()
    assert state["mode"] == "accept-edits" and not modes.asking
    modes.cycle()
    assert state["mode"] == "accept-edits" and modes.asking  # asked, not switched
    modes.answer(False)
    assert state["mode"] == "accept-edits" and not modes.asking
    modes.cycle()
    modes.cycle()  # Shift+Tab again at the question passes auto over
    assert state["mode"] == "plan" and not modes.asking
    modes.cycle(), modes.cycle(), modes.cycle()
    assert modes.asking
    modes.answer(True)
    assert state["mode"] == "auto"
    for expected in ("plan", "default", "accept-edits", "auto"):  # once confirmed, the cycle runs freely
        modes.cycle()
        assert state["mode"] == expected and not modes.asking
