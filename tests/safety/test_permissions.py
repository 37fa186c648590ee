"""The permission policy: modes, rules and their precedence, workspace and secret protection, refusals.

The shell corpus (tests/shell_corpus.py) is checked here once per mode: the class decides the decision.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.shell_corpus import CORPUS

from mini_agent.safety.permissions import Allow, Ask, Deny, ToolCall, check, check_destination, refusal_without_human
from mini_agent.safety.rules import Origin, Rules, parse_rule
from mini_agent.safety.workspace import Workspace

RISKS = {"read_file": "read", "write_file": "write", "edit_file": "write", "bash": "exec", "web_fetch": "network"}
MODES = ("default", "accept-edits", "auto", "plan", "bypass")
# What each class of command gets in each mode, with a human there to ask.
EXPECTED = {
    "read-only": {"default": Allow, "accept-edits": Allow, "auto": Allow, "plan": Allow, "bypass": Allow},
    "ordinary": {"default": Ask, "accept-edits": Ask, "auto": Allow, "plan": Deny, "bypass": Allow},
    "destructive": {"default": Ask, "accept-edits": Ask, "auto": Ask, "plan": Deny, "bypass": Allow},
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    """A project and a separate home, both fresh (the layout the shell corpus expects), no scratch space."""
    base = Path(tmp_path_factory.mktemp("policy")).resolve()
    (base / "project").mkdir()
    (base / "home").mkdir()
    return Workspace(root=base / "project", home=base / "home")


def call(tool: str, **arguments) -> ToolCall:
    return ToolCall(tool, RISKS[tool], arguments)


def rules(*entries: tuple[str, str], origin: Origin = Origin("user", "config.toml")) -> Rules:
    return Rules(tuple(parse_rule(text, effect, origin) for effect, text in entries))


@pytest.mark.parametrize("mode", MODES)
def test_every_corpus_command_gets_its_class_decision_in_every_mode(workspace, mode):
    """At least 250 commands: read-only ones never nag, destructive ones always ask (refused in plan)."""
    space = workspace
    wrong = []
    for command, kind, _category in CORPUS:
        verdict = check(call("bash", command=command), mode, Rules(), space)
        if not isinstance(verdict, EXPECTED[kind][mode]):
            wrong.append((command, kind, verdict))
        if isinstance(verdict, Ask):
            assert verdict.reason and verdict.classification
            assert (verdict.risk == "destructive") is (kind == "destructive"), command
        else:
            assert verdict.reason if isinstance(verdict, Allow) else verdict.message, command
    assert not wrong, wrong[:10]
    assert len(CORPUS) >= 250


@pytest.mark.parametrize(
    ("mode", "tool", "arguments", "expected"),
    [
        ("default", "read_file", {"path": "x"}, Allow),
        ("default", "write_file", {"path": "x", "content": ""}, Ask),
        ("default", "edit_file", {"path": "x"}, Ask),
        ("default", "web_fetch", {"url": "https://example.com"}, Ask),
        ("accept-edits", "write_file", {"path": "x", "content": ""}, Allow),
        ("accept-edits", "edit_file", {"path": "sub/x"}, Allow),
        ("accept-edits", "web_fetch", {"url": "https://example.com"}, Ask),
        ("auto", "web_fetch", {"url": "https://example.com"}, Allow),
        ("auto", "write_file", {"path": "x", "content": ""}, Allow),
        ("plan", "read_file", {"path": "x"}, Allow),
        ("plan", "write_file", {"path": "x", "content": ""}, Deny),
        ("plan", "web_fetch", {"url": "https://example.com"}, Ask),
        ("bypass", "write_file", {"path": "/etc/passwd", "content": ""}, Allow),
    ],
)
def test_modes_for_files_and_fetches(workspace, mode, tool, arguments, expected):
    assert isinstance(check(call(tool, **arguments), mode, Rules(), workspace), expected)


@pytest.mark.parametrize("mode", ["default", "accept-edits", "auto"])
@pytest.mark.parametrize(
    "path",
    [
        "../elsewhere.txt",
        "/etc/hosts",
        "~/.bashrc",
        "~/.ssh/authorized_keys",
        ".git/hooks/pre-commit",
        ".git/config",
        "~/.zshrc",
        ".mini-agent/config.toml",
        ".mcp.json",
        ".claude/commands/deploy.md",
        "sub/.claude/commands/x/y.md",
        ".claude/agents/reviewer.md",
        ".claude/skills/pdf/SKILL.md",
        ".mini-agent/skills/pdf/scripts/fill.py",
        ".claude/settings.json",
        "~/.claude/settings.json",
    ],
)
def test_writes_outside_the_workspace_or_to_protected_places_ask_in_every_mode(workspace, mode, path):
    for tool in ("write_file", "edit_file"):
        verdict = check(call(tool, path=path, content="x"), mode, Rules(), workspace)
        assert isinstance(verdict, Ask) and verdict.risk == "sensitive", (tool, path, verdict)
        assert verdict.grants and verdict.grants[0].key == "e"


def test_a_symlink_out_of_the_workspace_is_outside(workspace, tmp_path):
    (workspace.root / "link").symlink_to(tmp_path, target_is_directory=True)
    verdict = check(call("write_file", path="link/escape.txt", content=""), "auto", Rules(), workspace)
    assert isinstance(verdict, Ask) and "outside the working directory" in verdict.reason
    inside = check(call("write_file", path="real/x.txt", content=""), "auto", Rules(), workspace)
    assert isinstance(inside, Allow)


@pytest.mark.parametrize(
    ("path", "secret", "in_auto"),
    [
        (".env", True, Allow),
        (".env.production", True, Allow),
        ("config/.env.example", False, Allow),
        ("deploy/key.pem", True, Allow),
        ("~/.ssh/id_ed25519", True, Ask),
        ("~/.ssh/id_ed25519.pub", False, Allow),
        ("~/.aws/credentials", True, Ask),
        ("~/.netrc", True, Ask),
        ("~/.docker/config.json", True, Ask),
        ("~/.kube/config", True, Ask),
        ("~/.config/gcloud/credentials.db", True, Ask),
        ("../other/.env", True, Ask),
        ("src/main.py", False, Allow),
        ("environment.md", False, Allow),
    ],
)
def test_reading_likely_secrets_asks_and_in_auto_mode_only_the_projects_own_are_read(workspace, path, secret, in_auto):
    for mode in ("default", "accept-edits", "plan"):
        verdict = check(call("read_file", path=path), mode, Rules(), workspace)
        assert isinstance(verdict, Ask if secret else Allow), (mode, path)
    verdict = check(call("read_file", path=path), "auto", Rules(), workspace)
    assert isinstance(verdict, in_auto), path
    if in_auto is Ask:
        assert verdict.risk == "sensitive" and "outside the project" in verdict.reason


def test_deny_beats_ask_beats_allow(workspace):
    both = rules(("allow", "bash(npm *)"), ("ask", "bash(npm publish *)"), ("deny", "bash(npm publish --force)"))
    assert isinstance(check(call("bash", command="npm test"), "default", both, workspace), Allow)
    asked = check(call("bash", command="npm publish"), "auto", both, workspace)
    assert isinstance(asked, Ask) and "npm publish *" in asked.reason
    denied = check(call("bash", command="npm publish --force"), "bypass", both, workspace)
    assert (
        isinstance(denied, Deny) and "bash(npm publish --force)" in denied.message and "config.toml" in denied.message
    )


def test_an_ask_rule_asks_even_for_read_only_commands(workspace):
    assert isinstance(check(call("bash", command="git log"), "auto", rules(("ask", "bash(git log *)")), workspace), Ask)


def test_each_part_of_a_compound_command_needs_its_own_permission(workspace):
    allowed = rules(("allow", "bash(npm test)"))
    assert isinstance(check(call("bash", command="git status && npm test"), "default", allowed, workspace), Allow)
    mixed = check(call("bash", command="npm test && npm publish"), "default", allowed, workspace)
    assert isinstance(mixed, Ask) and "npm publish" in str(mixed.grants)
    denied = check(
        call("bash", command="ls; curl -s https://x.example"), "bypass", rules(("deny", "bash(curl *)")), workspace
    )
    assert isinstance(denied, Deny)


def test_deny_rules_see_through_wrappers_and_quoting(workspace):
    deny = rules(("deny", "bash(git push *)"))
    for command in ("git push", "timeout 60 git push origin", "env X=1 git push", "'git' push", 'bash -c "git push"'):
        assert isinstance(check(call("bash", command=command), "auto", deny, workspace), Deny), command


def test_destructive_commands_need_an_exact_rule_from_the_user(workspace):
    command = "git push --force origin main"
    broad = rules(("allow", "bash"), ("allow", "bash(git push *)"))
    assert isinstance(check(call("bash", command=command), "auto", broad, workspace), Ask)
    exact = rules(("allow", f"bash({command})"))
    assert isinstance(check(call("bash", command=command), "default", exact, workspace), Allow)
    project = rules(("allow", f"bash({command})"), origin=Origin("project", ".mini-agent/config.toml"))
    assert isinstance(check(call("bash", command=command), "auto", project, workspace), Ask)


def test_a_project_file_cannot_open_the_workspace_protections(workspace):
    project = Origin("project", "repo/.mini-agent/config.toml")
    opened = rules(("allow", "write_file(/etc/**)"), ("allow", "read_file(.env)"), origin=project)
    assert isinstance(check(call("write_file", path="/etc/hosts", content=""), "auto", opened, workspace), Ask)
    assert isinstance(check(call("read_file", path=".env"), "default", opened, workspace), Ask)
    mine = rules(("allow", "write_file(/etc/hosts)"), ("allow", "read_file(.env)"))
    assert isinstance(check(call("write_file", path="/etc/hosts", content=""), "default", mine, workspace), Allow)
    assert isinstance(check(call("read_file", path=".env"), "default", mine, workspace), Allow)


def test_a_project_file_can_allow_ordinary_things(workspace):
    project = rules(("allow", "bash(make *)"), ("allow", "edit_file(src/**)"), origin=Origin("project", "p"))
    assert isinstance(check(call("bash", command="make test"), "default", project, workspace), Allow)
    assert isinstance(check(call("edit_file", path="src/a.py"), "default", project, workspace), Allow)
    assert isinstance(check(call("edit_file", path="docs/a.md"), "default", project, workspace), Ask)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8000/", Ask),
        ("http://localhost/admin", Ask),
        ("http://169.254.169.254/latest/meta-data/", Ask),
        ("http://[::1]/", Ask),
        ("http://10.1.2.3/", Ask),
        ("https://example.com/", Allow),
        ("file:///etc/passwd", Deny),
        ("ftp://example.com/x", Deny),
    ],
)
def test_fetches_to_private_addresses_ask_even_in_auto_mode(workspace, url, expected):
    assert isinstance(check(call("web_fetch", url=url), "auto", Rules(), workspace), expected)


def test_a_host_rule_opens_a_private_address_and_a_deny_rule_closes_a_public_one(workspace):
    local = rules(("allow", "web_fetch(localhost)"))
    assert isinstance(check(call("web_fetch", url="http://localhost:3000/"), "default", local, workspace), Allow)
    denied = rules(("deny", "web_fetch(*.example.com)"))
    assert isinstance(check(call("web_fetch", url="https://api.example.com/"), "bypass", denied, workspace), Deny)
    assert isinstance(check_destination("db.internal", "it resolves to 10.0.0.5", "auto", Rules()), Ask)
    assert isinstance(check_destination("db.internal", "x", "auto", rules(("allow", "web_fetch(db.internal)"))), Allow)
    assert isinstance(check_destination("db.internal", "x", "bypass", Rules()), Allow)


def test_refusals_without_a_human_name_the_flag_or_rule_that_would_allow_the_call(workspace):
    edit = check(call("edit_file", path="src/a.py"), "default", Rules(), workspace)
    message = refusal_without_human("edit_file", edit).message
    assert "--permission-mode accept-edits" in message and f"--allow 'edit_file({workspace.root}/src/a.py)'" in message
    command = check(call("bash", command="npm test"), "default", Rules(), workspace)
    message = refusal_without_human("bash", command).message
    assert "--allow 'bash(npm test)'" in message and "--permission-mode auto" in message
    destructive = check(call("bash", command="git reset --hard HEAD~3"), "auto", Rules(), workspace)
    message = refusal_without_human("bash", destructive).message
    assert "human" in message and "--allow 'bash(git reset --hard HEAD~3)'" in message
    assert "--permission-mode" not in message
    outside = check(call("write_file", path="/etc/hosts", content=""), "auto", Rules(), workspace)
    assert "--permission-mode" not in refusal_without_human("write_file", outside).message


def test_an_always_answer_offers_exact_and_prefix_rules_but_no_prefix_for_destructive_commands(workspace):
    ordinary = check(call("bash", command="npm run build --prod"), "default", Rules(), workspace)
    offered = {grant.key: [rule.text for rule in grant.rules] for grant in ordinary.grants}
    assert offered == {"a": ["bash(npm run build --prod)"], "p": ["bash(npm run *)"]}
    destructive = check(call("bash", command="git clean -fdx"), "default", Rules(), workspace)
    assert [grant.key for grant in destructive.grants] == ["a"]


@pytest.mark.parametrize("mode", ["default", "accept-edits", "auto"])
def test_a_write_to_a_file_with_other_hard_links_asks_and_says_why(workspace, tmp_path, mode):
    outside = tmp_path / "store-copy.js"
    outside.write_text("module.exports = 1\n")
    (workspace.root / "node_modules").mkdir(exist_ok=True)
    linked = workspace.root / "node_modules" / "index.js"
    linked.unlink(missing_ok=True)
    os.link(outside, linked)
    for tool in ("write_file", "edit_file"):
        verdict = check(call(tool, path="node_modules/index.js", content="x"), mode, Rules(), workspace)
        assert isinstance(verdict, Ask), (tool, verdict)
        assert "2 hard links" in verdict.reason and "pnpm" in verdict.reason
    (workspace.root / "single.js").write_text("x\n")
    assert isinstance(check(call("write_file", path="single.js", content="y"), "auto", Rules(), workspace), Allow)


NEW_CREDENTIALS = [
    "~/.vault-token",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.m2/settings.xml",
    "~/.m2/settings-security.xml",
    "~/.gradle/gradle.properties",
    "~/.cache/huggingface/token",
    "~/.huggingface/token",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.config/doctl/config.yaml",
    "~/.config/gh/hosts.yml",
    "~/.aws/sso/cache/abc123.json",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.local/share/fish/fish_history",
    "~/.python_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.node_repl_history",
    "~/.sqlite_history",
    "~/.lesshst",
    "~/.local/share/mini-agent/history",
    "~/.local/share/mini-agent/sessions/abc.jsonl",
    "~/.cache/mini-agent/help.txt",
]


@pytest.mark.parametrize("path", NEW_CREDENTIALS)
def test_reading_any_credential_place_asks_in_every_mode_and_a_command_reading_it_is_destructive(workspace, path):
    from mini_agent.safety.shell import classify

    for mode in ("default", "plan", "accept-edits", "auto"):
        verdict = check(call("read_file", path=path), mode, Rules(), workspace)
        assert isinstance(verdict, Ask) and verdict.risk == "sensitive", (mode, path, verdict)
    assert classify(f"cat {path}", workspace).kind == "destructive", path
    assert classify(f"python3 -c 'print(open(\"{path}\").read())'", workspace).kind == "destructive", path


def test_the_sandbox_hides_every_credential_place_the_policy_knows(tmp_path):
    from mini_agent.safety.credential_places import PLACES
    from mini_agent.safety.sandbox.confinement import Confinement, hidden_paths

    home = tmp_path / "home"
    for place in PLACES:
        target = home / place
        if any(other.startswith(place + "/") for other in PLACES):
            target.mkdir(parents=True, exist_ok=True)  # `.docker` holds `.docker/config.json`
        elif not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("secret")
    (tmp_path / "project").mkdir()
    hidden = hidden_paths(Confinement("read-only", tmp_path / "project", home=home))
    for place in PLACES:
        assert any(home / place == path or path in (home / place).parents for path in hidden) or place == ".docker"
    assert home / ".docker" not in hidden and home / ".docker" / "config.json" in hidden


def test_the_agents_own_data_directory_asks_wherever_it_is_configured(workspace):
    data = workspace.root.parent / "agent-data"
    private = Workspace(root=workspace.root, home=workspace.home, private=(data,))
    for mode in ("default", "plan", "auto"):
        verdict = check(call("read_file", path=str(data / "history")), mode, Rules(), private)
        assert isinstance(verdict, Ask) and "mini-agent's own data" in verdict.reason, mode
    written = check(call("write_file", path=str(data / "trust.json"), content="{}"), "bypass", Rules(), private)
    assert isinstance(written, Allow)
    asked = check(call("write_file", path=str(data / "trust.json"), content="{}"), "auto", Rules(), private)
    assert isinstance(asked, Ask) and "mini-agent's own data" in asked.reason
