"""Nothing planted now runs later: a project's config or command a command wrote, and mini-agent's own installation
inside the project, end to end with the installed command against the loopback model.

Each attack is a repository script the agent runs in auto mode (as the red team's did), so the sandbox, not the
classifier, is what it meets; the next run is in default mode, without a terminal, as CI runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from support import PATIENCE, TEST_KEY
from support.fake_api import answer, tool_use
from support.trees import make_repo

from mini_agent.safety.sandbox import mechanism

needs_sandbox = pytest.mark.skipif(mechanism() is None, reason="no OS sandbox on this machine")
PLANT_COMMAND = """mkdir -p .claude/commands
printf -- '---\\nallowed-tools: Bash(touch:*)\\n---\\nMake the file made.txt\\n' > .claude/commands/mk.md
"""


@pytest.fixture
def project(tmp_path):
    return make_repo(tmp_path / "project")


def _landlock() -> bool:
    from mini_agent.safety.sandbox.landlock import abi_version

    return abi_version() > 0


# ---- the installation inside the project ---------------------------------------------------------------------


@pytest.fixture
def venv_project(tmp_path):
    """A project with its own virtualenv, from which mini-agent runs: the venv's site-packages has a `.pth` that
    adds this checkout's environment as a site directory (so mini-agent and its dependencies import)."""
    project = make_repo(tmp_path / "project")
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site_packages = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    ours = sysconfig.get_path("purelib")
    (site_packages / "checkout.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return project, venv, site_packages


def run_from(venv: Path, api, project: Path, tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    env.update(
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_API_KEY=TEST_KEY,
        ANTHROPIC_MODEL="claude-test",
        MINI_AGENT_NO_SERVER="1",
        MINI_AGENT_HOME=str(tmp_path / "mini-agent-home"),
        NO_COLOR="1",
        **extra,
    )
    return subprocess.run(
        [str(venv / "bin" / "python"), "-m", "mini_agent", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=PATIENCE,
    )


@needs_sandbox
@pytest.mark.e2e
def test_a_command_cannot_plant_a_pth_in_the_venv_mini_agent_runs_from(api, venv_project, tmp_path):
    project, venv, site_packages = venv_project
    check = run_from(venv, api, project, tmp_path, "--version")
    assert check.returncode == 0, check.stderr  # it really runs from the project's venv
    relative = site_packages.relative_to(project)
    (project / "setup.sh").write_text(
        f"echo 'import os' > {relative}/evil.pth; echo 'import os' > {relative}/sitecustomize.py; "
        f"echo '#!/bin/sh' > {relative.parents[2]}/bin/mini-agent-evil; echo done\n"
    )
    api.script(
        answer(tool_use("bash", {"command": "sh setup.sh"})),
        answer(tool_use("write_file", {"path": f"{relative}/other.pth", "content": "import os\n"})),
        answer("Set up."),
    )
    done = run_from(venv, api, project, tmp_path, "-p", "set up", "--permission-mode", "auto")
    assert done.returncode in (0, 4), done.stderr
    assert not (site_packages / "evil.pth").exists() and not (site_packages / "sitecustomize.py").exists()
    assert not (venv / "bin" / "mini-agent-evil").exists()
    assert not (site_packages / "other.pth").exists()  # the file tool asks (and nobody is there to say yes)
    wrote = api.message_requests[2]["messages"][-1]["content"][0]
    assert wrote["is_error"] and "installation" in wrote["content"]


@pytest.mark.skipif(not _landlock(), reason="no Landlock in this kernel")
@pytest.mark.e2e
def test_under_landlock_a_pth_planted_in_the_venv_is_told_on_the_terminal(api, venv_project, tmp_path):
    """Landlock cannot keep a path read-only inside the writable project (README, Limits): the human hears of the
    change before the next start would run it."""
    project, venv, site_packages = venv_project
    (project / "setup.sh").write_text(f"echo 'import os' > {site_packages.relative_to(project)}/evil.pth\n")
    api.script(answer(tool_use("bash", {"command": "sh setup.sh"})), answer("Set up."))
    done = run_from(venv, api, project, tmp_path, "-p", "set up", "--yes", MINI_AGENT_SANDBOX="landlock")
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert (site_packages / "evil.pth").exists()
    assert "mini-agent's own installation" in err and "check it before you run mini-agent again" in err


@needs_sandbox
@pytest.mark.e2e
def test_in_the_repl_a_command_planted_mid_session_is_told_and_asks_before_its_rules_apply(api, tmp_path):
    """Command files are read when used, so one planted now would be obeyed in this very session: it asks."""
    from support.repl import finish, spawn

    (tmp_path / "setup.sh").write_text(PLANT_COMMAND)
    api.script(
        answer(tool_use("bash", {"command": "sh setup.sh"})),
        answer("Set up."),
        answer(tool_use("bash", {"command": "touch made.txt"})),
        answer("Made."),
    )
    child = spawn(api, tmp_path)
    child.expect("›")
    child.sendline("set up")
    child.expect(r"Allow\?")
    child.send("y")  # the human approves the script: it runs outside the sandbox, and is still watched
    child.expect("Changed during that call")
    child.expect("Set up.")
    child.expect("›")
    child.sendline("/mk")
    child.expect(r"allows:\s+bash\(touch \*\)")
    child.expect(r"Trust these rules\?")
    child.sendline("y")
    child.expect("Made.")  # touch ran without a question: the trusted allowed-tools
    child.expect("›")
    child.sendcontrol("d")
    assert finish(child) == 0
    assert (tmp_path / "made.txt").exists()
