"""Wire a run together: read piped input, build the provider, prepare what the agent is made from (app/build.py),
pick the front end."""

from __future__ import annotations

import os
import select
from dataclasses import replace

from mini_agent import threads
from mini_agent.app.environment import Environment
from mini_agent.context.attach import Attachment, read_limited, stdin_attachment
from mini_agent.errors import ConfigError, ExitStatus
from mini_agent.settings import Settings

STDIN_FIRST_BYTE_WAIT = 5.0
"""Seconds a pipe's producer gets to send its first byte (it may be a slow command) beside `-p`."""
STDIN_OTHER_WAIT = 1.0
"""Seconds anything else on stdin (a socket, a device a runner left open) gets: it is rarely meant as input."""


def launch(
    settings: Settings,
    prompt: str | None,
    output_format: str,
    resume: str | None = None,
    environment: Environment | None = None,
    fork: bool = False,
    images: tuple[str, ...] = (),
    first: str | None = None,
    input_format: str = "text",
) -> ExitStatus:
    """`resume`: None for a new session, "" to continue this directory's latest, else a session id; `fork`:
    continue a copy of it in a new session (--fork-session). `images`: the `--image` files, attached to the
    one-shot prompt. `first`: the REPL's first prompt (`mini-agent "fix the bug"`), sent as if typed.
    `input_format` "stream-json": the turns are JSON lines on stdin, read one by one (app/stream_input.py)."""
    environment = environment or Environment.of_process()
    started = environment.clock()
    streamed = input_format == "stream-json"
    stdin = None if streamed else environment.stdin  # the turns' own stream: never read as one prompt
    interactive = prompt is None and stdin is not None and environment.stdin_isatty
    settings, provider = provider_for(settings, environment.variables)
    if prompt is None and not interactive and stdin is None and not streamed:
        raise ConfigError("No prompt: pass one with -p, pipe one on stdin, or run in a terminal.")
    piped, more = "", False
    if stdin is not None and not environment.stdin_isatty and (prompt is None or _has_input(stdin, environment)):
        piped, more = read_limited(stdin.buffer, settings.stdin_limit)
        if more:
            notice = f"mini-agent: piped input cut to its first {settings.stdin_limit} characters."
            print(notice, file=environment.stderr)
    attachment: Attachment | None = None
    if prompt is None and not interactive and not streamed:
        prompt = piped  # without -p, the piped text is the task itself
    elif piped.strip():
        attachment = stdin_attachment(piped, more, settings.stdin_limit)
    if prompt is not None and not prompt.strip():
        raise ConfigError("No prompt: the prompt is empty. Pass one with -p or pipe some text.")
    server_prompt = prompt is not None and any(prompt.startswith(f"/mcp__{s.name}__") for s in settings.mcp_servers)
    if prompt is not None and not interactive and prompt.startswith("/") and not server_prompt:  # before servers start
        from mini_agent.app.custom_commands import refuse_unless_a_command

        refuse_unless_a_command(prompt, settings)
    attached = _attach_images(images, settings, interactive)
    can_ask = stdin is not None and environment.stdin_isatty and environment.stderr_isatty
    settings, servers, hooks = project_parts(settings, can_ask, environment.stderr, start_servers=not interactive)
    if server_prompt and not interactive:  # an MCP server's prompt: `-p "/mcp__docs__review 42"`
        from mini_agent.app import mcp_setup

        prompt = mcp_setup.one_shot_prompt(servers, prompt, settings.mcp_timeout) or prompt
    elif prompt is not None and not interactive and prompt.startswith("/"):  # a custom command: `-p "/review 42"`
        from mini_agent.app.custom_commands import one_shot_prompt

        prompt, settings = one_shot_prompt(prompt, settings, environment.stderr, can_ask=can_ask)
    provider.settings = settings
    if not interactive:
        if settings.permission_mode != "bypass":  # the sandbox probe (~10 ms) too, not inside the first bash step
            threads.start(_probe_sandbox, name="sandbox-probe")
        # Only waits (the endpoint's lookup, the probe's processes) overlap the SDK import: the rest of start-up
        # is CPU work like the import, and would only compete with it for the interpreter.
        provider.warm_up(here=True)

    from mini_agent.app.lifecycle import SessionLifecycle

    # One-shot runs are undoable too (`mini-agent undo`, or /undo after --continue): the snapshot is taken before
    # the first tool that may change files, never before the first request.
    sessions = SessionLifecycle(settings, resume, fork=fork)

    from mini_agent.app.build import AgentBuilder

    build = AgentBuilder(settings, provider, sessions, servers, hooks, one_shot=not interactive)

    from mini_agent.app.session_hooks import ending_on_signals

    if interactive:
        from mini_agent.app.repl import run_interactive

        # The SDK import would compete with drawing the prompt for the interpreter: it starts once the prompt
        # is on screen and overlaps the user's typing instead. So do the MCP servers.
        warm_up = provider.warm_up if servers is None else lambda: (provider.warm_up(), build.mcp().start())
        with ending_on_signals(sessions, hooks):
            return run_interactive(build, settings, sessions, warm_up, first)
    if streamed:
        from mini_agent.app.stream_input import run_streamed

        with ending_on_signals(sessions, hooks):
            try:
                return run_streamed(build, settings, prompt, started, sessions, environment, attached)
            finally:
                sessions.end("other")
    from mini_agent.app.oneshot import run_once

    stdin_text = attachment.text if attachment else None
    with ending_on_signals(sessions, hooks):
        try:
            return run_once(
                build, settings, prompt, stdin_text, output_format, can_ask, started, sessions, environment, attached
            )
        finally:
            sessions.end("other")  # after the answer is out: the hooks do not delay it


