"""Secrets: the agent's key never reaches a command, and secret-looking values never leave in tool output."""

from __future__ import annotations

import json

from conftest import TEST_KEY
from fake_api import answer, tool_use

from mini_agent.settings import from_environment, secret_values

GITHUB = "ghp_0123456789abcdefSECRET"
DB_PASSWORD = "correct-horse-battery"


def test_secret_looking_variables_are_recognised_by_name():
    env = {
        "GITHUB_TOKEN": GITHUB,
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG",
        "PGPASSWORD": DB_PASSWORD,
        "MY_APP_SECRET": "s3cr3t-value-long",
        "FEATURE_TOKEN": "1",  # too short to be a key: masking it would garble output
        "PATH": "/usr/bin:/bin",
        "KEYBOARD": "us-international",
        "HOME": "/home/someone",
    }
    assert set(secret_values(env)) == {GITHUB, "wJalrXUtnFEMI/K7MDENG", DB_PASSWORD, "s3cr3t-value-long"}
    settings = from_environment({**env, "ANTHROPIC_API_KEY": TEST_KEY})
    assert settings.secrets[0] in (TEST_KEY, GITHUB) and set(settings.secrets) >= {TEST_KEY, GITHUB, DB_PASSWORD}
    assert GITHUB not in repr(settings)


def test_commands_never_see_the_agents_key_and_secret_values_are_masked_everywhere(run_cli, api, tmp_path):
    script = "echo token=$GITHUB_TOKEN; echo pw=$PGPASSWORD; env | grep -c ANTHROPIC_API_KEY || true"
    api.script(answer(tool_use("bash", {"command": script})), answer("Checked."))
    done = run_cli(
        ["-p", "show the environment", "--output-format", "stream-json", "--yes"],
        api,
        env={"GITHUB_TOKEN": GITHUB, "PGPASSWORD": DB_PASSWORD},
    )
    assert done.returncode == 0, done.stderr
    result = api.message_requests[1]["messages"][-1]["content"][0]["content"]
    assert "token=****" in result and "pw=****" in result
    assert result.splitlines()[2] == "0"  # the variable holding the key is not in the command's environment
    for text in (json.dumps(api.message_requests), done.stdout.decode(), done.stderr.decode()):
        assert GITHUB not in text and DB_PASSWORD not in text
    assert TEST_KEY not in done.stdout.decode() + done.stderr.decode()
