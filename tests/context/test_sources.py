"""Context sources on real files in tmp_path and real git repositories built with the real `git` command."""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_agent.context import git_state as git_state_module
from mini_agent.context.blocks import P0, P1, P2, Skip, TurnInput
from mini_agent.context.sources import (
    INSTRUCTIONS_CAP,
    MEMORY_CAP,
    default_sources,
    environment,
    git_state,
    instruction_files,
    project_instructions,
    read_capped,
    recent_activity,
    stdin,
    user_memory,
)

NOW = datetime(2025, 3, 14, 9, 5, 42, tzinfo=timezone(timedelta(hours=8)))


def turn(cwd: Path, user_dir: Path, **fields) -> TurnInput:
    return TurnInput(text="", cwd=cwd, now=fields.pop("now", NOW), user_dir=user_dir, **fields)


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test User")
    git(path, "config", "user.email", "test@example.com")
    git(path, "config", "commit.gpgsign", "false")
    return path


def commit(repo: Path, message: str, name: str = "file.txt", content: str | None = None) -> str:
    write(repo / name, content if content is not None else message + "\n")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "log", "-1", "--format=%h")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The machine's git config (pager, colours, showUntrackedFiles) must not change what the source sees,
    # and a repository around tmp_path must not turn "not a repo" into a repo.
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))


# -- project instructions -------------------------------------------------------------------------------------


def test_instructions_from_root_down_to_cwd_agents_claude_and_local_each_directory(tmp_path, home):
    repo = new_repo(tmp_path / "repo")
    write(repo / "AGENTS.md", "root rules\n")
    write(repo / "CLAUDE.md", "claude rules beside AGENTS.md\n")
    write(repo / "CLAUDE.local.md", "my personal rules\n")
    write(repo / "pkg" / "CLAUDE.md", "pkg rules from CLAUDE.md\n")
    write(repo / "pkg" / "deep" / "AGENTS.md", "deep rules\n")
    write(home / "AGENTS.md", "global rules\n")
    cwd = repo / "pkg" / "deep"

    assert instruction_files(cwd, home) == [
        home / "AGENTS.md",
        repo / "AGENTS.md",
        repo / "CLAUDE.md",
        repo / "CLAUDE.local.md",
        repo / "pkg" / "CLAUDE.md",
        repo / "pkg" / "deep" / "AGENTS.md",
    ]
    text = project_instructions(turn(cwd, home))
    assert text == (
        "Instruction files, outermost first; where they disagree, the later, more specific one wins.\n\n"
        f"# From {home / 'AGENTS.md'} (the user's global instructions, for every project)\nglobal rules\n\n"
        f"# From {repo / 'AGENTS.md'}\nroot rules\n\n"
        f"# From {repo / 'CLAUDE.md'}\nclaude rules beside AGENTS.md\n\n"
        f"# From {repo / 'CLAUDE.local.md'}\nmy personal rules\n\n"
        f"# From {repo / 'pkg' / 'CLAUDE.md'}\npkg rules from CLAUDE.md\n\n"
        f"# From {repo / 'pkg' / 'deep' / 'AGENTS.md'}\ndeep rules"
    )


def test_instructions_stop_at_the_repository_root(tmp_path, home):
    write(tmp_path / "AGENTS.md", "outside the repository\n")
    repo = new_repo(tmp_path / "repo")
    write(repo / "sub" / "AGENTS.md", "sub rules\n")
    assert instruction_files(repo / "sub", home) == [repo / "sub" / "AGENTS.md"]


def test_a_git_file_marks_the_root_as_in_a_worktree(tmp_path, home):
    write(tmp_path / "AGENTS.md", "outside\n")
    write(tmp_path / "wt" / ".git", "gitdir: /elsewhere\n")
    write(tmp_path / "wt" / "AGENTS.md", "worktree rules\n")
    assert instruction_files(tmp_path / "wt" / "a", home) == [tmp_path / "wt" / "AGENTS.md"]


def test_outside_any_repository_only_cwd_itself_is_searched(tmp_path, home):
    write(tmp_path / "AGENTS.md", "parent, not searched\n")
    write(tmp_path / "work" / "CLAUDE.md", "work rules\n")
    assert instruction_files(tmp_path / "work", home) == [tmp_path / "work" / "CLAUDE.md"]
    assert "work rules" in project_instructions(turn(tmp_path / "work", home))


