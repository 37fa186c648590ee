"""One turn without a conversation: `-p TASK` or piped input, in text, json or stream-json."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from mini_agent.agent import Agent, TurnResult
from mini_agent.app.environment import Environment
from mini_agent.app.turns import Tally, Turn, after_turn, take_turn
from mini_agent.errors import ExitStatus, MiniAgentError
from mini_agent.events import Emit
from mini_agent.settings import Settings
from mini_agent.ui.confirm import ask_on_terminal, refuse_without_human
from mini_agent.ui.render import ProgressRenderer, QuietRenderer, StreamJsonRenderer
from mini_agent.ui.terminal_text import visible
from mini_agent.usage import Usage


def run_once(
    build: Callable[..., Agent],
    settings: Settings,
    prompt: str,
    stdin: str | None,
    output_format: str,
    can_ask: bool,
    started: float,
    sessions=None,
    environment: Environment | None = None,
    images: tuple = (),
) -> ExitStatus:
    """`build` makes the agent (app/build.py), attached to `sessions` (a SessionLifecycle), which writes the run
    to a session file, new or continued. `images`: the `--image` files, read (context.images.AttachedImage)."""
    environment = environment or Environment.of_process()
    out, err = environment.stdout, environment.stderr
    stream = StreamJsonRenderer(out, settings.trace) if output_format == "stream-json" else None
    render: Emit = stream or (QuietRenderer(err) if output_format == "json" else ProgressRenderer(err, settings.trace))
    tally = Tally(render)
    confirm = ask_on_terminal(err) if can_ask else refuse_without_human
    agent = build(tally, confirm)  # with its session, continued or new (app/build.py)
    if sessions is not None and sessions.notice:
        print(visible(f"mini-agent: {sessions.notice}"), file=err)
    if stream:
        stream.session_id = sessions.session_id if sessions is not None else None
        stream.write(init_record(agent, sessions))
    turn: Turn | None = None
    if settings.compact_first:
        try:
            agent.keeper.compact_now(agent.session, tally, settings.compact_focus)
        except MiniAgentError as exc:
            turn = Turn(None, exc.exit_status, settings.secret_set.mask(str(exc)))
    turn = turn or take_turn(agent, tally, prompt, stdin, images)
    result, status, error = turn.result, turn.status, turn.error
    if sessions is not None:
        after_turn(sessions, err)
        sessions.close()
    denials = tally.denials
    record = result_record(agent, result, turn.said, status, tally.steps, environment.clock() - started, denials)
    record.update(session_fields(sessions))
    try:
        if output_format == "text":
            if result is not None and result.text:  # for reading: the exact bytes are in --output-format json
                out.write(visible(result.text.rstrip("\n"), crlf_is_newline=True) + "\n")
            if error:
                print(visible(f"mini-agent: {error}"), file=err)
            for denial in denials:
                print(visible(f"mini-agent: {refused_line(denial)}"), file=err)
        elif stream:
            stream.write(record)
        else:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        out.flush()
        err.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
    return status


def init_record(agent: Agent, sessions=None) -> dict:
    """stream-json's first record, Claude Code's `system`/`init` (`permissionMode`, `apiKeySource`, `uuid` in its
    names) with mini-agent's own fields beside."""
    import uuid

    from mini_agent import __version__
    from mini_agent.ui.claude_shapes import permission_mode

    settings = agent.settings
    return {
        "type": "system",
        "subtype": "init",
        "model": settings.model,
        "cwd": str(settings.cwd),
        "permission_mode": settings.permission_mode,
        "permissionMode": permission_mode(settings.permission_mode),
        "apiKeySource": key_source(settings),
        "tools": [tool.name for tool in agent.registry],
        "mcp_servers": mcp_records(agent),
        "session_id": sessions.session_id if sessions is not None else None,
        "mini_agent_version": __version__,
        "uuid": str(uuid.uuid4()),
        **({"forked_from": sessions.forked_from} if sessions is not None and sessions.forked_from else {}),
    }


def key_source(settings: Settings) -> str:
    """The variable the key was read from (Claude Code names `ANTHROPIC_API_KEY` so), or `none`: no key, or a
    local server's placeholder."""
    from mini_agent.model.endpoints import PRESETS

    preset = PRESETS.get(settings.provider or "")
    key = settings.api_key or settings.auth_token
    if not key or (preset is not None and key == preset.placeholder_key):
        return "none"
    if settings.api_key_variable or preset is not None:
        return settings.api_key_variable or preset.key_variable
    return "ANTHROPIC_API_KEY" if settings.api_key else "ANTHROPIC_AUTH_TOKEN"


