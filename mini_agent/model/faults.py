"""What went wrong with the endpoint, whether trying again can help, and how to say it in one line.

One policy for every request: the SDK's own retries are off and this module decides. 429 honours
`retry-after`; 5xx, 529, dropped connections, timeouts and streams cut mid-way are retried with jittered
exponential backoff, a bounded number of times; everything else fails at once with a clear message.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

MAX_RETRY_AFTER = 120.0
MAX_BACKOFF = 30.0


@dataclass(frozen=True)
class Fault:
    """A failed attempt, classified."""

    kind: str
    """rate_limited, overloaded, server_error, connection, stale_connection, timeout, stream_cut, stream_error,
    malformed, context_overflow, images_rejected, fatal"""
    message: str
    """One line for the human, without the key."""
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind not in ("fatal", "context_overflow", "images_rejected")


class StreamCut(Exception):
    """The event stream ended before the reply was complete."""

    def __init__(self, events: int | None = None) -> None:
        super().__init__(events)
        self.events = events
        """How many events had arrived; 0: the stream was empty."""


class EndpointAnswer(Exception):
    """A JSON body that is not a reply: the endpoint's error (`error`) or something else (`problem`).

    Gateways answer 200 with an error body; servers asked for a stream may answer with JSON instead.
    """

    def __init__(self, error: dict | None, problem: str | None, in_stream: bool = False) -> None:
        super().__init__(problem or error)
        self.error, self.problem, self.in_stream = error, problem, in_stream


def backoff(attempt: int, base: float, fault: Fault) -> float:
    """Seconds to wait before retry number `attempt` (1-based)."""
    if fault.retry_after is not None:
        return min(fault.retry_after, MAX_RETRY_AFTER)
    ceiling = min(base * 2 ** (attempt - 1), MAX_BACKOFF)
    return ceiling / 2 + random.uniform(0, ceiling / 2)


IDLE_HINT = "a slow local server may need a longer stream_idle_timeout / MINI_AGENT_STREAM_IDLE_TIMEOUT"


CONNECT_ADVICE = "Check --base-url / ANTHROPIC_BASE_URL."


def classify(exc: BaseException, endpoint: str, model: str, connect_advice: str = CONNECT_ADVICE) -> Fault:
    """Turn an SDK or transport exception into a Fault whose message is one line (gateways write theirs over
    several, with blank lines between). `connect_advice` ends a failure to connect: what the user can check."""
    fault = _classify(exc, endpoint, model, connect_advice)
    return Fault(fault.kind, " ".join(fault.message.split()), fault.retry_after)


def _classify(exc: BaseException, endpoint: str, model: str, connect_advice: str = CONNECT_ADVICE) -> Fault:
    import anthropic

    if isinstance(exc, StreamCut):
        if exc.events == 0:
            return Fault("stream_cut", f"{endpoint} sent an empty reply stream.")
        return Fault("stream_cut", f"The reply stream from {endpoint} was cut off mid-way.")
    if isinstance(exc, EndpointAnswer):
        return _answer_fault(exc, endpoint, model)
    if isinstance(exc, anthropic.APITimeoutError):
        return Fault("timeout", f"{endpoint} sent nothing for too long ({IDLE_HINT}).")
    if isinstance(exc, anthropic.APIConnectionError):
        cause = _root_cause(exc)
        if cause.startswith(STALE_CONNECTION):
            # The server closed a kept-alive connection just as the request went out on it (llama-server does so
            # after every streamed reply): the request never arrived, and a new connection will do.
            return Fault("stale_connection", f"{endpoint} closed the connection before the request arrived.", 0.0)
        return Fault("connection", f"Cannot connect to {endpoint} ({cause}). {connect_advice}")
    if isinstance(exc, anthropic.APIStatusError):
        return _status_fault(exc, endpoint, model)
    if type(exc).__module__.startswith(("httpx", "httpcore")):  # the transport failed while streaming
        if "Timeout" in type(exc).__name__:
            return Fault("timeout", f"The reply from {endpoint} stalled ({IDLE_HINT}).")
        return Fault("stream_cut", f"The reply stream from {endpoint} was cut off mid-way ({type(exc).__name__}).")
    if isinstance(exc, UnicodeEncodeError):  # the request itself, not the reply: sending it again cannot help
        return Fault("fatal", f"The request to {endpoint} could not be encoded ({exc.reason}): a mini-agent bug.")
    if isinstance(exc, (ValueError, KeyError, RuntimeError, AssertionError)):
        # The SDK could not make sense of what came back (bad JSON, events out of order): the same request
        # may well get a sound reply, so this is retried like a cut stream.
        detail = f"{type(exc).__name__}: {str(exc)[:120]}".rstrip(": ")
        return Fault("malformed", f"{endpoint} sent a malformed reply ({detail}).")
    return Fault("fatal", f"Unexpected failure talking to {endpoint}: {type(exc).__name__}: {exc}")


def _status_fault(exc, endpoint: str, model: str) -> Fault:
    status = exc.status_code
    detail = _api_message(exc)
    if status == 200 and _is_overflow(f"{_error_type(exc)} {detail}"):  # an overflow told as an error event
        return Fault("context_overflow", f"The conversation is too long for {model} at {endpoint} ({detail}).")
    if status == 200:  # an `error` event inside a stream that had started fine
        return Fault("stream_error", f"{endpoint} reported an error mid-stream: {detail}")
    if status == 429:
        return Fault("rate_limited", f"{endpoint} is rate limiting requests (429): {detail}", _retry_after(exc))
    if status == 529 or _error_type(exc) == "overloaded_error":
        return Fault("overloaded", f"{endpoint} is overloaded (529): {detail}", _retry_after(exc))
    if status == 500 and _is_image_refusal(detail, strict=True):  # llama-server's own status for it
        return Fault("images_rejected", f"{endpoint} failed with HTTP {status}: {detail}")
    if status >= 500:
        return Fault("server_error", f"{endpoint} failed with HTTP {status}: {detail}", _retry_after(exc))
    if status in (400, 413) and (_is_overflow(detail) or _is_overflow(_error_type(exc) or "")):
        return Fault("context_overflow", f"The conversation is too long for {model} at {endpoint} ({detail}).")
    if status in (400, 415, 422) and _is_image_refusal(detail):
        return Fault("images_rejected", f"{endpoint} rejected the request (HTTP {status}: {detail}).")
    if status == 401:
        return Fault("fatal", f"{endpoint} rejected the API key (401: {detail}). Check ANTHROPIC_API_KEY.")
    if status == 403:
        return Fault("fatal", f"{endpoint} refused access (403: {detail}). Check the key's permissions.")
    if status == 404:
        return Fault("fatal", f"{endpoint} does not know model {model!r} or the path (404: {detail}). Check --model.")
    if status == 413:
        return Fault("fatal", f"The request is too large for {endpoint} (413: {detail}).")
    return Fault("fatal", f"{endpoint} rejected the request (HTTP {status}: {detail}).")


OVERFLOW_PHRASES = (
    "prompt is too long",  # Anthropic
    "context length",  # OpenAI-style gateways, vLLM ("maximum context length")
    "context_length_exceeded",
    "context window",
    "too many tokens",
    "input is too long",
    "exceeds the available context size",  # llama.cpp's exceed_context_size_error
    "exceed_context_size",
    "maximum model length",  # vLLM
)


IMAGE_REFUSAL_WORDS = ("image", "vision", "multimodal", "multi-modal", "mmproj", "unsupported content")
"""What a refusal of images says: llama-server without a projector ("image input is not supported ... mmproj",
with HTTP 500), Ollama and vLLM text models, gateways that cannot parse an `image` block. Only a request that
holds images is judged by these (model/client.py); any other is the plain failure it was."""
NOT_SUPPORTED = ("not supported", "unsupported", "does not support", "doesn't support", "mmproj")
"""A 500 is a refusal of images only when it says so this plainly; any other 500 is retried as before."""


def _is_image_refusal(detail: str, strict: bool = False) -> bool:
    lowered = detail.lower()
    about_images = any(word in lowered for word in IMAGE_REFUSAL_WORDS)
    return about_images and (not strict or any(phrase in lowered for phrase in NOT_SUPPORTED))


def _is_overflow(detail: str) -> bool:
    lowered = detail.lower()
    return any(phrase in lowered for phrase in OVERFLOW_PHRASES)


def _answer_fault(exc: EndpointAnswer, endpoint: str, model: str) -> Fault:
    """A JSON body that is not a reply. An error in it is judged by its words and its status, if it gives one;
    anything else is a malformed reply, asked again without streaming."""
    if exc.error is None:
        return Fault("stream_error", f"{endpoint} sent {exc.problem} where a reply was due.")
    error = exc.error.get("error", exc.error)
    if isinstance(error, dict):
        detail = str(error.get("message") or error.get("type") or error)[:300]
        kind = f"{error.get('type') or ''} {detail}"
        code = error.get("code") if isinstance(error.get("code"), int) else None
    else:
        detail, kind, code = str(error)[:300], str(error), None
    if _is_overflow(kind):
        return Fault("context_overflow", f"The conversation is too long for {model} at {endpoint} ({detail}).")
    if _is_image_refusal(kind):
        return Fault("images_rejected", f"{endpoint} answered with an error: {detail}")
    if exc.in_stream:  # asked again without streaming, where the error comes whole and with its status
        return Fault("stream_error", f"{endpoint} reported an error mid-stream: {detail}")
    code = code if code is not None else _number(error.get("code") if isinstance(error, dict) else None)
    if code == 429 or "rate_limit" in kind:
        return Fault("rate_limited", f"{endpoint} is rate limiting requests: {detail}")
    if code in (500, 502, 503, 504, 529) or "overloaded" in kind:
        return Fault("server_error", f"{endpoint} failed: {detail}")
    return Fault("fatal", f"{endpoint} answered with an error: {detail}")


def _number(value: object) -> int | None:
    """A status code as gateways write it: 429 or "429"."""
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _api_message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(getattr(exc, "message", "") or exc)[:300]


def _error_type(exc) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"].get("type")
    return None


def _retry_after(exc) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


STALE_CONNECTION = "Server disconnected without sending a response"


def _root_cause(exc: BaseException) -> str:
    """The transport's own words: down the chain of causes, never into an error that was merely being handled
    when the request was made (a retry after "prompt is too long" is made inside that handler)."""
    while True:
        following = exc.__cause__
        context = exc.__context__
        if following is None and context is not None and not exc.__suppress_context__ and _transport(context):
            following = context
        if following is None:
            break
        exc = following
    text = str(exc) or type(exc).__name__
    if "refused" in text.lower():
        return "connection refused"
    return text[:200]


def _transport(exc: BaseException) -> bool:
    return isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in ("httpx", "httpcore", "h11", "ssl")
