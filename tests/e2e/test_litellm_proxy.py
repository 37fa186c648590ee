"""mini-agent through a real LiteLLM proxy: the real `litellm` process, a scripted upstream, and mini-agent run in
this process (`run_cli`; the first test runs the installed command through the whole chain).

    mini-agent --base-url <proxy>  ->  litellm proxy (master key, model list)  ->  FakeAnthropicAPI

One proxy serves the module (starting it takes seconds). Model `claude-test` is a plain route; model
`claude-keepalive` is the same upstream with LiteLLM's SSE keepalive on (`keepalive_seconds`), the operator
setting under which the proxy answers 200 before the upstream has and so must report a failure inside the
stream. What the proxy sends back in each failure is recorded in tests/fixtures/endpoints/litellm__*; the last
tests replay some of those bytes: failures the scripted upstream cannot produce (a hang-up, an HTML page) and
the keepalive proxy's 200-then-error, without its timing.
"""

from __future__ import annotations

import json
import os
import re

import httpx
import pytest
from support import FIXTURES
from support.conversation import is_summary_request, pairing_problems
from support.fake_api import FakeAnthropicAPI, answer, cut, error_event, failure, tool_use
from support.litellm_proxy import MODEL, UPSTREAM_KEY, LiteLLMProxy, RawReply, RawUpstream, litellm_version
from support.web_server import WebServer

pytestmark = pytest.mark.e2e

KEEPALIVE_MODEL = "claude-keepalive"
ENDPOINTS = FIXTURES / "endpoints"
TOO_LONG = "prompt is too long: 215000 tokens > 200000 maximum"


# ---- the proxy and its upstream, once per module ----------------------------------------------------------


@pytest.fixture(scope="module")
def upstream():
    server = FakeAnthropicAPI().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def litellm(upstream, tmp_path_factory):
    work = tmp_path_factory.mktemp("litellm")
    keepalive = {"api_base": upstream.url, "keepalive_seconds": 0.2}
    proxy = LiteLLMProxy(upstream.url, work, more={KEEPALIVE_MODEL: keepalive})
    try:
        proxy.start()  # raises with the proxy's log if it exits or is not ready in time
    except RuntimeError as exc:
        pytest.fail(f"the LiteLLM proxy did not start: {exc}", pytrace=False)
    print(f"litellm {litellm_version()} proxy ready in {proxy.started_in:.1f} s")
    group = proxy.process.pid
    yield proxy
    proxy.stop()
    with pytest.raises(ProcessLookupError):  # nothing of the proxy outlives the module
        os.killpg(group, 0)


@pytest.fixture
def gateway(litellm, upstream):
    """The proxy, with an upstream that has a fresh script; the proxy's log of this test is shown if it fails."""
    upstream.replies.clear()
    upstream.routes.clear()
    upstream.requests.clear()
    upstream.failures.clear()
    start = len(litellm.log())
    yield litellm
    print(f"---- litellm log during this test ----\n{litellm.log()[start:]}")
    upstream.assert_complete()


@pytest.fixture
def agent(run_cli, gateway):
    """Run mini-agent against the proxy, in this process (the proxy is the boundary under test) unless
    `in_process=False`; `key` picks the variable the master key travels in."""

    def run(args: list[str], key: str = "ANTHROPIC_API_KEY", model: str = MODEL, env: dict | None = None, **kw):
        environment = {"ANTHROPIC_BASE_URL": gateway.url, key: gateway.master_key, "ANTHROPIC_MODEL": model}
        return run_cli(args, env={**environment, **(env or {})}, **kw)

    return run


def upstream_bodies(upstream: FakeAnthropicAPI) -> list[dict]:
    return [b for b in upstream.message_requests if not is_summary_request(b)]


class UnclearError(AssertionError):
    """mini-agent's failure line is not one clear line naming the upstream's error."""


def final_error(stderr: bytes) -> str:
    """The failure mini-agent reports: from its `mini-agent:` line to the end of stderr."""
    text = stderr.decode()
    start = text.rfind("\nmini-agent: ") + 1 if "\nmini-agent: " in text else text.find("mini-agent: ")
    assert start >= 0, f"no `mini-agent:` failure line in stderr:\n{text}"
    return text[start:].rstrip("\n")