def session_fields(sessions) -> dict:
    """The result's `session_id` (the session the run wrote: with --fork-session the new one, and `forked_from`)
    and a `uuid`, as Claude Code's result has."""
    import uuid

    fields: dict = {"uuid": str(uuid.uuid4())}
    if sessions is not None and (sessions.writer_id or sessions.session_id):
        fields["session_id"] = sessions.writer_id or sessions.session_id
        if sessions.forked_from:
            fields["forked_from"] = sessions.forked_from
    return fields


OUTCOMES = {
    ExitStatus.SUCCESS: "success",
    ExitStatus.ERROR: "error",
    ExitStatus.USAGE: "error",
    ExitStatus.STEP_LIMIT: "step_limit",
    ExitStatus.DENIED: "permission_denied",
    ExitStatus.INTERRUPTED: "interrupted",
}
"""mini-agent's own name for how a run ended (`outcome`)."""
SUBTYPES = {
    ExitStatus.SUCCESS: "success",
    ExitStatus.DENIED: "success",  # the model finished; the refusals are in permission_denials
    ExitStatus.STEP_LIMIT: "error_max_turns",
}
"""Claude Code's names (`subtype`), so scripts written for `claude -p` read the same; anything else is its
`error_during_execution`."""


def ended(status: ExitStatus) -> dict:
    return {"subtype": SUBTYPES.get(status, "error_during_execution"), "outcome": OUTCOMES.get(status, "error")}


def spent(agent: Agent) -> tuple[float | None, dict]:
    """The run's cost, each model's usage at its own prices (None when no model used has a price), and Claude
    Code's `modelUsage` map."""
    from mini_agent.model.pricing import cost

    by_model = agent.session.usage_by_model or {agent.settings.model: agent.session.usage}
    costs = {model: cost(model, usage) for model, usage in by_model.items()}
    models = {
        model: {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "cacheReadInputTokens": usage.cache_read_input_tokens,
            "cacheCreationInputTokens": usage.cache_creation_input_tokens,
            "costUSD": costs[model],
        }
        for model, usage in by_model.items()
    }
    known = [money for money in costs.values() if money is not None]
    return (round(sum(known), 6) if known else None), models


def result_record(
    agent: Agent,
    result: TurnResult | None,
    error: str | None,
    status: ExitStatus,
    steps: int,
    duration: float,
    denials: list[dict] | None = None,
) -> dict:
    """The `json` output object, also the last line of `stream-json`; the schema is documented in README.md."""
    usage = agent.session.usage
    total_cost, model_usage = spent(agent)
    return {
        "type": "result",
        **ended(status),
        "is_error": status != ExitStatus.SUCCESS,
        "exit_code": int(status),
        "result": result.text if result else "",
        "error": error,
        "stop_reason": result.stop_reason if result else None,
        "steps": result.steps if result else steps,
        "duration_ms": round(duration * 1000),
        "duration_api_ms": round(agent.api_seconds * 1000),
        "num_turns": result.steps if result else steps,
        "total_cost_usd": total_cost,
        "model": agent.settings.model,
        "usage": usage.to_dict(),
        "modelUsage": model_usage,
        "context_tokens": agent.context_size() if agent.session.last_usage else 0,
        "context_window": agent.window(),
        "compactions": agent.session.compactions,
        "permission_denials": denials or [],
        "mcp_servers": mcp_records(agent),
        **({"trace": agent.keeper.trace.to_dict() if agent.keeper.trace else None} if agent.settings.trace else {}),
    }


def mcp_records(agent: Agent) -> list[dict]:
    """Each MCP server and how it stands (Claude Code's init record carries the same list): a server that failed
    to start is in every output format, with why."""
    if agent.mcp is None:
        return []
    return [
        {"name": row.name, "status": row.status, **({"error": row.error} if row.error else {})}
        for row in agent.mcp.status()
    ]


def failure_record(error: str, status: ExitStatus, model: str | None, duration: float) -> dict:
    """The `json` result of a run that failed before its first request (no key, no prompt, a bad config): the
    same keys a run's result has, so a script reads one shape."""
    return {
        "type": "result",
        **ended(status),
        "is_error": True,
        "exit_code": int(status),
        "result": "",
        "error": error,
        "stop_reason": None,
        "steps": 0,
        "duration_ms": round(duration * 1000),
        "duration_api_ms": 0,
        "num_turns": 0,
        "total_cost_usd": 0.0,
        "model": model,
        "usage": Usage().to_dict(),
        "modelUsage": {},
        "context_tokens": 0,
        "context_window": None,
        "compactions": 0,
        "permission_denials": [],
    }


def refused_line(denial: dict) -> str:
    """A refused call for the end of a text run, on stderr: what, why, and what would allow it."""
    call = f"{denial['tool']}({denial['input']})" if denial["input"] else denial["tool"]
    allow = f"; to allow it: {' or '.join(denial['allow'])}" if denial["allow"] else ""
    return f"refused {call}: {denial['reason']}{allow}"
