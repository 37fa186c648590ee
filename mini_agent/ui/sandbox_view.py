"""`mini-agent sandbox` and `mini-agent sandbox run`: what the OS sandbox enforces here, and a command run under it
for inspection (output streamed, its exit status returned)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from mini_agent.safety.sandbox import Level
    from mini_agent.settings import Settings


def print_sandbox(settings: Settings, cwd: Path, as_json: bool, out: TextIO) -> None:
    from mini_agent.safety.sandbox import Confinement, describe

    agent = Confinement.for_agent("read-only", cwd, settings)
    record = describe(cwd, hidden_paths=agent.hidden_paths, read_only_paths=agent.read_only_paths)
    if as_json:
        out.write(json.dumps(record, indent=2) + "\n")
        return
    from rich.table import Table

    from mini_agent.ui.terminal_text import terminal_console

    console = terminal_console(file=out, highlight=False, soft_wrap=False)
    if record["mechanism"] is None:
        console.print(f"No sandbox on this machine: {record['unavailable_reason']}")
        console.print("Commands are not confined; the permission policy keeps asking.")
    else:
        console.print(f"Sandbox: {record['mechanism']} ({record['detail']}); {record['choice']}")
    table = Table("", *record["levels"], show_lines=True)
    rows = (
        ("writable", "writable"),
        ("read-only inside", "read_only_inside_writable"),
        ("hidden", "hidden"),
        ("network", "network"),
    )
    for title, key in rows:
        cells = [record["levels"][level][key] for level in record["levels"]]
        table.add_row(title, *("\n".join(cell) if isinstance(cell, list) else cell for cell in cells))
    console.print(table)
    console.print("Always hidden when present: " + ", ".join(record["hidden_in_home"]))
    if record["read_only_in_root"]:
        console.print("Kept read-only in the project root: " + ", ".join(record["read_only_in_root"]))
    if record.get("git"):
        console.print("The project's git repository:")
        for line in record["git"]:
            console.print(f"  - {line}")
    filtered = record["seccomp"]
    if filtered["loaded"]:
        console.print("Refused by a seccomp filter (your local services' sockets): " + ", ".join(filtered["refuses"]))
    elif record["mechanism"] is not None:
        console.print(f"No seccomp filter: {filtered['unavailable_reason']}")
    if record["service_sockets_covered"]:
        console.print("Service sockets covered: " + ", ".join(record["service_sockets_covered"]))
    console.print("Limits:")
    for limit in record["limits"]:
        console.print(f"  - {limit}")


def run_confined(settings: Settings, argv: list[str], level: Level, network: bool, cwd: Path) -> int:
    """Run `argv` confined in `cwd` as the agent's commands are, its output going straight to ours; its exit
    status (128+N if killed)."""
    from mini_agent.processes.run import child_environment
    from mini_agent.processes.tree import Lineage
    from mini_agent.safety.sandbox import Confinement, SandboxUnavailable, confine

    confinement = Confinement.for_agent(level, cwd, settings, network)
    env = child_environment()
    try:
        launch = confine(argv, env, cwd, confinement)
    except SandboxUnavailable as exc:
        print(f"mini-agent: {exc}", flush=True)
        return 1
    process = None
    lineage = Lineage(launch.contained)
    try:
        # In our process group: the terminal's Ctrl-C reaches it as it reaches us.
        process = lineage.spawn(
            launch.argv, launch.preexec_fn, new_session=False, cwd=cwd, env=launch.env, pass_fds=launch.pass_fds
        )
        returncode = process.wait()
        changes = launch.git_changes()  # put back what it planted in the git dir, as after the agent's commands
        if changes:
            print(f"mini-agent: {changes.notice()}", flush=True)
    except FileNotFoundError as exc:
        print(f"mini-agent: could not start {argv[0]}: {exc}", flush=True)
        return 127
    except KeyboardInterrupt:
        if process is not None:
            process.wait()
        return 130
    finally:
        lineage.kill(grace=0)  # what it left behind goes with it
        lineage.close()
        launch.cleanup()
    return returncode if returncode >= 0 else 128 - returncode
