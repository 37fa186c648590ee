"""exit_plan_mode: in plan mode, the model ends its planning by putting the plan to the human, who approves it
(the session switches to the mode they chose and the work starts in the same turn) or sends it back with what to
change. Where nobody can be asked (a one-shot run), the run ends with the plan as its answer, nothing done.

The asking is the gate's (`ToolContext.review_plan`, through the same question as every approval); the policy lets
the call through only in plan mode (safety/permissions.py)."""

from __future__ import annotations

from mini_agent.safety.rules import TODO_WRITE
from mini_agent.tools.base import ToolContext, ToolError, ToolResult, tool
from mini_agent.xmltext import escape

GUIDANCE = """In plan mode, once you have investigated and know what to change: call it with the plan, in Markdown
(the steps, the files each one changes, how you will check the work). The user approves it, and the session
leaves plan mode so you can carry it out at once, or says what to change: then revise the plan and call it again.
Not for questions about the code or research with nothing to change; outside plan mode it does nothing."""

APPROVED = {
    "accept-edits": "file edits inside the project now run without asking; commands still ask as usual",
    "default": "each file edit and each command that changes something asks the user first",
}


@tool(risk="read", guidance=GUIDANCE, alias="ExitPlanMode", alone=True)
def exit_plan_mode(ctx: ToolContext, plan: str) -> ToolResult:
    """Present the plan to the user for approval and leave plan mode to carry it out.

    Args:
        plan: The plan, in Markdown: concise, with the concrete steps and the files they change.
    """
    if not plan.strip():
        raise ToolError("Invalid arguments for exit_plan_mode: 'plan' is empty. Write the plan, then call it again.")
    if ctx.review_plan is None:
        raise ToolError("Not run: only the main agent presents plans. Put the plan in your final answer instead.")
    answer = ctx.review_plan(plan)
    if answer is None:
        return ToolResult(
            "Nobody can approve a plan in this run: it ends here, with the plan as its result. Nothing was changed.",
            answer=plan,
        )
    mode, edited = answer
    how = APPROVED.get(mode, f"the {mode} mode's rules apply")
    approved = "The user approved the plan."
    if edited is not None:  # the human's own words: data to carry out, escaped like any text that reaches you
        approved = (
            "The user edited the plan and approved their version, which replaces yours:\n"
            f"<plan>\n{escape(edited.strip())}\n</plan>\n"
        )
    return ToolResult(
        f"{approved} The session is now in {mode} mode: {how}. Carry out the plan now, step by step; for several "
        f"steps, track them with {TODO_WRITE}."
    )
