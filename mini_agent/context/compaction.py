"""Compaction: make the conversation fit again, cheapest stage first, re-measuring after each.

1. Old tool results over 500 characters become a stub: their head and their original size.
2. The older history is summarised by the model; the most recent messages stay verbatim. The cut falls before
   an assistant message, so a tool_use is never separated from its tool_result; a dangling tool_use in the
   older part is dropped. The summary goes to system-prompt segment 3; every explicit user instruction the
   summary lost is added back verbatim; the turn's request and the P0 context blocks open the new view.
3. Any block still overlong is cut in the middle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mini_agent.context.blocks import P0, ContextBlock
from mini_agent.context.summary_prompt import SUMMARY_SYSTEM, render_transcript, summary_request
from mini_agent.context.tokens import count, count_messages
from mini_agent.context.trim import (
    drop_dangling_tool_uses,
    stub_tool_results,
    thin_context_blocks,
    truncate_long_blocks,
)
from mini_agent.conversation import Session
from mini_agent.errors import ProviderError
from mini_agent.events import CompactionReport, Emit, ReplyDiscarded
from mini_agent.instructions import missing_from
from mini_agent.model import Provider, Request
from mini_agent.model.messages import text_of
from mini_agent.xmltext import escape, system_hint

TRUNCATE_OVER_CHARS = 2_000
SUMMARY_MAX_TOKENS = 4_096

Measure = Callable[[list[dict]], int]


@dataclass
class Compactor:
    provider: Provider
    model: str
    focus: str | None = None
    """Standing focus for every compaction of the run (one-shot flag); /compact passes its own."""
    before: Callable[[str, str | None], tuple[str | None, str | None]] | None = None
    """Asked first with the trigger and the focus (the PreCompact hooks): why not to compact (None: go on), and
    the focus to use."""
    after: Callable[[str, str, int, int], str] | None = None
    """Told after a summary, with the trigger, the summary and the sizes before and after (the PostCompact and
    SessionStart hooks): text to add right after the summary, for the model."""

    def compact(
        self,
        session: Session,
        measure: Measure,
        target: int,
        p0_blocks: list[ContextBlock],
        trigger: str,
        emit: Emit,
        focus: str | None = None,
        keep_tokens: int | None = None,
        size: int | None = None,
        zone: str | None = None,
    ) -> CompactionReport:
        """Bring the conversation under `target` tokens if the stages can; the session's view is replaced.

        `size` is the conversation's size as best known (anchored on the API's usage); else it is estimated.
        `zone` (keeper.py): `cheap` only stubs old tool results (what a tool call can bring back); `danger` thins
        the context blocks before anything else.
        """
        messages = session.messages
        report = CompactionReport(trigger, size if size is not None else measure(messages), zone=zone)
        if self.before is not None and zone != "cheap":  # the PreCompact hooks are asked before a summary
            report.error, focus = self.before(trigger, focus or self.focus)
            if report.error:
                return report
        size = report.before
        if zone == "danger":
            messages, dropped, shrunk = thin_context_blocks(messages)
            if dropped or shrunk:
                size = measure(messages)
                report.stages.append(f"dropped {dropped} P2 and shrank {shrunk} P1 context blocks")
        protect = _last_index(messages, "assistant")
        messages, stubbed = stub_tool_results(messages, protect if protect is not None else len(messages))
        if stubbed:
            size = measure(messages)
            report.stages.append(f"stubbed {stubbed} old tool results")
        summary_hint = None
        if zone != "cheap" and (size > target or trigger == "manual"):
            keep = keep_tokens if keep_tokens is not None else target // 2
            try:
                summarised = self._summarise(session, messages, keep, p0_blocks, focus or self.focus, emit)
            except ProviderError as exc:
                report.error = f"the summary request failed: {exc}"
                summarised = None
            if summarised is not None:
                messages, summary_hint, report.summarised_messages, report.restored_instructions, summary = summarised
                size = measure(messages) + count(summary_hint)  # the summary travels in the system prompt
                report.stages.append(f"summarised {report.summarised_messages} messages")
                added = self.after(trigger, summary, report.before, size) if self.after is not None else ""
                if added:  # the hooks' context opens what follows the summary
                    head = messages[0]
                    opened = {**head, "content": [*head["content"], {"type": "text", "text": added}]}
                    messages = [opened, *messages[1:]]
                    size = measure(messages) + count(summary_hint)
        if size > target and zone != "cheap":  # a cut loses words no tool call brings back: after a summary only
            messages, cut = truncate_long_blocks(messages, TRUNCATE_OVER_CHARS)
            if cut:
                size = measure(messages)
                report.stages.append(f"truncated {cut} long blocks")
        report.after = size
        if report.stages:
            session.replace_view(messages, summary_hint, {"compaction": report.to_dict(), "request": session.request})
        return report

    def _summarise(
        self,
        session: Session,
        messages: list[dict],
        keep_tokens: int,
        p0_blocks: list[ContextBlock],
        focus: str | None,
        emit: Emit,
    ) -> tuple[list[dict], str, int, int, str] | None:
        cut = choose_cut(messages, keep_tokens)
        if cut is None:
            return None
        older, tail = drop_dangling_tool_uses(messages[:cut]), messages[cut:]
        previous = session.hints.get("context_summary")
        prompt = summary_request(
            render_transcript(older, 400_000), session.request, previous, session.instructions, focus
        )
        request = Request(
            model=self.model,
            system=[{"type": "text", "text": SUMMARY_SYSTEM}],
            messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}],
            tools=[],
            max_tokens=SUMMARY_MAX_TOKENS,
        )
        reply = self.provider.complete(request, _retries_only(emit))
        summary = text_of(reply.message).strip()
        if not summary:
            raise ProviderError("the summariser returned an empty summary")
        lost = missing_from(summary, session.instructions)
        if lost:
            restored = "\n".join(f'- "{item}"' for item in lost)
            summary += f"\n\n## Explicit user instructions (verbatim)\n{restored}"
        if session.todos:  # the calls that set it may be among the summarised messages
            from mini_agent.tools import TODO_WRITE

            listed = "\n".join(f"- [{todo.status}] {todo.content}" for todo in session.todos)
            summary += f"\n\n## Your todo list, as your last {TODO_WRITE} left it\n{listed}"
        number = session.compactions + 1
        hint = system_hint(
            "context_summary",
            "Earlier parts of this conversation were compacted to save space. What follows summarises them; "
            "the messages after the summary are verbatim. Continue the work from where it stands, without "
            f"redoing finished steps.\n\n{summary}",
            compaction=str(number),
        )
        head = head_message(session.request, _request_in(tail, session.request), p0_blocks, number)
        return [head, *tail], hint, len(older), len(lost), summary


def choose_cut(messages: list[dict], keep_tokens: int) -> int | None:
    """Where the verbatim tail starts: an assistant message (never the first message), keeping as many recent
    messages as fit in keep_tokens, and at least the latest step. None when there is nothing older to summarise.
    """
    candidates = [i for i, message in enumerate(messages) if i >= 1 and message["role"] == "assistant"]
    if not candidates:
        return None
    suffix = 0
    chosen = candidates[-1]
    sizes = {i: count_messages([message]) for i, message in enumerate(messages)}
    position = len(messages)
    for candidate in reversed(candidates):
        while position > candidate:
            position -= 1
            suffix += sizes[position]
        if suffix > keep_tokens:
            break
        chosen = candidate
    return chosen


def head_message(request: str, request_in_tail: bool, p0_blocks: list[ContextBlock], number: int) -> dict:
    """The user message that opens a compacted view: a note, the request verbatim, the P0 blocks again."""
    note = ContextBlock(
        "compaction",
        P0,
        f"The conversation before this point was compacted (compaction {number}); its summary is in the "
        "system prompt under Runtime state. The messages after this one are verbatim.",
    )
    blocks = [note]
    if request and not request_in_tail:
        blocks.append(ContextBlock("original_request", P0, escape(request)))
    blocks.extend(block for block in p0_blocks if block.priority == P0)
    return {"role": "user", "content": [{"type": "text", "text": block.render()} for block in blocks]}


def _request_in(messages: list[dict], request: str) -> bool:
    return any(
        block.get("type") == "text" and block.get("text") == request
        for message in messages
        if message["role"] == "user" and not isinstance(message["content"], str)
        for block in message["content"]
    )


def _last_index(messages: list[dict], role: str) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == role:
            return index
    return None


def _retries_only(emit: Emit) -> Emit:
    """The summary is not the model talking to the user: only retry notices reach the screen."""

    def forward(event) -> None:
        if isinstance(event, ReplyDiscarded):
            emit(event)

    return forward
