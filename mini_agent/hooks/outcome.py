"""What a finished hook said: exit 0 goes on (its stdout, or the JSON it printed, may add context or decide to
block), exit 2 blocks with its stderr as the reason, any other ending is an error that is reported and ignored."""

from __future__ import annotations

import json
from dataclasses import dataclass

from mini_agent.hooks.runner import HookRun

BLOCK_EXIT = 2
CONTEXT_LIMIT = 10_000
"""Characters of a hook's output the model gets; a hook is not a way to flood the context."""


@dataclass(frozen=True)
class Outcome:
    block: str | None = None
    """Why the hook stops what it ran for (exit 2's stderr, or a JSON decision's reason); None: go on."""
    context: str = ""
    """Text for the model: plain stdout of exit 0, or the JSON's additionalContext."""
    message: str | None = None
    """For the human: the JSON's systemMessage, or what went wrong with the hook."""
    failed: str | None = None
    """Why the hook itself failed ("exit 1", "timed out after 60 s"); it changes nothing."""
    allows: bool = False
    """A PermissionRequest hook's `hookSpecificOutput.decision.behavior` was "allow" (and nothing blocked)."""

    @property
    def label(self) -> str:
        if self.failed or self.block is not None:
            return self.failed or "blocked"
        return "allowed" if self.allows else "context" if self.context else "ok"


def read_outcome(run: HookRun) -> Outcome:
    if run.exit_code is None:
        return Outcome(message=f"hook {run.hook.summary()} {run.error}; going on without it.", failed=run.error)
    if run.exit_code == BLOCK_EXIT:
        return Outcome(block=_capped(run.stderr.strip()) or "(the hook gave no reason)")
    if run.exit_code != 0:
        detail = run.stderr.strip().splitlines()[0] if run.stderr.strip() else "no output on stderr"
        failed = f"exit {run.exit_code}"
        return Outcome(message=f"hook {run.hook.summary()} failed ({failed}: {detail[:300]}); going on.", failed=failed)
    reply = _json_reply(run.stdout)
    if reply is None:
        return Outcome(context=_capped(run.stdout.strip()))
    specific = reply.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    decision = specific.get("decision")  # PermissionRequest's answer: {"behavior": "allow" | "deny", "message"}
    behavior = decision.get("behavior") if isinstance(decision, dict) else None
    block = None
    if reply.get("decision") == "block":
        block = _text(reply.get("reason")) or "(the hook gave no reason)"
    elif specific.get("permissionDecision") == "deny":
        block = _text(specific.get("permissionDecisionReason")) or "(the hook gave no reason)"
    elif behavior == "deny":
        block = _text(decision.get("message")) or "(the hook gave no reason)"  # type: ignore[union-attr]
    return Outcome(
        block=_capped(block) if block is not None else None,
        context=_capped(_text(specific.get("additionalContext"))),
        message=_text(reply.get("systemMessage")) or None,
        allows=block is None and behavior == "allow",
    )


def _json_reply(stdout: str) -> dict | None:
    """The hook's JSON answer, when its stdout is one object; anything else is plain text."""
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        reply = json.loads(text)
    except ValueError:
        return None
    return reply if isinstance(reply, dict) else None


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _capped(text: str | None) -> str:
    if text is None or len(text) <= CONTEXT_LIMIT:
        return text or ""
    return text[:CONTEXT_LIMIT] + f"\n[… {len(text) - CONTEXT_LIMIT} more characters cut]"