def assert_clear_error(stderr: bytes, message: str) -> None:
    """One line, naming the upstream's message, not an internal exception; each retry notice one line too."""
    failure_text = final_error(stderr)
    problems = []
    if "\n" in failure_text:
        problems.append(f"the failure takes {failure_text.count(chr(10)) + 1} lines")
    if message not in failure_text:
        problems.append(f"it does not say {message!r}")
    if re.search(r"Unexpected failure|\b(TypeError|AttributeError|AssertionError|KeyError)\b", failure_text):
        problems.append("it names an internal exception")
    strays = [line for line in stderr.decode().splitlines() if line and not line.startswith(("mini-agent: ", "! "))]
    if strays:
        problems.append(f"{len(strays)} stderr lines belong to no message, e.g. {strays[0]!r}")
    if problems:
        raise UnclearError("; ".join(problems) + f":\n{stderr.decode()}")


# ---- a whole session -------------------------------------------------------------------------------------

RELEASE_NOTES = """<html><head><title>3.1 notes</title><script>var tracking = 1;</script></head><body>
<nav><a href="/">Home</a></nav><main><h1>Release 3.1</h1>
<p>The greeting changes from <code>Hi</code> to <strong>Howdy</strong>.</p></main></body></html>"""


def test_a_session_through_the_proxy_uses_all_five_tools(agent, upstream, tmp_path):
    (tmp_path / "app.py").write_text('def greet(name):\n    return "Hi " + name\n\n\nprint(greet("team"))\n')
    with WebServer() as web:
        notes = web.add("/notes", RELEASE_NOTES, content_type="text/html; charset=utf-8")
        upstream.script(
            answer(  # two calls in one reply: two results must come back in one message, in order
                "Reading the notes and the code.",
                tool_use("web_fetch", {"url": notes}, id="toolu_fetch"),
                tool_use("read_file", {"path": "app.py"}, id="toolu_read"),
            ),
            answer(
                tool_use(
                    "edit_file",
                    {"path": "app.py", "old_string": 'return "Hi " + name', "new_string": 'return "Howdy " + name'},
                    id="toolu_edit",
                )
            ),
            answer(tool_use("write_file", {"path": "CHANGELOG.md", "content": "## 3.1\n- Howdy\n"}, id="toolu_write")),
            answer(tool_use("bash", {"command": "python3 app.py"}, id="toolu_bash")),
            answer("app.py now greets with Howdy, as release 3.1 says; CHANGELOG.md notes it."),
        )
        done = agent(
            ["-p", "apply release 3.1 to app.py", "--yes", "--allow", "web_fetch(127.0.0.1)"]
            + ["--output-format", "json"],
            in_process=False,  # the installed command, its sandboxed bash and all, through the proxy
        )
        assert web.hits["/notes"] == 1
    assert done.returncode == 0, done.stderr.decode()
    record = json.loads(done.stdout)
    assert record["result"] == "app.py now greets with Howdy, as release 3.1 says; CHANGELOG.md notes it."
    assert record["steps"] == 5 and record["is_error"] is False

    # Real effects on disk.
    assert 'return "Howdy " + name' in (tmp_path / "app.py").read_text()
    assert (tmp_path / "CHANGELOG.md").read_text() == "## 3.1\n- Howdy\n"

    # Every request reached the upstream through the proxy (which swaps our key for its own), streamed.
    bodies = upstream.message_requests
    assert len(bodies) == 5
    for recorded in upstream.requests:
        assert recorded.headers.get("x-api-key") == UPSTREAM_KEY
        assert "sk-litellm-master" not in json.dumps(recorded.headers)
    assert all(body["stream"] is True and body["model"] == MODEL for body in bodies)
    assert sorted(tool["name"] for tool in bodies[0]["tools"]) == sorted(
        ["read_file", "write_file", "edit_file", "bash", "job_output", "stop_job", "web_fetch", "todo_write"]
        + ["exit_plan_mode", "task"]
    )

    # Each reply came back to the model whole (streamed text and tool input reassembled from deltas), followed
    # by one user message with a result for each call, in order.
    for index, body in enumerate(bodies[1:], start=1):
        assert pairing_problems(body["messages"]) == [], index
        sent = body["messages"][-2]
        assert sent["role"] == "assistant"
        calls = [block for block in sent["content"] if block["type"] == "tool_use"]
        results = body["messages"][-1]["content"]
        assert body["messages"][-1]["role"] == "user"
        assert [r["tool_use_id"] for r in results if r["type"] == "tool_result"] == [c["id"] for c in calls]
    first = bodies[1]["messages"][-2]["content"]
    assert first[0] == {"type": "text", "text": "Reading the notes and the code."}
    assert first[1]["input"] == {"url": notes} and first[2]["input"] == {"path": "app.py"}
    fetched, read = bodies[1]["messages"][-1]["content"][:2]
    assert "Howdy" in fetched["content"] and "tracking" not in fetched["content"] and not fetched.get("is_error")
    assert 'return "Hi " + name' in read["content"]
    for step in (2, 3):
        result = bodies[step]["messages"][-1]["content"][0]
        assert not result.get("is_error"), result
    ran = bodies[4]["messages"][-1]["content"][0]
    assert "Howdy team" in ran["content"] and "exit code: 0" in ran["content"]