def test_a_user_dir_inside_the_project_is_shown_once_as_the_users_file(tmp_path):
    write(tmp_path / "AGENTS.md", "shared rules\n")
    assert instruction_files(tmp_path, tmp_path) == [tmp_path / "AGENTS.md"]
    assert project_instructions(turn(tmp_path, tmp_path)).count("shared rules") == 1


def test_no_instruction_files_skips_with_where_it_looked(tmp_path, home):
    repo = new_repo(tmp_path / "repo")
    (repo / "sub").mkdir()
    with pytest.raises(Skip) as skip:
        project_instructions(turn(repo / "sub", home))
    assert str(skip.value) == (
        f"no AGENTS.md, CLAUDE.md or CLAUDE.local.md between {repo} and {repo / 'sub'}, none in {home}"
    )


def test_empty_instruction_files_are_left_out(tmp_path, home):
    write(tmp_path / "AGENTS.md", "\n\n")
    with pytest.raises(Skip, match="empty"):
        project_instructions(turn(tmp_path, home))
    write(home / "AGENTS.md", "global\n")
    text = project_instructions(turn(tmp_path, home))
    assert str(tmp_path / "AGENTS.md") not in text and "global" in text


def test_a_file_over_the_cap_is_cut_at_a_line_with_a_note(tmp_path, home):
    line = "x" * 99 + "\n"  # 100 bytes
    write(tmp_path / "AGENTS.md", line * 400)  # 40,000 bytes
    text = project_instructions(turn(tmp_path, home))
    shown_lines = INSTRUCTIONS_CAP // 100
    path = tmp_path / "AGENTS.md"
    assert text.count("x" * 99) == shown_lines
    assert text.endswith(
        f"{'x' * 99}\n[{40_000 - shown_lines * 100} more bytes of {path} not shown (over the 32 KiB cap); "
        f'read them with read_file path="{path}" offset={shown_lines + 1}]'
    )


def test_the_cap_is_shared_and_later_files_are_named_with_a_note(tmp_path, home):
    write(home / "AGENTS.md", ("g" * 63 + "\n") * 500)  # 32,000 bytes: fits, leaves 768
    write(tmp_path / "AGENTS.md", "first line\n" + "y" * 2000 + "\n")
    text = project_instructions(turn(tmp_path, home))
    project = tmp_path / "AGENTS.md"
    assert f"# From {project}\nfirst line\n[2001 more bytes of {project} not shown" in text
    assert f'read_file path="{project}" offset=2]' in text
    assert "y" * 100 not in text


def test_invalid_utf8_is_replaced_and_binary_files_are_skipped_with_a_note(tmp_path, home):
    repo = new_repo(tmp_path / "repo")
    write(repo / "AGENTS.md", b"caf\xe9 rules\nsecond line\n")
    write(repo / "sub" / "AGENTS.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write(repo / "sub" / "deep" / "CLAUDE.md", "deep rules\n")
    text = project_instructions(turn(repo / "sub" / "deep", home))
    assert "caf\ufffd rules\nsecond line" in text
    assert f"[not shown: {repo / 'sub' / 'AGENTS.md'}: it is a binary file (it contains NUL bytes)]" in text
    assert "IHDR" not in text
    assert "deep rules" in text


def test_instructions_are_byte_identical_for_the_same_input(tmp_path, home):
    write(tmp_path / "AGENTS.md", "rules\n" * 10_000)
    write(home / "AGENTS.md", "global\n")
    inp = turn(tmp_path, home)
    assert project_instructions(inp) == project_instructions(inp)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    lines=st.lists(st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"").replace(b"\0", b"")), max_size=40),
    limit=st.integers(min_value=0, max_value=600),
)
def test_capped_reads_are_whole_lines_within_the_limit(tmp_path, lines, limit):
    data = b"".join(line + b"\n" for line in lines)
    path = write(tmp_path / "capped.md", data)
    excerpt = read_capped(path, limit)
    shown = data[: excerpt.shown_bytes]
    assert excerpt.shown_bytes <= limit
    assert shown == data or shown.endswith(b"\n") or not shown
    assert excerpt.shown_bytes + excerpt.left_out == len(data)
    assert excerpt.next_line == shown.count(b"\n") + 1
    if len(data) <= limit:
        assert excerpt.left_out == 0


# -- environment ----------------------------------------------------------------------------------------------


