"""Thinking and effort: which endpoint and model take which kind, what a level puts in the request, and what
is done when an endpoint refuses it.

The one capability rule. What the endpoint says of the model (Anthropic's `GET /v1/models/{id}` lists the
`thinking.types` and `effort` levels it accepts: discovery.py) decides first; else the model's name and the
endpoint's make:

- Claude 3.7 to 4.5 take manual extended thinking, `thinking: {type: enabled, budget_tokens}`; Claude 4 models
  think between tool calls with the `interleaved-thinking-2025-05-14` beta header.
- Claude 4.6 and later take adaptive thinking with the effort setting of the endpoint itself,
  `thinking: {type: adaptive}` and `output_config: {effort}` (4.7 and later refuse a budget with a 400). Adaptive
  thinking always asks for `display: summarized`: the newer models' default is `omitted`, thinking blocks with no
  text, and Claude 5 and later think by default and send what they write between tool calls as thinking, so
  on them `off` sends `{type: adaptive, display: summarized}` too (what they would do anyway, made visible).
- DeepSeek, Moonshot (Kimi), Zhipu (GLM), Qwen (DashScope) and MiniMax take the Anthropic shape with a budget;
  DeepSeek ignores the budget, GLM and DeepSeek think by default whatever is sent.
- Local servers (Ollama, vLLM, llama.cpp, LM Studio), gateways to models that are not Claude, and endpoints of
  unknown make get nothing: what they would do with it is unknown, and a template may reject it.

An endpoint that answers a request carrying thinking with a 400 that names it is told so once, and the session
goes on without it (`Thinking.refused`). A 400 about a thinking block's signature (a block signed for another
model, after a model switch) takes every thinking block the request carried out of every later request, once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlparse

ADAPTIVE_SHOWN = {"type": "adaptive", "display": "summarized"}
"""Adaptive thinking with its text returned (the newer models' default display, `omitted`, returns none)."""
BUDGETS = {"low": 2_000, "medium": 8_000, "high": 16_000, "max": 24_000}
"""Manual thinking budgets per level, in tokens (the API's floor is 1,024)."""
ANSWER_ROOM = 8_000
"""Tokens kept for the answer above the budget: a smaller max_tokens is raised to budget + this (at most 32,000,
the output limit of the smallest Claude 4 models)."""
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
ADAPTIVE_EFFORTS = ("low", "medium", "high", "max")
THINKING_BLOCKS = ("thinking", "redacted_thinking")
THINKING_FIELDS = ("thinking", "output_config")

_COMPATIBLE_HOSTS = {
    "api.deepseek.com": "DeepSeek",
    "api.moonshot.ai": "Moonshot",
    "api.moonshot.cn": "Moonshot",
    "open.bigmodel.cn": "Zhipu",
    "api.z.ai": "Zhipu",
    "dashscope.aliyuncs.com": "Qwen",
    "dashscope-intl.aliyuncs.com": "Qwen",
    "api.minimax.io": "MiniMax",
    "api.minimaxi.com": "MiniMax",
}
"""Providers whose Anthropic-shaped endpoint takes `thinking` with a budget, by host."""
_CLAUDE = re.compile(r"claude-(?:[a-z]+-)?(\d+)(?:[-.](\d{1,2})(?!\d))?")


@dataclass(frozen=True)
class Support:
    """What one model at one endpoint takes: `budget`, `adaptive` or `none`."""

    kind: str
    efforts: tuple[str, ...] = ()
    """For `adaptive`: the effort levels the model takes."""
    interleaved_beta: bool = False
    thinks_by_default: bool = False
    """The model thinks when the request says nothing (Claude 5 and later)."""
    why: str = ""
    """Where the rule came from, for /effort."""


NONE = Support("none", why="this endpoint or model is not known to take thinking")


def support_for(family: str, base_url: str, model: str, said: dict | None = None) -> Support:
    """The capability rule (see the module's docstring); `said`: the endpoint's own `capabilities` of the model."""
    version = _claude_version(model)
    if said is not None:
        from_endpoint = _said(said, version)
        if from_endpoint is not None:
            return from_endpoint
    host = (urlparse(base_url).hostname or "").lower()
    if family == "deepseek" or host in _COMPATIBLE_HOSTS:
        name = _COMPATIBLE_HOSTS.get(host, "DeepSeek")
        return Support("budget", why=f"{name}'s Anthropic endpoint takes a thinking budget")
    if family in ("anthropic", "openrouter", "litellm") and version is not None:
        return _claude(version)
    return NONE


def _claude_version(model: str) -> tuple[int, int] | None:
    match = _CLAUDE.search(model.lower())
    return (int(match.group(1)), int(match.group(2) or 0)) if match else None


def _claude(version: tuple[int, int]) -> Support:
    if version >= (5, 0):
        why = "Claude 5 and later: adaptive thinking with effort, on by default"
        return Support("adaptive", ADAPTIVE_EFFORTS, thinks_by_default=True, why=why)
    if version >= (4, 6):
        return Support("adaptive", ADAPTIVE_EFFORTS, why="Claude 4.6 and later: adaptive thinking with effort")
    if version >= (3, 7):
        return Support("budget", interleaved_beta=version >= (4, 0), why="Claude 3.7 to 4.5: a thinking budget")
    return Support("none", why="Claude models before 3.7 do not think")


def _said(capabilities: dict, version: tuple[int, int] | None) -> Support | None:
    """The endpoint's own word: `thinking.types.adaptive|enabled.supported`, `effort.<level>.supported`."""
    thinking = capabilities.get("thinking")
    if not isinstance(thinking, dict):
        return None
    types = thinking.get("types") if isinstance(thinking.get("types"), dict) else {}
    effort = capabilities.get("effort") if isinstance(capabilities.get("effort"), dict) else {}

    def supported(table: dict, name: str) -> bool:
        entry = table.get(name)
        return isinstance(entry, dict) and entry.get("supported") is True

    if thinking.get("supported") is False:
        return Support("none", why="the endpoint says this model does not think")
    if supported(types, "adaptive"):
        efforts = tuple(level for level in ADAPTIVE_EFFORTS if supported(effort, level)) or ADAPTIVE_EFFORTS
        by_default = version is not None and version >= (5, 0)
        return Support("adaptive", efforts, thinks_by_default=by_default, why="the endpoint says: adaptive thinking")
    if supported(types, "enabled"):
        interleaved = version is not None and version >= (4, 0)
        return Support("budget", interleaved_beta=interleaved, why="the endpoint says: a thinking budget")
    return None


@dataclass(frozen=True)
class Plan:
    """What a level adds to one request."""

    fields: dict
    betas: tuple[str, ...] = ()
    max_tokens: int | None = None
    """Raised so that the budget leaves room for the answer; None: unchanged."""


def plan(support: Support, level: str, max_tokens: int) -> Plan:
    """The request fields for `level` on a model with `support`: empty when off or unsupported."""
    if support.kind == "adaptive" and support.thinks_by_default and level not in BUDGETS:
        return Plan({"thinking": dict(ADAPTIVE_SHOWN)})  # off: its own default, made visible
    if level not in BUDGETS or support.kind == "none":
        return Plan({})
    if support.kind == "adaptive":
        effort = level if level in support.efforts else _nearest(level, support.efforts)
        fields: dict = {"thinking": dict(ADAPTIVE_SHOWN)}
        if effort:
            fields["output_config"] = {"effort": effort}
        return Plan(fields)
    budget = BUDGETS[level]
    betas = (INTERLEAVED_BETA,) if support.interleaved_beta else ()
    raised = budget + ANSWER_ROOM if max_tokens < budget + ANSWER_ROOM else None
    return Plan({"thinking": {"type": "enabled", "budget_tokens": budget}}, betas, raised)


def _nearest(level: str, efforts: tuple[str, ...]) -> str | None:
    below = [effort for effort in ADAPTIVE_EFFORTS[: ADAPTIVE_EFFORTS.index(level) + 1] if effort in efforts]
    return below[-1] if below else (efforts[0] if efforts else None)


def turn_began_unthinking(messages: list[dict]) -> bool:
    """Whether the current turn's first reply (after the last user message that answers no tool call) holds no
    thinking block: the API wants one thinking configuration per assistant turn, so a turn begun without a
    budget (a request sent without it, thinking taken out) goes on without one."""
    start = None
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "user" and not _continues_loop(message.get("content")):
            start = index
            break
    replies = [m for m in messages[(start or 0) + 1 :] if m.get("role") == "assistant"]
    if not replies:
        return False
    content = replies[0].get("content")
    return not (isinstance(content, list) and any(_is_thinking(block) for block in content))


def _continues_loop(content: object) -> bool:
    """A user message that answers tool calls continues the assistant's turn, whatever text rides along."""
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content
    )


