"""`mini-agent permissions` and `mini-agent check-command`, run in process."""

from __future__ import annotations

import json


def test_check_command_prints_the_decision_class_and_reason(run_cli):
    done = run_cli(["check-command", "git log --oneline | head -5"])
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "decision: allow (mode default)" in out and "class:    read-only" in out and "reason:" in out

    done = run_cli(["check-command", "rm -rf ~", "--mode", "auto"])
    out = done.stdout.decode()
    assert "decision: ask (mode auto)" in out and "class:    destructive" in out


def test_check_command_json_for_scripts(run_cli):
    done = run_cli(["check-command", "--json", "--mode", "auto", "ls && npm test && git push --force"])
    record = json.loads(done.stdout)
    assert record["decision"] == "ask" and record["class"] == "destructive" and record["mode"] == "auto"
    assert [part["class"] for part in record["parts"]] == ["read-only", "ordinary", "destructive"]
    assert record["allow_with"] == ["bash(git push --force)"]
    done = run_cli(["check-command", "--json", "npm test"])
    assert json.loads(done.stdout)["decision"] == "ask"
    done = run_cli(["--allow", "bash(npm test)", "check-command", "--json", "npm test"])
    record = json.loads(done.stdout)
    assert record["decision"] == "allow" and "bash(npm test)" in record["reason"]
    assert record["sandbox"] == "none"  # an exact rule of the user's runs the command as they would


def test_check_command_says_which_sandbox_a_command_runs_in(run_cli):
    from mini_agent.safety.sandbox import mechanism

    records = {
        (command, mode): json.loads(run_cli(["check-command", "--json", "--mode", mode, command]).stdout)
        for command, mode in [("ls", "default"), ("npm test", "auto"), ("npm test", "bypass")]
    }
    present = mechanism() is not None
    assert records["ls", "default"]["sandbox"] == ("read-only" if present else "none")
    assert records["npm test", "auto"]["sandbox"] == ("workspace-write" if present else None)
    assert records["npm test", "bypass"]["sandbox"] == "none"
    done = run_cli(["--allow", "bash(npm install *)", "check-command", "npm install left-pad", "--mode", "auto"])
    assert ("sandbox:  workspace-write+network" in done.stdout.decode()) is present


def test_check_command_rejects_an_unknown_mode(run_cli):
    done = run_cli(["check-command", "ls", "--mode", "yolo"])
    assert done.returncode == 2 and "Unknown permission mode" in done.stderr.decode()


def test_permissions_lists_each_rule_with_where_it_came_from(run_cli, tmp_path):
    home = tmp_path / "mini-agent-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text('[permissions]\ndeny = ["bash(git push *)"]\n')
    project = tmp_path / "repo"
    (project / ".mini-agent").mkdir(parents=True)
    (project / ".mini-agent" / "config.toml").write_text('[permissions]\nallow = ["edit_file(src/**)"]\n')
    done = run_cli(["--allow", "bash(npm test)", "permissions"], cwd=project)
    assert done.returncode == 0, done.stderr
    rows = [" ".join(line.split()) for line in done.stdout.decode().splitlines()]
    assert f"deny bash(git push *) user config {home / 'config.toml'}" in rows
    assert (
        f"allow edit_file(src/**) project config {project / '.mini-agent' / 'config.toml'} "
        "(not trusted yet: asked at the next start)"
    ) in rows
    assert "allow bash(npm test) flag --allow" in rows
    record = json.loads(run_cli(["permissions", "--json"], cwd=project).stdout)
    assert [(r["effect"], r["rule"], r["source"]) for r in record["rules"]] == [
        ("deny", "bash(git push *)", "user"),
        ("allow", "edit_file(src/**)", "project"),
    ]


def test_a_broken_rule_is_a_usage_error_before_anything_runs(run_cli, api):
    done = run_cli(["-p", "hello", "--allow", "bash(npm test"], api)
    assert done.returncode == 2 and "is not `tool` or `tool(pattern)`" in done.stderr.decode()
    assert api.message_requests == []
    done = run_cli(["--deny", "shell(ls)", "permissions"])
    assert done.returncode == 2 and "unknown tool" in done.stderr.decode()
