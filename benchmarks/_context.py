"""Context engineering in process: gathering cost, tokens injected per turn, cache-prefix stability, compaction.

Everything runs against a temporary real git repository and, for the agent rows, the loopback fake model.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from _common import FakeAnthropicAPI, Row, answer, bench_settings, failed_row, median, millis, tool_use
from support.conversation import is_summary_request, without_cache_control  # tests/ is on the path via _common

GATHER_COLD_TARGET = 0.05
GATHER_CACHED_TARGET = 0.001
PREFIX_TARGET = 0.95
PREFIX_STEPS = 30
COMPACT_WINDOW = 30_000
COMPACT_THRESHOLD = 0.8
COMPACT_STEPS = 40
MODULES = 40
"""Generated source files in the repository, ~2.7 KB each: what the agents read."""
CACHED_GATHERS = 10
"""Cached gathers per cold one."""

FIRST_MESSAGE = (
    "Look at @util.py and tell me why f3 returns the wrong value; I need the fix by tomorrow. "
    "The spec is at https://example.com/docs/util.html."
)
FOLLOW_UP = "Now run the tests and tell me which ones still fail."
SESSION_REQUEST = "Read through the modules under src/ and tell me which ones still use the old config loader."


@dataclass(frozen=True)
class Project:
    repo: Path
    cwd: Path
    """A subdirectory of the repository with its own AGENTS.md: the agent's working directory."""
    user_dir: Path
    modules: list[Path]