def provider_for(settings: Settings, variables=os.environ):
    """The model provider for `settings` (credentials required), and the settings with the endpoint's first
    model when a local preset named none."""
    from mini_agent.model.endpoints import PRESETS

    preset = PRESETS.get(settings.provider or "")
    settings.require_credentials(settings.api_key_variable or (preset.key_variable if preset else None))
    from mini_agent.model import AnthropicProvider
    from mini_agent.step_preload import PRELOAD

    provider = AnthropicProvider(settings, memory=_endpoint_memory(variables))
    provider.on_sent = PRELOAD.request_sent  # what the steps need loads during replies, not in the steps
    if not settings.model:  # a vLLM, llama.cpp or LiteLLM preset without --model: the endpoint's first model
        settings = replace(settings, model=provider.endpoint_model())
        provider.settings = settings
    return settings, provider


def project_parts(settings: Settings, can_ask: bool, err, start_servers: bool):
    """A project's MCP servers, hooks and allow rules, each trusted first (asked, or left out with a notice when
    nobody can answer); `start_servers`: make the servers' manager and start them now, overlapping the rest of
    start-up; else the agent's build makes it (behind the REPL's prompt) and the warm-up starts them.
    Returns (settings with the trusted rules, the MCP manager, or the names of the servers left out, or None when
    there are no servers, the hooks or None)."""
    servers = None
    if settings.mcp_servers:  # trust first (no SDK import)
        from mini_agent.app import mcp_setup

        servers = mcp_setup.screen(settings, can_ask, err)
        if start_servers:
            servers = mcp_setup.manager_for(settings, servers)
            servers.start()
    hooks = None
    if settings.hooks:
        from mini_agent.app import hooks_setup

        hooks = hooks_setup.prepare(settings, can_ask, err)
    if any(rule.origin.kind == "project" and rule.effect == "allow" for rule in settings.rules.rules):
        from mini_agent.app import rules_setup

        settings = rules_setup.prepare(settings, can_ask, err)
    from mini_agent.app import instructions_setup

    instructions_setup.prepare(settings, can_ask, err)  # what the agent wrote into AGENTS.md & co.
    from mini_agent.app import skills_setup

    skills_setup.prepare(settings, can_ask, err)  # and into skill folders
    return settings, servers, hooks


def _attach_images(paths: tuple[str, ...], settings: Settings, interactive: bool) -> tuple:
    """The `--image` files read and fitted now: one that cannot be sent is a usage error before any request."""
    if not paths:
        return ()
    if interactive:
        raise ConfigError("--image attaches images to a -p prompt; in the interactive session type @PATH or drag "
                          "the file in.")  # fmt: skip
    from mini_agent.context.enrich.mentions import resolve
    from mini_agent.context.images import attach

    attached = tuple(attach(path, resolve(path, settings.cwd)) for path in paths)
    for image in attached:
        if image.problem:
            raise ConfigError(f"--image {image.label}: {image.problem}.")
    return attached


def _probe_sandbox() -> None:
    from mini_agent.safety.sandbox import mechanism

    mechanism()


def _has_input(stdin, environment: Environment) -> bool:
    """Whether piped stdin has data or EOF soon; an inherited, silent, never-closed stdin must not hang us."""
    try:
        stdin.fileno()
    except (OSError, ValueError):
        return True  # not a file at all (a test's in-memory stream): all there is, there already
    try:
        import stat

        pipe = stat.S_ISFIFO(os.fstat(stdin.fileno()).st_mode)
        wait = STDIN_FIRST_BYTE_WAIT if pipe else STDIN_OTHER_WAIT
        ready, _, _ = select.select([stdin], [], [], wait)
    except (OSError, ValueError):
        return os.path.isfile(f"/proc/self/fd/{stdin.fileno()}")
    if not ready:
        print(f"mini-agent: stdin is open but sent nothing in {wait:g} s; ignoring it.", file=environment.stderr)
    return bool(ready)


def _endpoint_memory(variables):
    """Where what remote endpoints said about themselves is remembered between runs (the cache directory)."""
    from pathlib import Path

    from mini_agent.locations import cache_dir
    from mini_agent.model.endpoint_memory import EndpointMemory

    return EndpointMemory(Path(cache_dir(variables)) / "endpoints.json")
