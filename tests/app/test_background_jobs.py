"""Background jobs in a session against the loopback model: a dev server started as a job, waited for, fetched with
web_fetch from loopback and killed when the `-p` run ends; a job under the sandbox keeps its level and its server
stays out of reach; a job that ends on its own is told to the model at its next step and to the human."""

from __future__ import annotations

import json
import re
import sys

from support import PATIENCE, eventually, process_running, scripted_agent
from support.fake_api import answer, tool_use
from support.jobs import job_id, last_results, later

from mini_agent.events import Notice

AUTO = ["--permission-mode", "auto", "--output-format", "json"]


def server_argv(directory) -> list[str]:
    return [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", str(directory)]


def port_in(text: str) -> int:
    found = re.search(r"port (\d+)", text)
    assert found, text
    return int(found.group(1))


def script_server_session(api, command: str) -> None:
    """Start the server as a job, wait for its line (unless the start's result already had it), fetch it."""

    def wait_for_it(body: dict) -> list[dict]:
        started = last_results(body)
        waiting = {} if "Serving HTTP" in started else {"filter": "Serving HTTP", "wait": PATIENCE}
        return [tool_use("job_output", {"job_id": job_id(started), **waiting})]

    def fetch(body: dict) -> list[dict]:
        both = last_results(api.message_requests[-2]) + last_results(body)
        return [tool_use("web_fetch", {"url": f"http://127.0.0.1:{port_in(both)}/"})]

    api.script(
        answer(tool_use("bash", {"command": command, "run_in_background": True})),
        later(api, wait_for_it),
        later(api, fetch),
        answer("Done."),
    )


def test_a_dev_server_in_a_job_is_fetched_from_loopback_and_killed_when_the_run_ends(run_cli, api, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html><title>Dev</title><body><p>HELLO-FROM-THE-JOB</p></body></html>")
    argv = server_argv(site)
    command = " ".join(argv)
    script_server_session(api, command)
    done = run_cli(["-p", "serve the site and look at it", *AUTO, "--allow", f"bash({command})"], api)
    assert done.returncode == 0, done.stderr
    started, waited, fetched = (last_results(api.message_requests[n]) for n in (1, 2, 3))
    assert "Started background job" in started and "outside the sandbox" in started
    assert "Serving HTTP on 127.0.0.1" in started + waited and "is running" in waited
    assert "HELLO-FROM-THE-JOB" in fetched
    assert process_running(*argv) is None  # the run's end took the job with it
    assert json.loads(done.stdout)["permission_denials"] == []


def test_loopback_stays_refused_where_no_job_listens(run_cli, api, tmp_path):
    import socket

    with socket.socket() as service:  # the user's own service, on loopback
        service.bind(("127.0.0.1", 0))
        service.listen()
        port = service.getsockname()[1]
        api.script(answer(tool_use("web_fetch", {"url": f"http://127.0.0.1:{port}/"})), answer("Ok."))
        done = run_cli(["-p", "look", *AUTO], api)
    assert "Not run" in last_results(api.message_requests[1]) or "loopback" in last_results(api.message_requests[1])
    assert json.loads(done.stdout)["permission_denials"]


def test_a_sandboxed_jobs_server_is_out_of_reach_and_its_level_is_the_one_decided(run_cli, api, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    command = " ".join(server_argv(site))
    script_server_session(api, command)  # auto mode without a rule: the workspace-write sandbox, no network
    done = run_cli(["-p", "serve the site", *AUTO], api)
    started, waited, fetched = (last_results(api.message_requests[n]) for n in (1, 2, 3))
    assert "in the workspace-write sandbox, without network" in started
    assert "Serving HTTP" in started + waited
    assert "HELLO" not in fetched and json.loads(done.stdout)["permission_denials"]  # asked, nobody to say yes


def test_a_job_that_ends_on_its_own_is_told_to_the_model_at_its_next_turn_and_to_the_human(api, settings_for, tmp_path):
    gate = tmp_path / "go"
    api.script(
        answer(
            tool_use(
                "bash",
                {"command": f"while [ ! -e {gate} ]; do sleep 0.02; done; echo bye; exit 4", "run_in_background": True},
            )
        ),
        answer("Started."),
        answer("Noted."),
    )
    notices: list[str] = []
    agent = scripted_agent(settings_for(api), emit=lambda e: notices.append(e.text) if isinstance(e, Notice) else 0)
    try:
        agent.run_turn("start it")
        [job] = agent.ctx.jobs.jobs()
        gate.touch()
        eventually(lambda: not job.running, "the job's end")
        agent.run_turn("what happened?")
    finally:
        agent.ctx.jobs.stop_all(grace=0)
    sent = json.dumps(api.message_requests[2]["messages"][-1])
    assert f'type=\\"job\\" job=\\"{job.id}\\"' in sent and "exit code: 4" in sent and "bytes of its output" in sent
    assert any(f"Background job {job.id}" in text and "exit code: 4" in text for text in notices)


def test_a_job_that_ends_during_a_turn_is_told_beside_the_next_steps_tool_results(api, settings_for, tmp_path):
    from mini_agent.events import ToolFinished

    gate = tmp_path / "go"
    api.script(
        answer(
            tool_use(
                "bash", {"command": f"while [ ! -e {gate} ]; do sleep 0.02; done; exit 5", "run_in_background": True}
            )
        ),
        answer(tool_use("bash", {"command": f"touch {gate}"})),
        answer("Done."),
    )
    agent = None

    def emit(event) -> None:  # the agent's own thread: the step goes on once the job's end is recorded
        if isinstance(event, ToolFinished) and "touch" in event.input.get("command", ""):
            [job] = agent.ctx.jobs.jobs()
            eventually(job.done.is_set, "the job's end")

    agent = scripted_agent(settings_for(api), emit=emit)
    try:
        agent.run_turn("start it, then let it go")
    finally:
        agent.ctx.jobs.stop_all(grace=0)
    [result, note] = api.message_requests[2]["messages"][-1]["content"]
    assert result["type"] == "tool_result" and note["type"] == "text"
    assert note["text"].startswith('<system_hint type="job"') and "exit code: 5" in note["text"]
