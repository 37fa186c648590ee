"""Refusals in two voices: the model gets the full text; the human a plain line, shown whole, whose flags are never
cut in the middle (a long command is shortened inside its quoted rule)."""

from __future__ import annotations

import io
import re
import shlex

from hypothesis import given, settings
from hypothesis import strategies as st
from support.fake_api import answer, tool_use

from mini_agent.events import ToolFinished
from mini_agent.safety.decisions import PLAN_REFUSAL, Ask, Deny, Grant
from mini_agent.safety.permissions import ToolCall, check
from mini_agent.safety.refusals import SHOWN_LIMIT, allow_flag, refusal_without_human
from mini_agent.safety.rules import Rule, Rules
from mini_agent.safety.workspace import Workspace
from mini_agent.tools.base import ToolResult
from mini_agent.ui.render import ProgressRenderer
from mini_agent.ui.terminal_text import visible

TOOL_NAMES = st.sampled_from(["bash", "edit_file", "write_file", "read_file", "web_fetch"])
TEXT = st.text(min_size=0, max_size=400)


def assert_flags_whole(line: str) -> None:
    """Every --allow in the line is followed by one complete shell word naming a whole rule, `tool(pattern)`;
    the line ends right after a complete flag or mode (or says nobody could be asked)."""
    assert "\n" not in line and len(line) <= SHOWN_LIMIT
    assert line.endswith(".")
    if "rerun with " not in line:
        return
    tail = line.split("rerun with ", 1)[1][:-1]
    tail = re.sub(r" \(and \d+ more rules?\)", "", tail)
    words = shlex.split(tail)  # raises on a quote left open: a flag cut in two
    for index, word in enumerate(words):
        if word == "--allow":
            rule = words[index + 1]
            assert re.fullmatch(r"[a-z_]+(\(.*\))?", rule, re.DOTALL), rule
    if "--permission-mode" in words:
        assert words[words.index("--permission-mode") + 1] in ("auto", "accept-edits")
    assert words[-1] != "--allow" and words[-1] != "--permission-mode"


@settings(max_examples=300, deadline=None)
@given(
    tool=TOOL_NAMES,
    patterns=st.lists(TEXT, min_size=0, max_size=4),
    reason=TEXT,
    risk=st.sampled_from(["ordinary", "sensitive", "destructive"]),
)
def test_the_allow_hint_never_ends_inside_a_flag_or_rule(tool, patterns, reason, risk):
    rules = tuple(Rule("allow", tool, pattern or None) for pattern in patterns)
    ask = Ask(reason, risk, (Grant("a", "always", rules),) if rules else ())
    refusal = refusal_without_human(tool, ask)
    assert_flags_whole(refusal.shown)
    for rule in rules:  # the model gets every rule in full, quoted for a shell
        assert allow_flag(rule) in refusal.message
        assert shlex.split(allow_flag(rule))[1] == rule.text
    err = io.StringIO()
    ProgressRenderer(err)(ToolFinished("t1", tool, {}, ToolResult(refusal.message, True, shown=refusal.shown), 0.0))
    assert visible(refusal.shown) in err.getvalue()  # printed whole (control characters named), not cut


@settings(max_examples=60, deadline=None)
@given(command=st.text(alphabet=st.sampled_from(list("abc xyz-='\"$;|&/.*\\\n")), min_size=1, max_size=300))
def test_for_any_command_the_hint_of_a_refused_call_is_whole(tmp_path_factory, command):
    root = tmp_path_factory.getbasetemp()
    verdict = check(ToolCall("bash", "exec", {"command": command}), "default", Rules(()), Workspace.at(root, root))
    if isinstance(verdict, Ask):
        assert_flags_whole(refusal_without_human("bash", verdict).shown)


def test_a_long_command_is_shortened_inside_the_quoted_rule():
    command = "npm run build -- " + " ".join(f"--flag-{i}=value" for i in range(40))
    ask = Ask("not on the read-only list", "ordinary", (Grant("a", "always", (Rule("allow", "bash", command),)),))
    refusal = refusal_without_human("bash", ask)
    assert f"--allow '{'bash(' + command + ')'}'" in refusal.message  # the model: in full
    shown = refusal.shown
    assert "--allow 'bash(npm run build -- --flag-0=value" in shown and "…" in shown
    assert shown.endswith("=value)' or --permission-mode auto.")


def test_plan_mode_refusals_show_the_human_a_plain_sentence(tmp_path):
    workspace = Workspace.at(tmp_path, tmp_path)
    (tmp_path / "notes.txt").write_text("x\n")
    cases = [
        (ToolCall("edit_file", "write", {"path": "notes.txt"}), "this would change notes.txt"),
        (ToolCall("write_file", "write", {"path": "new.txt"}), "this would create new.txt"),
        (ToolCall("bash", "exec", {"command": "rm -rf build"}), "deletes build"),
    ]
    for call, what in cases:
        refusal = check(call, "plan", Rules(()), workspace)
        assert isinstance(refusal, Deny)
        assert refusal.message.startswith("Plan mode is read-only, so ")  # the model's text is unchanged
        assert refusal.shown == f"Not run: plan mode makes no changes ({what}); switch modes to let it run."
    assert PLAN_REFUSAL.startswith("Plan mode is read-only")


def test_a_one_shot_run_shows_the_human_the_plain_refusal_and_the_model_the_full_one(run_cli, api, tmp_path):
    api.script(answer(tool_use("write_file", {"path": "plan.txt", "content": "x"})), answer("Here is the plan."))
    done = run_cli(["-p", "plan it", "--permission-mode", "plan"], api)
    assert done.returncode == 4, done.stderr  # a refused call
    stderr = done.stderr.decode()
    assert "● write_file(plan.txt) ✗ Not run: plan mode makes no changes (this would create plan.txt)" in stderr
    assert "Investigate with read_file" not in stderr
    result = api.message_requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] and "Investigate with read_file and read-only shell commands" in result["content"]
    assert not (tmp_path / "plan.txt").exists()


def test_a_one_shot_run_shows_the_whole_allow_hint_for_a_long_command(run_cli, api, tmp_path):
    command = "touch " + " ".join(f"file-number-{i}.txt" for i in range(30))
    api.script(answer(tool_use("bash", {"command": command})), answer("Could not."))
    done = run_cli(["-p", "make files"], api)
    assert done.returncode == 4, done.stderr  # a refused call
    line = next(line for line in done.stderr.decode().splitlines() if line.startswith("● bash("))
    hint = line.split(": ", 1)[1]
    assert_flags_whole(hint)
    assert "--allow 'bash(touch file-number-0.txt" in hint and hint.endswith(" or --permission-mode auto.")
    result = api.message_requests[1]["messages"][-1]["content"][0]
    assert f"--allow 'bash({command})'" in result["content"]