# ---- the key ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variable", ["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"])
def test_the_proxy_accepts_the_key_header_mini_agent_sends(agent, run_cli, api, upstream, variable):
    """Whichever variable holds the key, the header mini-agent puts it in gets it through the proxy."""
    api.script(answer("Seen directly."))  # first, what mini-agent sends, seen by the fake itself
    direct = run_cli(["-p", "say hello"], env={"ANTHROPIC_BASE_URL": api.url, variable: "sk-probe-0123456789"})
    assert direct.returncode == 0, direct.stderr.decode()
    sent = {k.lower(): v for k, v in api.requests[-1].headers.items() if "sk-probe-0123456789" in v}
    assert len(sent) == 1, sent  # one header carries the key (anthropic SDK 2.x: `authorization: Bearer ...`)
    print(f"{variable} is sent as {next(iter(sent))}")

    upstream.script(answer("Hello through the gateway."))
    done = agent(["-p", "say hello"], key=variable)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "Hello through the gateway."
    assert len(upstream.message_requests) == 1


def test_the_proxy_takes_the_master_key_as_bearer_or_x_api_key_and_bearer_wins(gateway, upstream):
    """What LiteLLM accepts, for clients that send x-api-key (the anthropic SDK 1.x did) as well as Bearer."""
    body = {"model": MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
    master, wrong = gateway.master_key, "sk-not-the-master-key"

    def status(bearer: str | None = None, x_api_key: str | None = None) -> int:
        headers = {"anthropic-version": "2023-06-01"}
        if bearer:
            headers["authorization"] = f"Bearer {bearer}"
        if x_api_key:
            headers["x-api-key"] = x_api_key
        upstream.script(answer("ok"))
        reply = httpx.post(f"{gateway.url}/v1/messages", headers=headers, json=body, timeout=30)
        upstream.replies.clear()
        return reply.status_code

    assert status(bearer=master) == 200
    assert status(x_api_key=master) == 200
    assert status(bearer=wrong, x_api_key=master) >= 400
    assert status(bearer=master, x_api_key=wrong) == 200
    assert len(upstream.message_requests) == 3


def test_a_wrong_key_is_refused_by_the_proxy_in_one_line(agent, gateway, upstream):
    wrong = {"x-api-key": "sk-not-the-master-key", "anthropic-version": "2023-06-01"}
    body = {"model": MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
    refusal = httpx.post(f"{gateway.url}/v1/messages", headers=wrong, json=body, timeout=30)
    assert refusal.status_code >= 400  # litellm without a database: 400 "No connected db."
    done = agent(["-p", "say hello"], env={"ANTHROPIC_API_KEY": "sk-not-the-master-key"})
    assert done.returncode == 1
    assert upstream.message_requests == []  # refused before any upstream call, and not retried
    assert "sk-not-the-master-key" not in done.stderr.decode()
    assert_clear_error(done.stderr, refusal.json()["error"]["message"])


# ---- upstream failures through the proxy -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(
            lambda: failure(500, "api_error", "Internal server error"),
            "Internal server error",
            id="upstream-500",
        ),
        pytest.param(
            lambda: failure(529, "overloaded_error", "Overloaded"),
            "Overloaded",
            id="upstream-529",
        ),
        pytest.param(
            lambda: failure(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit"),
            "Number of request tokens has exceeded your rate limit",
            id="upstream-429",
        ),
    ],
)
def test_an_upstream_failure_is_retried_then_reported_in_one_line(agent, upstream, make, message):
    upstream.script(make(), make(), make())
    done = agent(["-p", "say hello"])
    assert done.returncode == 1 and done.stdout == b""
    assert len(upstream.message_requests) == 3  # retried: MINI_AGENT_MAX_RETRIES=2, the proxy itself does not
    assert message in final_error(done.stderr)
    assert_clear_error(done.stderr, message)