@contextmanager
def project() -> Iterator[Project]:
    """A real git repository: one commit, a modified file, AGENTS.md at the root and in `pkg/`, src/ modules."""
    if shutil.which("git") is None:
        raise RuntimeError("git is not installed")
    with tempfile.TemporaryDirectory(prefix="mini-agent-bench-context-") as tmp:
        root = Path(tmp).resolve()
        repo, user_dir = root / "repo", root / "user"
        cwd = repo / "pkg"
        for directory in (cwd, repo / "src", user_dir):
            directory.mkdir(parents=True)
        (repo / "AGENTS.md").write_text(
            "# Project rules\n\n- Run the tests with `pytest -q` before saying a change works.\n"
            "- Keep the public API of `pkg` backwards compatible.\n- Write commit messages in the imperative.\n"
        )
        (cwd / "AGENTS.md").write_text("# pkg\n\nFunctions here stay pure: no I/O, no globals.\n")
        (cwd / "util.py").write_text("".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12)))
        (cwd / "__init__.py").write_text('"""The pkg package."""\n')
        (repo / "README.md").write_text("# demo\n\nA small project for the benchmark.\n")
        modules = []
        for index in range(MODULES):
            path = repo / "src" / f"mod_{index:02d}.py"
            path.write_text(_module(index))
            modules.append(path)
        (user_dir / "memory.md").write_text("- Prefer short answers.\n- I use uv, not pip.\n")
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "add", "-A")
        _git(repo, "-c", "user.name=Bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "Start")
        (repo / "README.md").write_text("# demo\n\nA small project for the benchmark, now with a change.\n")
        yield Project(repo, cwd, user_dir, modules)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _module(index: int) -> str:
    """~2.7 KB of plausible Python, different per module."""
    lines = [f'"""Module {index}: loads part {index} of the configuration and checks it."""', "", "import json", ""]
    for number in range(8):
        name = f"load_part_{index}_{number}"
        lines += [
            "",
            f"def {name}(path, strict=False):",
            f'    """Read section {number} of the JSON file at path; strict mode rejects unknown keys."""',
            "    with open(path) as handle:",
            "        data = json.load(handle)",
            f"    section = data.get('section_{number}', {{}})",
            f"    if strict and set(section) - {{'name', 'size', 'mode_{index}'}}:",
            f"        raise ValueError('unknown keys in section {number}')",
            "    return section",
        ]
    return "\n".join(lines) + "\n"


# ---- gathering --------------------------------------------------------------------------------------------


def _turn_input(proj: Project, text: str, now: datetime | None = None):
    from mini_agent.context.blocks import TurnInput

    return TurnInput(text=text, cwd=proj.cwd, now=now or datetime.now().astimezone(), user_dir=proj.user_dir)


def gathering(proj: Project, runs: int) -> list[Row]:
    """Rows 1 and 2: a fresh gatherer's first gather (cold caches), then its later gathers within the TTL."""
    from mini_agent.context.enrich import default_enrichers
    from mini_agent.context.gather import Gatherer
    from mini_agent.context.sources import default_sources
    from mini_agent.context.tokens import TOKENIZER

    cold_name, cold_target = "Context gathering, cold (no network sources)", f"< {GATHER_COLD_TARGET * 1000:.0f} ms"
    cached_name, cached_target = "Context gathering, cached", f"< {GATHER_CACHED_TARGET * 1000:.0f} ms"
    try:
        exact = TOKENIZER.wait(30)
        Gatherer(default_sources(), default_enrichers()).gather(_turn_input(proj, FIRST_MESSAGE))  # warm imports
        cold: list[float] = []
        cached: list[float] = []
        blocks, outcomes, later = [], [], []
        for _ in range(runs):
            gatherer = Gatherer(default_sources(), default_enrichers())
            inp = _turn_input(proj, FIRST_MESSAGE)
            started = time.perf_counter()
            blocks, outcomes = gatherer.gather(inp)
            cold.append(time.perf_counter() - started)
            for _ in range(CACHED_GATHERS):
                inp = _turn_input(proj, FOLLOW_UP)
                started = time.perf_counter()
                _, later = gatherer.gather(inp)
                cached.append(time.perf_counter() - started)
    except Exception as exc:
        why = f"{type(exc).__name__}: {exc}"
        return [failed_row(cold_name, cold_target, why), failed_row(cached_name, cached_target, why)]

    rows = []
    expected = {"project_instructions", "git_state", "user_memory", "mentions", "time", "urls"}
    applied = {outcome.name for outcome in outcomes if outcome.status == "applied"}
    slowest = max(outcomes, key=lambda outcome: outcome.ms)
    counter = "tiktoken" if exact else "the character estimate (tiktoken did not load)"
    value = median(cold)
    detail = (
        f"{millis(value)} (max {millis(max(cold))}; {runs} fresh gatherers, imports warm; "
        f"{len(blocks)} blocks, {sum(b.tokens for b in blocks)} tokens by {counter}; "
        f"slowest: {slowest.name} {slowest.ms:.1f} ms)"
    )
    missing = expected - applied
    if missing:
        rows.append(failed_row(cold_name, cold_target, f"{', '.join(sorted(missing))} added nothing: {detail}"))
    else:
        rows.append(Row(cold_name, detail, cold_target, value < GATHER_COLD_TARGET))

    value = median(cached)
    served = [outcome.name for outcome in later if outcome.status == "cached"]
    detail = (
        f"{value * 1000:.2f} ms (max {max(cached) * 1000:.2f} ms; {len(cached)} gathers of a follow-up without @, "
        f"time or URL; {len(served)} sources from the cache: {', '.join(served)})"
    )
    if set(served) != {"project_instructions", "git_state", "user_memory"}:
        rows.append(failed_row(cached_name, cached_target, f"unexpected cache state: {detail}"))
    else:
        rows.append(Row(cached_name, detail, cached_target, value < GATHER_CACHED_TARGET))
    return rows


def injected_tokens(proj: Project) -> list[Row]:
    """Row 3: tokens ContextEngine.prepare injects in turn 1, and in turn 2 when nothing changed."""
    from mini_agent.context.enrich import default_enrichers
    from mini_agent.context.gather import Gatherer
    from mini_agent.context.injection import ContextEngine
    from mini_agent.context.sources import default_sources

    name, target = "Injected tokens per turn", "reported"
    try:
        engine = ContextEngine(Gatherer(default_sources(), default_enrichers()), 0.10)
        now = datetime.now().astimezone().replace(second=0, microsecond=0)
        turns = []
        for text, at in ((FIRST_MESSAGE, now), (FOLLOW_UP, now), (FOLLOW_UP, now + timedelta(minutes=1))):
            prepared = engine.prepare(_turn_input(proj, text, at), 200_000)
            engine.sent(prepared.send)
            turns.append(prepared)
    except Exception as exc:
        return [failed_row(name, target, f"{type(exc).__name__}: {exc}")]
    first, second, later = (prepared.trace for prepared in turns)
    unchanged = sum(1 for p in second.placements if p.status == "unchanged")
    again = ", ".join(f"{p.name} {p.tokens}" for p in later.placements if p.status == "injected") or "nothing"
    detail = (
        f"turn 1: {first.injected_tokens}, turn 2: {second.injected_tokens} "
        f"(turn 1: {len(turns[0].send)} blocks; turn 2, same minute: {unchanged} unchanged blocks not re-sent; "
        f"a turn a minute later re-sends {again})"
    )
    return [Row(name, detail, target, None)]


# ---- agent sessions -----------------------------------------------------------------------------------------


def _agent(api: FakeAnthropicAPI, proj: Project, emit: Callable, max_steps: int, **settings_overrides):
    from mini_agent.agent import Agent
    from mini_agent.app.build import context_keeper
    from mini_agent.conversation import Session
    from mini_agent.model import AnthropicProvider
    from mini_agent.prompt import static_prompt
    from mini_agent.safety.permissions import Allow
    from mini_agent.tools import default_tools
    from mini_agent.tools.base import ToolContext

    settings = bench_settings(api.url, proj.cwd, max_steps, user_dir=proj.user_dir, **settings_overrides)
    return Agent(
        AnthropicProvider(settings),
        default_tools(),
        settings,
        Session(),
        ToolContext(cwd=proj.cwd),
        static_prompt(),
        emit,
        lambda request: Allow(),
        keeper=context_keeper,
    )


def canonical(body: dict) -> str:
    """What the API caches, in its order: tools, system, messages; the cache_control directives left out."""
    return json.dumps(without_cache_control([body.get("tools", []), body.get("system", []), body["messages"]]))


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix, by bisection on C-speed slice comparisons."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _usage(context: int, output: int) -> dict:
    """A usage figure for a prompt of `context` tokens, most of it read from the cache, as a real session reports."""
    fresh = min(context, 400)
    return {
        "input_tokens": 3,
        "cache_creation_input_tokens": fresh - 3,
        "cache_read_input_tokens": context - fresh,
        "output_tokens": output,
    }


def prefix_share(proj: Project) -> list[Row]:
    """Row 4: how much of each request is a byte-identical copy of the previous one, over a 30-step turn."""
    name, target = f"Unchanged prefix share over a {PREFIX_STEPS}-step session", f"> {PREFIX_TARGET * 100:.0f} %"
    api = None
    try:
        api = FakeAnthropicAPI().start()
        files = ["util.py", "../README.md", "AGENTS.md", "../AGENTS.md", *(str(p) for p in proj.modules[:6])]
        commands = ["ls", "echo checking", "ls ../src", "git status --short"]
        calls = []
        for step in range(PREFIX_STEPS):
            if step % 3 == 2:
                calls.append(tool_use("bash", {"command": commands[step % len(commands)]}))
            else:
                calls.append(tool_use("read_file", {"path": files[step % len(files)]}))
        size = 2_900  # system prompt, tools and the first message; then ~480 tokens a step, as this session grows
        replies = []
        for call in calls:
            replies.append(answer("Let me look at that.", call, usage=_usage(size, 40)))
            size += 480
        replies.append(answer("None of them needs a change.", usage=_usage(size, 10)))
        api.script(*replies)
        agent = _agent(api, proj, lambda event: None, PREFIX_STEPS + 5)
        result = agent.run_turn(SESSION_REQUEST)
        bodies = api.message_requests
        if result.text != "None of them needs a change." or len(bodies) != PREFIX_STEPS + 1:
            raise RuntimeError(f"unexpected run: {len(bodies)} requests, {result.text!r}")
        api.assert_complete()
        errors = [b for m in bodies[-1]["messages"] for b in m["content"] if isinstance(b, dict) and b.get("is_error")]
        if errors:
            raise RuntimeError(f"a tool call failed: {errors[0].get('content', '')[:200]}")
        texts = [canonical(body) for body in bodies]
        shares = [common_prefix(texts[i - 1], texts[i]) / len(texts[i - 1]) for i in range(1, len(texts))]
    except Exception as exc:
        return [failed_row(name, target, f"{type(exc).__name__}: {exc}")]
    finally:
        if api is not None:
            api.stop()
    worst = min(range(len(shares)), key=shares.__getitem__)
    detail = (
        f"min {shares[worst] * 100:.2f} % (request {worst + 2}), mean {sum(shares) / len(shares) * 100:.2f} % "
        f"({len(texts)} requests, the last {len(texts[-1]) / 1024:.0f} KiB of canonical JSON)"
    )
    passed = shares[worst] > PREFIX_TARGET
    if not passed:  # show where the two requests part, so the cause can be found
        before, after = texts[worst], texts[worst + 1]
        at = common_prefix(before, after)
        detail += f"; they part at char {at}: {before[at - 40 : at + 60]!r} vs {after[at - 40 : at + 60]!r}"
    return [Row(name, detail, target, passed)]


# ---- compaction -----------------------------------------------------------------------------------------------


SUMMARY = "\n".join(
    [
        "## User goals and explicit instructions",
        f'- "{SESSION_REQUEST}"',
        "",
        "## Decisions",
        "- Read every module under src/ in order and record, per module, whether it uses the old config loader.",
        "- Change nothing until the survey is complete.",
        "",
        "## Files",
        *(
            f"- src/mod_{index:02d}.py: eight load_part_{index}_N functions, json.load directly, strict-mode key "
            "check; no old loader; unchanged."
            for index in range(12)
        ),
        "",
        "## Errors and fixes",
        "- None.",
        "",
        "## Pending",
        "- The modules not read yet; then the answer to the user.",
        "",
        "## Current step",
        "- Reading the next module in order.",
    ]
)
"""A hand-off summary of a realistic size (~460 tokens) in the sections the compactor asks for."""


class SizingAPI(FakeAnthropicAPI):
    """The fake, plus what a long session needs: every reply reports the size of the request it answers as its
    usage (the system, tool schemas and messages counted with tiktoken, as the real API reports its own count),
    and the compactor's summary request is answered whenever it comes, outside the script.

    So the session compacts when its real size crosses the threshold, and its usage drops after compaction as a
    real one does; a fixed script would have to know both in advance.
    """

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []
        """Tokens of each POST /v1/messages, in order (summary requests included)."""
        self.summaries = 0

    def _next(self, body):
        """Called by the handler with the body of the request it is answering."""
        from mini_agent.context.tokens import count_messages

        try:
            size = request_tokens(body)
        except Exception as exc:  # a body of an unexpected shape: fail the run, never the server thread
            self.failures.append(f"cannot size request #{len(self.sizes) + 1}: {type(exc).__name__}: {exc}")
            size = 0
        self.sizes.append(size)
        if is_summary_request(body):
            self.summaries += 1
            reply = answer(SUMMARY)
        else:
            reply = super()._next(body)
        if reply is not None:
            reply.usage = _usage(size, count_messages([{"role": "assistant", "content": reply.content}]))
        return reply


def request_tokens(body: dict) -> int:
    """Tokens of a request as the keeper estimates them: system text, tool schemas, message text."""
    from mini_agent.context.tokens import count, count_messages

    system = "\n".join(block["text"] for block in body.get("system", []))
    return count(system) + count(json.dumps(body.get("tools", []))) + count_messages(body["messages"])


def _note(index: int) -> str:
    """What the model says before each read (~160 tokens): what it found in the module it just read, and why."""
    if index == 0:
        return "I will read the modules under src/ one by one and note which ones use the old loader."
    done = index - 1
    return (
        f"mod_{done:02d}.py loads its eight configuration sections with json.load directly, one function per "
        f"section (load_part_{done}_0 to load_part_{done}_7). Each opens the file itself, takes "
        "`data.get('section_N', {})`, and checks the keys only when `strict` is set, raising ValueError on an "
        "unknown key; a missing file raises FileNotFoundError unchanged, which the callers expect. None of them "
        "imports or calls the old config loader, and none reads environment variables, so this module needs no "
        "change. Its tests in tests/test_mod.py cover only the strict path, like the others. I will note it as "
        f"clean and move on to mod_{index:02d}.py, which follows the same layout as far as the file listing "
        "shows; if it differs I will say how before reading further."
    )


def compaction(proj: Project) -> list[Row]:
    """Row 5: a 40-step session of read_file calls in a 30k window; every compaction's before and after."""
    from mini_agent.events import Compacted

    threshold = int(COMPACT_WINDOW * COMPACT_THRESHOLD)
    name = f"Tokens before and after compaction ({COMPACT_WINDOW // 1000}k window, threshold {threshold:,})"
    target = "after a summary < 50 % of threshold; a cheap stage shrinks"
    api = None
    try:
        api = SizingAPI().start()
        api.script(
            *(
                answer(_note(step), tool_use("read_file", {"path": str(proj.modules[step % len(proj.modules)])}))
                for step in range(COMPACT_STEPS)
            ),
            answer("None of them uses the old config loader."),
        )
        events: list[tuple[int, Compacted]] = []

        def emit(event) -> None:
            if isinstance(event, Compacted):
                events.append((len(api.message_requests), event))

        agent = _agent(
            api, proj, emit, COMPACT_STEPS + 5, context_window=COMPACT_WINDOW, compact_threshold=COMPACT_THRESHOLD
        )
        result = agent.run_turn(SESSION_REQUEST)
        steps = len(api.message_requests) - api.summaries
        if result.text != "None of them uses the old config loader." or steps != COMPACT_STEPS + 1:
            raise RuntimeError(f"unexpected run: {steps} step requests, {result.text!r}")
        api.assert_complete()
        if not events:
            raise RuntimeError(f"no compaction; the largest request was {max(api.sizes):,} tokens")
    except Exception as exc:
        return [failed_row(name, target, f"{type(exc).__name__}: {exc}")]
    finally:
        if api is not None:
            api.stop()
    bodies = api.message_requests
    parts = []
    passed = True
    for sent, event in events:
        report = event.report
        step = sent - sum(1 for body in bodies[:sent] if is_summary_request(body))  # step requests before it
        real = api.sizes[sent] if sent < len(api.sizes) else None
        after = max(report.after, real or 0)
        # Zones (context/keeper.py): from half the window to the threshold only the cheap stage runs (old tool
        # results stubbed, no model call), which need only shrink; past the threshold the history is summarised.
        enough = after < report.before if report.zone == "cheap" else after < threshold // 2
        passed = passed and report.error is None and enough
        parts.append(
            f"before step {step + 1}, {report.zone or report.trigger}: {report.before:,} -> {report.after:,} "
            f"({'; '.join(report.stages) or 'nothing'}"
            + (f"; error: {report.error}" if report.error else "")
            + (f"; the next request counts {real:,})" if real is not None else ")")
        )
    detail = f"{len(events)} compaction{'s' if len(events) != 1 else ''}: " + "; ".join(parts)
    return [Row(name, detail, target, passed)]


def context_rows(runs: int) -> list[Row]:
    try:
        with project() as proj:
            rows = gathering(proj, runs)
            rows += injected_tokens(proj)
            rows += prefix_share(proj)
            rows += compaction(proj)
            return rows
    except Exception as exc:
        why = f"{type(exc).__name__}: {exc}"
        return [failed_row("Context benchmarks (setting up the repository)", "—", why)]