def _is_thinking(block: object) -> bool:
    return isinstance(block, dict) and block.get("type") in THINKING_BLOCKS


def seal(block: dict) -> str | None:
    """What identifies a thinking block to the server: its signature, or a redacted block's data."""
    value = block.get("signature") if block.get("type") == "thinking" else block.get("data")
    return value if isinstance(value, str) and value else None


def seals_in(messages: list[dict]) -> set[str]:
    return {
        sealed
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if _is_thinking(block) and (sealed := seal(block))
    }


def without_thinking(messages: list[dict], seals: set[str]) -> list[dict]:
    """`messages` with the thinking blocks whose seal is in `seals` taken out (a reply left empty says so)."""
    if not seals:
        return messages
    result = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list) or not any(_is_thinking(b) and seal(b) in seals for b in content):
            result.append(message)
            continue
        kept = [block for block in content if not (_is_thinking(block) and seal(block) in seals)]
        result.append({**message, "content": kept or [{"type": "text", "text": "(thought, not kept)"}]})
    return result


_SIGNATURE = ("signature",)
_THINKING_WORDS = ("thinking", "budget_tokens", "output_config", "effort", "interleaved")


class Thinking:
    """One provider's thinking across a session: what it sends, and what the endpoint refused."""

    def __init__(self) -> None:
        self.refused = False
        """The endpoint rejected thinking: none is sent for the rest of the session."""
        self.rejected: set[str] = set()
        """Seals of thinking blocks the endpoint would not take back: kept out of every request."""

    def prepare(self, body: dict, support: Support, level: str) -> tuple[dict, dict[str, str]]:
        """The body to send for `level` (thinking fields, max_tokens raised, rejected blocks out), and headers."""
        messages = without_thinking(body["messages"], self.rejected)
        body = body if messages is body["messages"] else {**body, "messages": messages}
        if self.refused or (support.kind == "budget" and turn_began_unthinking(messages)):
            return body, {}
        chosen = plan(support, level, body["max_tokens"])
        if not chosen.fields:
            return body, {}
        body = {**body, **chosen.fields}
        if chosen.max_tokens is not None:
            body["max_tokens"] = chosen.max_tokens
        return body, ({"anthropic-beta": ",".join(chosen.betas)} if chosen.betas else {})

    def rejection(self, detail: str, body: dict) -> str | None:
        """After a request was refused for good with `detail` (a 400): what to tell the human if sending it again
        without what was refused can help (the state now leaves that out), else None."""
        lowered = detail.lower()
        if any(word in lowered for word in _SIGNATURE):
            fresh = seals_in(body["messages"]) - self.rejected
            if fresh:
                self.rejected |= fresh
                return (
                    "The endpoint rejected the signature of a thinking block from earlier in the conversation "
                    "(signed for another model?): earlier thinking is left out of the requests from now on, and "
                    "the request was sent again."
                )
            return None
        if not self.refused and any(field in body for field in THINKING_FIELDS):
            if any(word in lowered for word in _THINKING_WORDS):
                self.refused = True
                return f"The endpoint does not take thinking ({detail}); it is off for the rest of the session."
        return None