def test_environment_from_a_fixed_now(tmp_path, home, monkeypatch):
    monkeypatch.setenv("SHELL", "/usr/bin/zsh")
    text = environment(turn(tmp_path, home))
    release = platform.release().split("-")[0].split(".")
    assert text == (
        f"Working directory: {tmp_path}\n"
        f"OS: {platform.system()} {'.'.join(release[:2])}\n"
        "User's shell: zsh\n"
        "Date: Friday 2025-03-14\n"
        "Time: 09:05 UTC+08:00"
    )


def test_environment_names_the_timezone_and_defaults_the_shell(tmp_path, home, monkeypatch):
    monkeypatch.delenv("SHELL", raising=False)
    now = datetime(2024, 12, 31, 23, 59, tzinfo=ZoneInfo("America/New_York"))
    text = environment(turn(tmp_path, home, now=now))
    assert "User's shell: sh" in text
    assert "Date: Tuesday 2024-12-31\nTime: 23:59 America/New_York, EST (UTC-05:00)" in text
    assert environment(turn(tmp_path, home, now=now)) == text


# -- git state ------------------------------------------------------------------------------------------------


def test_git_clean_branch_with_the_last_five_commits(tmp_path, home):
    repo = new_repo(tmp_path / "repo")
    hashes = [commit(repo, f"commit number {n}") for n in range(7)]
    long_subject = "A very long subject " + "word " * 30
    hashes.append(commit(repo, long_subject))
    text = git_state(turn(repo, home))
    assert text == "\n".join(
        [
            f"Repository: {repo}",
            "Branch: main (no upstream)",
            "Working tree clean.",
            "Recent commits:",
            f"{hashes[7]} {long_subject[:77]}...",
            f"{hashes[6]} commit number 6",
            f"{hashes[5]} commit number 5",
            f"{hashes[4]} commit number 4",
            f"{hashes[3]} commit number 3",
        ]
    )
    assert git_state(turn(repo, home)) == text


def test_git_no_commits_yet(tmp_path, home):
    repo = new_repo(tmp_path / "repo")
    write(repo / "new.txt", "x\n")
    text = git_state(turn(repo, home))
    assert "Branch: main (no commits yet)" in text
    assert "?? new.txt" in text
    assert "Recent commits" not in text


def test_git_detached_head(tmp_path, home):
    repo = new_repo(tmp_path / "repo")
    first = commit(repo, "first")
    commit(repo, "second")
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    text = git_state(turn(repo, home))
    assert f"Branch: detached at {first}" in text
    assert text.endswith(f"Recent commits:\n{first} first")


def test_git_changed_staged_renamed_and_untracked_files_relative_to_the_root(tmp_path, home):
    repo = new_repo(tmp_path / "repo")
    commit(repo, "base", "tracked.txt", "one\n")
    commit(repo, "base2", "old name.txt", "rename me\n")
    write(repo / "tracked.txt", "two\n")
    write(repo / "staged.txt", "s\n")
    git(repo, "add", "staged.txt")
    git(repo, "mv", "old name.txt", "new name.txt")
    write(repo / "sub" / "untracked.txt", "u\n")
    text = git_state(turn(repo / "sub", home))
    assert text.startswith(f"Repository: {repo}\nBranch: main (no upstream)\nChanges (")
    changes = text.split("\n")[3 : text.split("\n").index("Recent commits:")]
    assert changes == [
        "R  old name.txt -> new name.txt",
        "A  staged.txt",
        " M tracked.txt",
        "?? sub/",
    ]


def test_git_merge_conflict_and_a_gone_upstream(tmp_path, home):
    repo = new_repo(tmp_path / "repo")
    commit(repo, "base", "c.txt", "base\n")
    git(repo, "checkout", "-q", "-b", "other")
    commit(repo, "other side", "c.txt", "other\n")
    git(repo, "checkout", "-q", "main")
    commit(repo, "main side", "c.txt", "main\n")
    git(repo, "remote", "add", "origin", str(tmp_path / "never-fetched"))
    git(repo, "config", "branch.main.remote", "origin")
    git(repo, "config", "branch.main.merge", "refs/heads/main")
    subprocess.run(["git", "merge", "-q", "other"], cwd=repo, capture_output=True)  # fails: the conflict
    text = git_state(turn(repo, home))
    assert "Branch: main (upstream origin/main is gone)" in text
    assert "\nUU c.txt\n" in text


def test_git_changed_files_are_capped_at_thirty(tmp_path, home):
    repo = new_repo(tmp_path / "repo")
    commit(repo, "base")
    for n in range(35):
        write(repo / f"f{n:02d}.txt", "x\n")
    text = git_state(turn(repo, home))
    assert "?? f29.txt" in text and "?? f30.txt" not in text
    assert "\n... and 5 more\nRecent commits:" in text


