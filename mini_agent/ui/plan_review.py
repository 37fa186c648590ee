"""The plan question (exit_plan_mode): the plan rendered as Markdown, then one key. `a` approves it and accepts
edits without asking (accept-edits mode), `y` approves it and asks before each edit (default mode), `e` opens the
plan in the human's editor and asks again about their version (approved, it is the plan the model carries out),
`n` keeps planning and reads a line of what to change, which goes back to the model; Enter alone is `n` with no
words. Ctrl-C keeps planning and ends the turn.

The plan is the model's text: it is printed through the terminal chokepoint's console (`terminal_console`), so
an escape sequence in it is shown by name, never sent, and links are written out, never hyperlinks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from mini_agent.gate import ApprovalRequest
from mini_agent.safety.permissions import Allow, Decision, Deny
from mini_agent.ui.keys import ENTER, Keys, key_or_enter, line_or_nothing
from mini_agent.ui.spacing import apart
from mini_agent.ui.terminal_text import has_controls

ANSWERS = (
    ("a", "accept-edits", "yes, and accept edits without asking"),
    ("y", "default", "yes, and ask before each edit"),
    ("e", None, "edit the plan yourself (in $VISUAL or $EDITOR), then answer again"),
    ("n", None, "no, keep planning: say what to change"),
)
"""Key, the mode an approval switches to (None: keep planning), what the key says."""
PLAN_CONTROLS_WARNING = "⚠ this plan contains terminal control characters, shown by name (⟨ESC⟩, ⟨CR⟩ …)"


def review_plan(
    request: ApprovalRequest,
    err: TextIO,
    reader: Keys,
    paint: Callable[[str, str], str],
    columns: int,
    edit: Callable[[str], str | None] | None = None,
) -> Decision:
    """Show the plan and read the answer: Allow with the mode chosen (and the plan as the human edited it, if
    they did), or Deny with the human's words. `edit`: the editor (processes/editor.py by default)."""
    plan = request.plan or ""
    edited: str | None = None
    _show(plan, err, paint, columns)
    prompt = paint("1", "Carry out this plan? [a/y/e/n] ")
    reader.discard_typeahead()  # keys typed before the plan was shown must not approve it
    try:
        while True:
            _write(err, prompt)
            key = key_or_enter(reader)
            lowered = key.lower()
            if lowered == "e":
                _write(err, "e\n")
                changed = _edit(edited or plan, edit)
                if changed is None:
                    _write(err, f"  {paint('2', 'No editor could be run: set $VISUAL or $EDITOR.')}\n")
                elif changed.strip() and changed != (edited or plan):
                    edited = changed
                    _show(edited, err, paint, columns, "Your version of the plan")
                reader.discard_typeahead()
                continue
            for answer, mode, label in ANSWERS:
                if lowered == answer and mode is not None:
                    _write(err, f"{label}\n")
                    return Allow(f"the user approved the plan: {label}", mode=mode, plan=edited)
            if lowered == "n" or key == ENTER:
                _write(err, "keep planning · what to change, for the model (Enter to skip): ")
                words = line_or_nothing(reader) if lowered == "n" else ""
                return keep_planning(request.tool.name, words)
            reader.discard_typeahead()  # the rest of an arrow key's sequence is no answer either
            _write(err, f"\n  {paint('2', 'Press a, y, e or n (Enter: n).')}\n")
    except KeyboardInterrupt:
        _write(err, "\n")
        return Deny(
            "The user did not approve the plan and stopped the turn (Ctrl-C): stay in plan mode and wait for their "
            "next message.",
            stop_turn=True,
        )


def _show(plan: str, err: TextIO, paint: Callable[[str, str], str], columns: int, title: str = "The plan") -> None:
    from mini_agent.ui.markdown_stream import markdown
    from mini_agent.ui.terminal_text import terminal_console

    err.write(f"{apart(err)}{paint('36', '●')} {title}, for your approval:\n")
    console = terminal_console(file=err, width=max(20, columns), force_terminal=err.isatty(), highlight=False)
    console.print(markdown(plan))
    if has_controls(plan):
        err.write(f"  {paint('1;31', PLAN_CONTROLS_WARNING)}\n")
    err.write("".join(f"  {paint('1', key)}: {label}\n" for key, _, label in ANSWERS))


def _edit(plan: str, edit: Callable[[str], str | None] | None) -> str | None:
    if edit is None:
        from mini_agent.processes.editor import edit_text as edit
    return edit(plan)


def keep_planning(tool: str, words: str) -> Deny:
    """No, with what the human wants changed: the model revises the plan and presents it again."""
    message = " ".join(words.split())
    if message:
        return Deny(
            "The user did not approve the plan yet and wants changes; plan mode goes on. Their words: "
            f"{message}\nRevise the plan accordingly and call {tool} again when it is ready."
        )
    return Deny(
        "The user did not approve the plan; plan mode goes on. Ask them what they want changed before presenting "
        "it again."
    )


def _write(err: TextIO, text: str) -> None:
    err.write(text)
    err.flush()
