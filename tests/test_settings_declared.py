"""Each setting is declared once, on its Settings field (flag, variable, config key, range, how it is shown): the
layers, the command line, `mini-agent config` and the docs all follow the declarations."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from mini_agent.cli.config import DECLARED, FILE_KEYS, resolve
from mini_agent.cli.main import app
from mini_agent.errors import ConfigError
from mini_agent.model.endpoints import PRESETS
from mini_agent.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
FLAGGED = sorted(name for name, declaration in DECLARED.items() if declaration.flags)


def _kind(name: str) -> str:
    return Settings.__dataclass_fields__[name].type


def _pool(name: str) -> list[object]:
    """Distinct values the setting accepts, for one layer each."""
    kind = _kind(name)
    if name == "provider":
        return list(PRESETS)
    if name == "permission_mode":
        return ["default", "plan", "accept-edits", "auto"]
    if name == "effort":
        return ["low", "medium", "high", "max", "off"]
    if name == "base_url":
        return [f"http://127.0.0.{n}:9" for n in range(1, 6)]
    if kind == "bool":
        return [False, True]
    if kind.startswith("str"):
        return [f"{name}-{n}" for n in range(5)]
    within = DECLARED[name].within or (lambda value: True)
    numbers = [n for n in (1, 2, 3, 7, 1024, 2048, 4096, 8192) if within(n)]
    return numbers if kind.startswith("int") else [n / 8 for n in numbers] + numbers


def _toml(value: object) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else json.dumps(value)


def _layers(name: str, tmp_path: Path) -> list[str]:
    """The layers that can set the setting, lowest first."""
    declaration = DECLARED[name]
    layers = ["user"] if declaration.key else []
    if declaration.key and not declaration.user_only:
        layers.append("project")
    if declaration.env:
        layers.append("env")
    if declaration.flags:
        layers.append("flag")
    return layers


@pytest.mark.parametrize("name", sorted(n for n, d in DECLARED.items() if d.key or d.env or d.flags))
def test_each_layer_that_declares_a_setting_sets_it_and_beats_the_layers_below(name, tmp_path):
    declaration = DECLARED[name]
    layers = _layers(name, tmp_path)
    pool = _pool(name)
    project = tmp_path / "project"
    (project / ".mini-agent").mkdir(parents=True)
    for top in range(len(layers)):
        home = tmp_path / f"home{top}"
        home.mkdir()
        env, flags, chosen = {"MINI_AGENT_HOME": str(home)}, {}, {}
        project_file = project / ".mini-agent" / "config.toml"
        project_file.write_text("")
        for index, layer in enumerate(layers[: top + 1]):
            # A switch on the command line can only say yes; the permission mode a project may choose is plan.
            value = True if layer == "flag" and _kind(name) == "bool" else pool[index % len(pool)]
            value = "plan" if layer == "project" and name == "permission_mode" else value
            chosen[layer] = value
            if layer == "user":
                (home / "config.toml").write_text(f"{declaration.key} = {_toml(value)}\n")
            elif layer == "project":
                project_file.write_text(f"{declaration.key} = {_toml(value)}\n")
            elif layer == "env":
                env[declaration.env] = str(value)
            else:
                flags[name] = value
        resolved = resolve(env, flags, cwd=project)
        winner = layers[top]
        source = {
            "user": str(home / "config.toml"),
            "project": str(project_file),
            "env": f"env {declaration.env}",
            "flag": declaration.flag,
        }[winner]
        assert (getattr(resolved.settings, name), resolved.sources[name]) == (chosen[winner], source)


def test_a_project_file_cannot_set_what_only_the_users_own_config_may(tmp_path):
    project = tmp_path / "project"
    (project / ".mini-agent").mkdir(parents=True)
    user_only = sorted(name for name, declaration in DECLARED.items() if declaration.user_only)
    text = "".join(f"{DECLARED[name].key} = {_toml(_pool(name)[-1])}\n" for name in user_only)
    (project / ".mini-agent" / "config.toml").write_text(text)
    resolved = resolve({"MINI_AGENT_HOME": str(tmp_path / "home")}, cwd=project)
    assert [name for name in user_only if name in resolved.sources] == []
    assert len(resolved.notices) == len(user_only)
    for name in user_only:
        assert any(f"only your own config can {DECLARED[name].user_only}" in notice for notice in resolved.notices)


@pytest.mark.parametrize("name", sorted(n for n, d in DECLARED.items() if d.within))
def test_a_value_out_of_range_names_the_flag_variable_or_key_it_came_from(name, tmp_path):
    declaration = DECLARED[name]
    bad = "no-such-level" if _kind(name).startswith("str") else -(10**12)  # outside every range
    ways = [({DECLARED[name].env: str(bad)}, {}, f"^{declaration.env} must be ")] if declaration.env else []
    ways += [({}, {name: bad}, f"^{declaration.flag} must be ")] if declaration.flags else []
    for env, flags, message in ways:
        with pytest.raises(ConfigError, match=message) as raised:
            resolve({"MINI_AGENT_HOME": str(tmp_path), **env}, flags, cwd=tmp_path)
        assert declaration.must in str(raised.value) and declaration.example in str(raised.value)
    if declaration.key:
        (tmp_path / "config.toml").write_text(f"{declaration.key} = {_toml(bad)}\n")
        wanted = f"^{declaration.key} in .*config.toml must be {re.escape(declaration.must)}"
        with pytest.raises(ConfigError, match=wanted):
            resolve({"MINI_AGENT_HOME": str(tmp_path)}, cwd=tmp_path)


def test_a_true_or_false_variable_is_read_as_such_not_as_any_text(monkeypatch):
    # No switch has a variable today; a declaration that gives one must not read "0" as true.
    from mini_agent.cli import config

    assert config._from_text(bool, "X", "0") is False and config._from_text(bool, "X", "true") is True
    with pytest.raises(ConfigError, match="^X must be 1 or 0"):
        config._from_text(bool, "X", "maybe")


def test_config_keys_are_the_field_names_so_messages_and_provenance_name_what_the_user_writes():
    assert {declaration.key for declaration in DECLARED.values() if declaration.key} == set(FILE_KEYS)
    assert [(name, d.key) for name, d in DECLARED.items() if d.key and d.key != name] == []


def _run_options() -> dict[str, tuple[str, ...]]:
    command = typer.main.get_command(app)
    return {param.name: tuple(param.opts) for param in command.params}


def test_every_declared_flag_is_an_option_of_the_command_line_under_its_field_name():
    options = _run_options()
    assert {name: options.get(name) for name in FLAGGED} == {name: DECLARED[name].flags for name in FLAGGED}


def test_every_option_named_after_a_setting_is_declared_on_that_setting():
    fields = set(Settings.__dataclass_fields__)
    assert sorted(name for name in _run_options() if name in fields and name not in FLAGGED) == []


def test_help_lists_every_declared_flag_with_its_help():
    text = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "400"}).output
    for name in FLAGGED:
        declaration = DECLARED[name]
        line = next((line for line in text.splitlines() if re.search(rf"(^|\s){declaration.flag}\b", line)), "")
        assert all(flag in line for flag in declaration.flags), (name, line)
        assert " ".join(declaration.help.split()[:4]) in " ".join(text.split()), name


def test_the_configuration_page_names_every_declared_key_variable_and_flag():
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([^`]+)`", page))
    declared = {d.key for d in DECLARED.values() if d.key} | {d.env for d in DECLARED.values() if d.env}
    declared |= {flag for d in DECLARED.values() for flag in d.flags}
    assert sorted(declared - named) == []


def test_mini_agent_config_shows_what_is_declared_shown_and_nothing_else(tmp_path):
    env = {"MINI_AGENT_HOME": str(tmp_path), "ANTHROPIC_API_KEY": "sk-test-0123456789"}
    result = CliRunner().invoke(app, ["config", "--json"], env=env)
    shown = set(json.loads(result.output)["settings"])
    hidden = {name for name, declaration in DECLARED.items() if not declaration.shown}
    assert hidden & shown == set()
    assert set(Settings.__dataclass_fields__) - hidden == shown