def test_git_ahead_and_behind_the_upstream(tmp_path, home):
    origin = new_repo(tmp_path / "origin")
    commit(origin, "base")
    git(tmp_path, "clone", "-q", str(origin), "clone")
    clone = tmp_path / "clone"
    git(clone, "config", "user.name", "Test User")
    git(clone, "config", "user.email", "test@example.com")
    assert "Branch: main, up to date with origin/main" in git_state(turn(clone, home))
    commit(clone, "local work", "local.txt")
    commit(origin, "remote one", "r1.txt")
    commit(origin, "remote two", "r2.txt")
    git(clone, "fetch", "-q")
    assert "Branch: main, ahead 1 and behind 2 of origin/main" in git_state(turn(clone, home))


def test_git_status_does_not_rewrite_the_index(tmp_path, home):
    # Without GIT_OPTIONAL_LOCKS=0 status refreshes stale stat data and writes the index, taking its lock.
    repo = new_repo(tmp_path / "repo")
    commit(repo, "base")
    later = (repo / "file.txt").stat().st_mtime + 100
    os.utime(repo / "file.txt", (later, later))
    index = repo / ".git" / "index"
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    assert "Working tree clean." in git_state(turn(repo, home))
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before


def test_git_not_a_repository_skips(tmp_path, home):
    (tmp_path / "plain").mkdir()
    with pytest.raises(Skip) as skip:
        git_state(turn(tmp_path / "plain", home))
    assert str(skip.value) == f"not a git repository: {tmp_path / 'plain'}"


def test_outside_any_repository_git_is_not_even_started(tmp_path, home, monkeypatch):
    (tmp_path / "plain" / "deep").mkdir(parents=True)
    monkeypatch.setattr(git_state_module, "_run_together", lambda *args: pytest.fail("git was started"))
    with pytest.raises(Skip) as skip:
        git_state(turn(tmp_path / "plain" / "deep", home))
    assert str(skip.value) == f"not a git repository: {tmp_path / 'plain' / 'deep'}"


def _layouts(tmp_path: Path) -> dict[str, tuple[Path, dict]]:
    """Places git finds a repository from, each as (working directory, extra environment)."""
    repo = new_repo(tmp_path / "repo")
    commit(repo, "base")
    (repo / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "link").symlink_to(repo / "sub")
    git(repo, "worktree", "add", "-q", str(tmp_path / "worktree"))
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "bare.git")], check=True)
    (tmp_path / "plain").mkdir()
    return {
        "root": (repo, {}),
        "subdirectory": (repo / "sub" / "deeper", {}),
        "a symlink into one": (tmp_path / "elsewhere" / "link", {}),
        "inside .git": (repo / ".git" / "refs", {}),
        "a worktree (.git is a file)": (tmp_path / "worktree", {}),
        "a bare repository": (tmp_path / "bare.git", {}),
        "inside a bare repository": (tmp_path / "bare.git" / "refs", {}),
        "GIT_DIR names one": (tmp_path / "plain", {"GIT_DIR": str(repo / ".git")}),
    }


def test_wherever_git_finds_a_repository_git_is_asked(tmp_path, monkeypatch):
    """The check that spares git's start outside a repository never says no where git itself would find one."""
    for name, (cwd, extra) in _layouts(tmp_path).items():
        env = {**os.environ, **extra}
        found = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=cwd, env=env, capture_output=True)
        assert found.returncode == 0, (name, found.stderr)
        with monkeypatch.context() as patched:
            for variable, value in extra.items():
                patched.setenv(variable, value)
            assert git_state_module._may_be_in_a_repository(cwd), name
    assert not git_state_module._may_be_in_a_repository(tmp_path / "plain")


def test_git_not_installed_skips(tmp_path, home, monkeypatch):
    repo = new_repo(tmp_path / "repo")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(Skip, match="git is not installed"):
        git_state(turn(repo, home))


# -- user memory, recent activity, stdin ----------------------------------------------------------------------


def test_user_memory_is_shown_with_its_path(tmp_path, home):
    write(home / "memory.md", "- prefers tabs\n- answers in French\n")
    text = user_memory(turn(tmp_path, home))
    assert text == (
        f"The user's notes for you, kept across projects ({home / 'memory.md'}):\n- prefers tabs\n- answers in French"
    )