def test_prompt_too_long_through_the_proxy_compacts_and_carries_on(agent, upstream, tmp_path):
    """LiteLLM re-words the upstream's 400 (ContextWindowExceededError, blank lines and all); mini-agent must still
    see a context overflow: compact, then send the request again, smaller."""
    for index in range(4):
        (tmp_path / f"part{index}.txt").write_text(f"part {index}: " + "lorem ipsum dolor sit amet " * 250 + "\n")
    upstream.script(
        *[answer(f"Part {i}.", tool_use("read_file", {"path": f"part{i}.txt"}), measured=True) for i in range(4)],
        failure(400, "invalid_request_error", TOO_LONG),
        answer("Read all four parts.", measured=True),
    )
    summary = "## User goals and explicit instructions\nRead the four parts.\n## Current step\nAll read."
    upstream.route(is_summary_request, answer(summary))
    done = agent(
        ["-p", "read part0.txt to part3.txt", "--yes", "--output-format", "json", "--trace"],
        env={"MINI_AGENT_CONTEXT_WINDOW": "24000"},
    )
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    record = json.loads(done.stdout)
    assert record["result"] == "Read all four parts." and record["compactions"] == 1
    assert [c["trigger"] for c in record["trace"]["compactions"]] == ["overflow"]
    main = upstream_bodies(upstream)
    assert len(main) == 6 and any(is_summary_request(b) for b in upstream.message_requests)
    rejected, retried = main[4], main[5]
    assert len(json.dumps(retried)) < len(json.dumps(rejected))  # the same step again, after compaction
    assert "All read." in json.dumps(retried["system"])


def test_a_stream_cut_behind_the_proxy_is_retried(agent, upstream):
    upstream.script(cut(answer("This reply is long enough to be cut off half-way through."), 5), answer("Whole."))
    done = agent(["-p", "say something"])
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "Whole."
    assert [b.get("stream") for b in upstream.message_requests] == [True, True]
    assert "cut off" in done.stderr.decode()


def test_an_error_event_mid_stream_is_passed_through_and_mini_agent_asks_again_without_streaming(agent, upstream):
    upstream.script(error_event(answer("This reply will not finish."), 4), answer("Answered in one piece."))
    done = agent(["-p", "say something"])
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "Answered in one piece."
    assert [bool(b.get("stream")) for b in upstream.message_requests] == [True, False]
    assert "Overloaded" in done.stderr.decode()


def test_an_upstream_429_behind_a_keepalive_proxy_is_reported_with_its_message(agent, upstream):
    def slow_429():
        reply = failure(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit")
        reply.delay = 0.5  # longer than keepalive_seconds: the proxy has sent its 200 and pings by then
        return reply

    upstream.script(slow_429(), slow_429(), slow_429())
    done = agent(["-p", "say hello"], model=KEEPALIVE_MODEL)
    assert done.returncode == 1 and done.stdout == b""
    assert 1 <= len(upstream.message_requests) <= 3
    upstream.replies.clear()  # how often it retries such a reply is for mini-agent to decide
    assert_clear_error(done.stderr, "Number of request tokens has exceeded your rate limit")


# ---- recorded proxy answers, replayed ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "message"),
    [
        pytest.param(
            "upstream-hang-up",
            "Server disconnected",
        ),
        pytest.param(
            "upstream-html-502",
            "502 Bad Gateway",
        ),
        pytest.param(
            "keepalive__upstream-500__stream",
            "Error processing stream start",  # all litellm kept of the upstream's 500
        ),
    ],
)
def test_a_recorded_proxy_failure_reads_as_one_clear_line(run_cli, case, message):
    """What the proxy answered to a hang-up, to an HTML 502, and (keepalive on) to a 500, replayed byte for byte."""
    with RawUpstream() as raw:
        raw.script(*[RawReply.from_fixture(ENDPOINTS / f"litellm__{case}.json") for _ in range(3)])
        done = run_cli(
            ["-p", "say hello"],
            env={"ANTHROPIC_BASE_URL": raw.url, "ANTHROPIC_API_KEY": "sk-any", "ANTHROPIC_MODEL": MODEL},
        )
        assert done.returncode == 1 and done.stdout == b""
        assert 1 <= len(raw.requests) <= 3
    assert_clear_error(done.stderr, message)
