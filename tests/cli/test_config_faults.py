"""Settings are never lost and never crash the program: concurrent writers to a config or trust file keep each
other's changes, and any bytes in a config file end in a ConfigError that names the file, the key and the fix."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import PATIENCE

from mini_agent.cli.config import FILE_KEYS, resolve
from mini_agent.errors import ConfigError
from mini_agent.files.update import update_text
from mini_agent.trust import TrustStore

USER_CONFIG = '# my own settings\nmax_steps = 7  # keep this\n\n[permissions]\nallow = ["bash(ls)"]\n'


def resolve_config(home: Path, data: bytes, env: dict | None = None):
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_bytes(data)
    return resolve({"MINI_AGENT_HOME": str(home), **(env or {})}, {}, cwd=home)


@pytest.mark.e2e
def test_ten_concurrent_mcp_adds_keep_every_server_and_the_users_settings(tmp_path):
    home = tmp_path / "mini-agent-home"
    home.mkdir()
    config = home / "config.toml"
    config.write_text(USER_CONFIG)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    env.update({"MINI_AGENT_HOME": str(home), "MINI_AGENT_NO_SERVER": "1"})
    command = Path(sys.executable).parent / "mini-agent"
    adds = [
        subprocess.Popen([command, "mcp", "add", f"server{n}", "--", "srv", str(n)], env=env, stderr=subprocess.PIPE)
        for n in range(10)
    ]
    for process in adds:
        assert process.wait(timeout=PATIENCE) == 0, process.stderr.read().decode()
    data = tomllib.loads(config.read_text())
    assert sorted(data["mcp_servers"]) == sorted(f"server{n}" for n in range(10))
    assert data["max_steps"] == 7 and data["permissions"] == {"allow": ["bash(ls)"]}
    assert config.read_text().startswith(USER_CONFIG)  # the user's comments too
    assert [
        path.name for path in home.iterdir() if path.name.startswith(".config.toml.") and "lock" not in path.name
    ] == []


def test_removing_a_server_keeps_comments_and_other_servers(tmp_path):
    from mini_agent.mcp.edit import add_server, remove_server

    config = tmp_path / "config.toml"
    config.write_text(USER_CONFIG + '\n[mcp_servers.old]\ncommand = "x"  # why x\n')
    add_server(config, "new", {"command": "y", "env": {"A": "b"}})
    remove_server(config, "old")
    text = config.read_text()
    assert text.startswith(USER_CONFIG) and "old" not in text
    assert tomllib.loads(text)["mcp_servers"] == {"new": {"command": "y", "env": {"A": "b"}}}


def test_a_change_that_fails_leaves_the_file_as_it_was(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(USER_CONFIG)

    def broken(before: str) -> str:
        raise ConfigError("no")

    with pytest.raises(ConfigError):
        update_text(config, broken)
    assert config.read_text() == USER_CONFIG


def test_a_symlinked_config_is_written_through_not_replaced(tmp_path):
    dotfiles = tmp_path / "dotfiles" / "mini-agent.toml"
    dotfiles.parent.mkdir()
    dotfiles.write_text(USER_CONFIG)
    config = tmp_path / "config.toml"
    config.symlink_to(dotfiles)
    update_text(config, lambda text: text + 'model = "m"\n')
    assert config.is_symlink() and dotfiles.read_text().endswith('model = "m"\n')


def test_concurrent_trust_answers_from_two_stores_are_all_kept(tmp_path):
    class Thing:
        origin, source = "project", "/p/.mcp.json"

        def __init__(self, name: str) -> None:
            self.name = name

        def digest(self) -> str:
            return "d-" + self.name

    things = [Thing(f"s{n}") for n in range(20)]
    stores = [TrustStore(tmp_path), TrustStore(tmp_path)]  # two agents: their in-process locks differ
    threads = [threading.Thread(target=stores[n % 2].trust, args=(thing,)) for n, thing in enumerate(things)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(TrustStore(tmp_path).trusted(thing) for thing in things)


def test_a_config_that_is_not_utf8_names_the_file(tmp_path):
    with pytest.raises(ConfigError, match=r"config\.toml is not UTF-8 text .*save it as UTF-8"):
        resolve_config(tmp_path / "home", b'model = "caf\xe9"\n')


@pytest.mark.parametrize(
    ("line", "key", "fix"),
    [
        ("request_timeout = -5", "request_timeout", "request_timeout = 600"),
        ("mcp_timeout = -1", "mcp_timeout", "mcp_timeout = 5"),
        ("context_timeout = 0", "context_timeout", "context_timeout = 0.5"),
        ("request_timeout = nan", "request_timeout", "request_timeout = 600"),
        ("max_steps = 0", "max_steps", "max_steps = 50"),
        ("max_steps = 99999999999999999999", "max_steps", "max_steps = 50"),
        ("compact_threshold = 7", "compact_threshold", "compact_threshold = 0.8"),
    ],
)
def test_a_bad_value_is_reported_under_its_file_and_key_with_the_fix(tmp_path, line, key, fix):
    with pytest.raises(ConfigError) as raised:
        resolve_config(tmp_path / "home", line.encode() + b"\n")
    message = str(raised.value)
    assert f"{key} in {tmp_path / 'home' / 'config.toml'}" in message and fix in message
    assert "--" not in message  # not blamed on a flag the user never gave


def test_a_bad_value_from_the_environment_is_reported_under_the_variable(tmp_path):
    with pytest.raises(ConfigError, match=r"^MINI_AGENT_TIMEOUT must be"):
        resolve_config(tmp_path / "home", b"", {"MINI_AGENT_TIMEOUT": "-1"})


def test_a_bad_value_from_a_flag_is_reported_under_the_flag(tmp_path):
    with pytest.raises(ConfigError, match=r"^--max-steps must be"):
        resolve({"MINI_AGENT_HOME": str(tmp_path)}, {"max_steps": 0}, cwd=tmp_path)


_VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=20),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
)
_SECTIONS = st.sampled_from(["", "[permissions]\n", "[mcp_servers.a]\n", "[[hooks.PreToolUse]]\n", "[mcp_servers]\n"])
_KEYS = st.sampled_from([*FILE_KEYS, "allow", "deny", "command", "url", "args", "env", "matcher", "timeout", "x"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.binary(max_size=200),
        st.lists(st.tuples(_SECTIONS, _KEYS, _VALUES), max_size=6).map(
            lambda rows: "".join(section + f"{key} = {_toml(value)}\n" for section, key, value in rows).encode()
        ),
    )
)
def test_any_config_file_is_read_or_refused_with_a_config_error(tmp_path, data):
    try:
        resolve_config(tmp_path / "home", data)
    except ConfigError as exc:
        assert "config.toml" in str(exc) or " must be " in str(exc)


def _toml(value: object) -> str:
    import json
    import math

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)