def test_user_memory_is_capped_at_8_kib(tmp_path, home):
    path = write(home / "memory.md", ("m" * 31 + "\n") * 300)  # 9,600 bytes
    text = user_memory(turn(tmp_path, home))
    shown = MEMORY_CAP // 32
    assert text.count("m" * 31) == shown
    assert text.endswith(
        f"[{9600 - shown * 32} more bytes of {path} not shown (over the 8 KiB cap); "
        f'read them with read_file path="{path}" offset={shown + 1}]'
    )


def test_user_memory_missing_or_empty_skips(tmp_path, home):
    with pytest.raises(Skip) as skip:
        user_memory(turn(tmp_path, home))
    assert str(skip.value) == f"no memory file at {home / 'memory.md'}"
    write(home / "memory.md", "")
    with pytest.raises(Skip, match="empty"):
        user_memory(turn(tmp_path, home))


def test_recent_activity_shows_the_last_eight_oldest_first(tmp_path, home):
    calls = tuple(f"bash: step {n}" for n in range(10))
    text = recent_activity(turn(tmp_path, home, recent_calls=calls))
    heading = "Recent tool calls, oldest first (local time, call, outcome, duration):\n"
    assert text == heading + "\n".join(f"- bash: step {n}" for n in range(2, 10))
    with pytest.raises(Skip, match="no tool calls yet"):
        recent_activity(turn(tmp_path, home))


def test_stdin_is_passed_as_is_or_skipped(tmp_path, home):
    assert stdin(turn(tmp_path, home, stdin="line 1\n&lt;x&gt;\n")) == "line 1\n&lt;x&gt;\n"
    for empty in (None, "", "\n  \n"):
        with pytest.raises(Skip, match="nothing piped on stdin"):
            stdin(turn(tmp_path, home, stdin=empty))


def test_default_sources_order_and_settings():
    sources = default_sources()
    assert [(s.name, s.priority, s.ttl, s.inline) for s in sources] == [
        ("stdin", P0, 0, True),
        ("project_instructions", P0, 30, False),
        ("environment", P1, 0, True),
        ("git_state", P1, 10, False),
        ("user_memory", P1, 60, False),
        ("recent_activity", P2, 0, True),
    ]
    assert sources[3].stale_after == frozenset({"write", "exec", "exec-project"})
    assert sources[1].stale_after == frozenset({"write", "exec", "exec-project"})  # an import may be any file
    assert sources[4].stale_after == frozenset({"exec"})
    assert sources[1].watched_names == frozenset({"AGENTS.md", "CLAUDE.md", "CLAUDE.local.md"})
    assert sources[4].watched_names == frozenset({"memory.md"})
    assert all(not s.stale_after for s in sources if s.name not in ("git_state", "project_instructions", "user_memory"))


def test_a_failed_call_is_marked_failed_with_its_exit_status_and_times_and_the_block_says_not_to_repeat_it():
    from datetime import datetime

    from mini_agent.context.call_lines import call_line
    from mini_agent.tools.base import ToolResult

    at = datetime(2025, 3, 4, 14, 3, 12).astimezone()
    made = ToolResult("make: *** [all] Error 2\nexit code: 2", exit_code=2)
    failed = call_line("bash", {"command": "make"}, made, at, 3.14)
    assert failed == '14:03:12 bash {"command": "make"} -> failed (exit code 2) (3.1 s)'
    sigkill = ToolResult("(no output)\nexit code: 137 (killed by SIGKILL)", exit_code=137, killed_by="SIGKILL")
    killed = call_line("bash", {"command": "x"}, sigkill)
    assert killed == 'bash {"command": "x"} -> failed (exit code 137, killed by SIGKILL)'
    sandboxed = ToolResult('denied\nexit code: 1\n<system_hint type="sandbox">...</system_hint>', exit_code=1)
    assert "-> failed (exit code 1)" in call_line("bash", {"command": "touch /x"}, sandboxed)
    passed = call_line("bash", {"command": "ls"}, ToolResult("a\nexit code: 0", exit_code=0), at, 12.0)
    assert passed.endswith("-> ok (12 s)")
    refused = call_line("edit_file", {"path": "a"}, ToolResult("old_string not found\nmore", is_error=True))
    assert refused.endswith("-> failed: old_string not found")
    text = recent_activity(turn(Path("/p"), Path("/h"), recent_calls=(passed, failed)))
    assert "do not repeat one unchanged" in text
    assert "do not repeat" not in recent_activity(turn(Path("/p"), Path("/h"), recent_calls=(passed,)))
