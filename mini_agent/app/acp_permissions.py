"""The permission question put to an editor: mini-agent's approval request as ACP `session/request_permission`
options, and the editor's answer as the gate's decision.

The options are the terminal's answers: yes (`allow_once`), one `allow_always` per "always" answer the policy
offers for this call (this command, this prefix, edits to this file, this host: each adds its rules for the
session, as on the terminal), and no (`reject_once`). A call on which the policy offers no "always" answer (a
secret about to leave, a command outside the sandbox) gets no `allow_always` option. An answer naming no option
on offer is a no; `cancelled` (the editor cancelled the prompt) refuses the call and stops the turn.
"""

from __future__ import annotations

from acp import text_block, tool_content
from acp.schema import PermissionOption, ToolCallUpdate

from mini_agent.gate import ApprovalRequest
from mini_agent.safety.permissions import Allow, Decision, Deny
from mini_agent.ui.confirm import declined

YES, NO, ALWAYS = "allow_once", "reject_once", "allow_always:"


def options_for(request: ApprovalRequest) -> list[PermissionOption]:
    always = [
        PermissionOption(option_id=f"{ALWAYS}{grant.key}", name=_capitalised(grant.label), kind="allow_always")
        for grant in request.ask.grants
    ]
    return [
        PermissionOption(option_id=YES, name="Yes", kind="allow_once"),
        *always,
        PermissionOption(option_id=NO, name="No", kind="reject_once"),
    ]


def _capitalised(label: str) -> str:
    return label[:1].upper() + label[1:]


def question_for(request: ApprovalRequest, call_id: str, title: str, kind: str, diff: list | None) -> ToolCallUpdate:
    """The call the question is about: its id (the `tool_call` the editor was told of), why the policy asks,
    and the change: as ACP diff content when the editor can show one, else as the unified diff."""
    shown = f"{request.reason}\n\n{request.preview}" if request.preview and not diff else request.reason
    return ToolCallUpdate(
        tool_call_id=call_id,
        title=title,
        kind=kind,
        status="pending",
        content=[*(diff or []), tool_content(text_block(shown))],
        raw_input=request.arguments,
    )


def decision_for(outcome, request: ApprovalRequest) -> Decision:
    """The editor's answer (a `RequestPermissionResponse.outcome`) as the gate's decision."""
    tool = request.tool.name
    if getattr(outcome, "outcome", None) != "selected":
        return Deny(f"The user refused {tool} and stopped the turn (cancelled in the editor). Wait for their next "
                    "message.", stop_turn=True)  # fmt: skip
    chosen = outcome.option_id
    if chosen == YES:
        return Allow("the user allowed it")
    for grant in request.ask.grants:
        if chosen == f"{ALWAYS}{grant.key}":
            return Allow(f"the user allowed it: {grant.label}", grant.rules)
    return declined(tool, "")
