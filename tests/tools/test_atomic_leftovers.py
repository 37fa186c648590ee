"""A killed agent leaves no temporary file in the project: the next start sweeps what it recorded, and only that."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from support import HERE
from support.fake_api import answer

from mini_agent.files.pending import PENDING, sweep
from mini_agent.tools.base import ToolContext, ToolRegistry
from mini_agent.tools.textfile import write_atomic
from mini_agent.tools.write_file import write_file

HARNESS = HERE / "write_harness.py"


def temporaries(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


def kill_mid_write(target: Path, data_dir: Path) -> int:
    """Start a real process writing `target`, kill -9 it once its temporary file exists; its pid."""
    writer = subprocess.Popen(
        [sys.executable, str(HARNESS), str(target), str(data_dir)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout.readline() == "writing\n"
        os.kill(writer.pid, signal.SIGKILL)
    finally:
        writer.kill()
        writer.wait()
    return writer.pid


def test_a_write_killed_midway_is_swept_by_the_next_start(run_cli, api, tmp_path: Path) -> None:
    project, data_dir = tmp_path, tmp_path / "mini-agent-home"  # run_cli's MINI_AGENT_HOME: the agent's data dir
    target = project / "notes.txt"
    target.write_text("old\n")
    lookalike = project / ".notes.txt.0123456789abcdef.tmp"  # the user's own file, named like ours
    lookalike.write_text("mine\n")

    pid = kill_mid_write(target, data_dir)

    leftover = [name for name in temporaries(project) if name != lookalike.name]
    assert len(leftover) == 1 and leftover[0].startswith(".notes.txt.")
    assert (project / leftover[0]).stat().st_size == len(b"new content\n") * 100_000  # killed with all bytes out
    assert [name.split("-")[0] for name in os.listdir(data_dir / PENDING)] == [str(pid)]

    api.script(answer("Hello."))
    done = run_cli(["-p", "hi"], api, cwd=project)

    assert done.returncode == 0, done.stderr
    assert temporaries(project) == [lookalike.name]
    assert lookalike.read_text() == "mine\n" and target.read_text() == "old\n"
    assert os.listdir(data_dir / PENDING) == []


def test_the_temporary_file_of_a_live_agent_is_left_alone(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    (data_dir / PENDING).mkdir(parents=True)
    in_flight = tmp_path / ".a.txt.fedcba9876543210.tmp"
    in_flight.write_text("being written\n")
    start = int(Path("/proc/self/stat").read_bytes().rsplit(b")", 1)[1].split()[19])
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    pidns = os.readlink("/proc/self/ns/pid")
    owner = {"pid": os.getpid(), "boot": boot, "pidns": pidns}
    record = {**owner, "start": start, "path": str(in_flight)}
    (data_dir / PENDING / f"{os.getpid()}-1.json").write_text(json.dumps(record))
    gone = {**owner, "start": start - 1, "path": str(tmp_path / ".b.txt.00.tmp")}
    (data_dir / PENDING / f"{os.getpid()}-2.json").write_text(json.dumps(gone))  # a dead process, same pid
    (tmp_path / ".b.txt.00.tmp").write_text("left over\n")
    elsewhere = {**owner, "start": start - 1, "pidns": "pid:[1]", "path": str(tmp_path / ".c.txt.00.tmp")}
    (data_dir / PENDING / f"{os.getpid()}-3.json").write_text(json.dumps(elsewhere))  # another container's
    (tmp_path / ".c.txt.00.tmp").write_text("theirs\n")

    assert sweep(data_dir) == [tmp_path / ".b.txt.00.tmp"]

    assert in_flight.read_text() == "being written\n" and (tmp_path / ".c.txt.00.tmp").exists()
    assert sorted(os.listdir(data_dir / PENDING)) == [f"{os.getpid()}-1.json", f"{os.getpid()}-3.json"]


def test_a_finished_write_leaves_no_record_and_no_temporary_file(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    ctx = ToolContext(cwd=tmp_path / "project", data_dir=data_dir)

    result = ToolRegistry([write_file]).call("write_file", {"path": "a.txt", "content": "hi\n"}, ctx)

    assert not result.is_error, result.content
    assert temporaries(tmp_path / "project") == [] and os.listdir(data_dir / PENDING) == []


def test_a_target_with_the_longest_name_allowed_gets_a_temporary_name_that_fits(tmp_path: Path) -> None:
    target = tmp_path / ("é" * 127 + "x")  # 255 bytes in UTF-8

    write_atomic(target, b"data\n", tmp_path / "data")

    assert target.read_bytes() == b"data\n" and temporaries(tmp_path) == []


def test_an_entry_that_is_not_a_record_is_skipped_not_fatal(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    (data_dir / PENDING).mkdir(parents=True)
    (data_dir / PENDING / "1-cut.json").write_text('{"pid": 1, "pa')  # a writer killed mid-entry
    (data_dir / PENDING / "2-odd.json").write_text('{"pid": "x", "path": 3}')

    assert sweep(data_dir) == []
    assert sorted(os.listdir(data_dir / PENDING)) == ["1-cut.json", "2-odd.json"]
