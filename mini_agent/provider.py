"""The model seam: a Provider protocol and its one real implementation on the official `anthropic` SDK.

`anthropic` is imported lazily (it is the slowest import of the program) and can be warmed up in a background
thread while the rest of start-up runs. The SDK streams and parses; this module retries (see faults.py),
keeps every reply block exactly as received, and never lets the key into a message.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from mini_agent.errors import ContextOverflow, ProviderError
from mini_agent.events import Emit, ReplyDiscarded, TextDelta
from mini_agent.faults import StreamCut, backoff, classify
from mini_agent.settings import Settings
from mini_agent.usage import Usage

# Deltas the SDK folds into its snapshot itself; any other delta type is merged here so that blocks of
# types added to the API later still go back to it exactly as they were received.
_SDK_DELTAS = {"text_delta", "input_json_delta", "citations_delta", "thinking_delta", "signature_delta"}
_SDK_ONLY_FIELDS = {"parsed_output"}


@dataclass(frozen=True)
class Request:
    """Everything one call to the model sends."""

    model: str
    system: list[dict]
    messages: list[dict]
    tools: list[dict]
    max_tokens: int

    def body(self) -> dict[str, Any]:
        body = {"model": self.model, "max_tokens": self.max_tokens, "system": self.system, "messages": self.messages}
        if self.tools:
            body["tools"] = self.tools
        return body


@dataclass(frozen=True)
class Reply:
    """A complete assistant reply: the message param to append, why it stopped, what it cost."""

    message: dict
    stop_reason: str | None
    usage: Usage
    stop_details: dict | None = None


class Provider(Protocol):
    def complete(self, request: Request, emit: Emit) -> Reply: ...

    def context_window(self) -> int | None: ...


class AnthropicProvider:
    """Messages API over the official SDK: streaming, one retry policy, clear one-line failures."""

    def __init__(self, settings: Settings, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self._sleep = sleep
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._window: int | None = None
        self._window_thread: threading.Thread | None = None

    # ---- start-up ------------------------------------------------------------------------------------

    def warm_up(self) -> None:
        """Import the SDK, build the client and ask for the context window, all off the main thread."""
        threading.Thread(target=self._warm, name="provider-warm-up", daemon=True).start()

    def _warm(self) -> None:
        try:
            self.client()
            self._window_thread = threading.Thread(target=self._fetch_window, daemon=True)
            self._window_thread.start()
        except Exception:  # the main thread will meet the same error and report it
            pass

    def client(self) -> Any:
        with self._client_lock:
            if self._client is None:
                import anthropic

                self._client = anthropic.Anthropic(
                    api_key=self.settings.api_key,
                    auth_token=None if self.settings.api_key else self.settings.auth_token,
                    base_url=self.settings.base_url,
                    max_retries=0,  # faults.py owns the retry policy
                    timeout=self.settings.request_timeout,
                )
            return self._client

    def _fetch_window(self) -> None:
        try:
            info = self.client().models.retrieve(self.settings.model, timeout=5.0)
            self._window = getattr(info, "max_input_tokens", None) or None
        except Exception:  # many compatible endpoints have no models endpoint: settings decide then
            self._window = None

    def context_window(self, wait: float = 0.0) -> int | None:
        """`max_input_tokens` from the models endpoint if it has answered, else None."""
        thread = self._window_thread
        if thread is not None and wait:
            thread.join(wait)
        return self._window

    # ---- requests ------------------------------------------------------------------------------------

    def complete(self, request: Request, emit: Emit) -> Reply:
        body = request.body()
        streaming = True
        attempt = 0
        while True:
            try:
                return self._stream(body, emit) if streaming else self._create(body, emit)
            except Exception as exc:
                fault = classify(exc, self.settings.base_url, self.settings.model)
                if fault.kind == "stream_error":
                    streaming = False  # an error event mid-stream: ask again without streaming
                if fault.kind == "context_overflow":
                    raise ContextOverflow(self.settings.secret_set.mask(fault.message)) from None
                if not fault.retryable or attempt >= self.settings.max_retries:
                    tries = f" (gave up after {attempt + 1} attempts)" if fault.retryable else ""
                    raise ProviderError(self.settings.secret_set.mask(fault.message + tries)) from None
                attempt += 1
                delay = backoff(attempt, self.settings.retry_base_delay, fault)
                emit(ReplyDiscarded(self.settings.secret_set.mask(fault.message), attempt, delay))
                self._sleep(delay)

    def _stream(self, body: dict, emit: Emit) -> Reply:
        unknown_deltas: dict[int, list[dict]] = {}
        with self.client().messages.stream(**body) as stream:
            for event in stream:
                if event.type == "text":
                    emit(TextDelta(event.text))
                elif event.type == "content_block_delta" and event.delta.type not in _SDK_DELTAS:
                    unknown_deltas.setdefault(event.index, []).append(event.delta.to_dict(warnings=False))
            message = stream.get_final_message()
        if message.stop_reason is None:
            raise StreamCut()
        return _reply(message, unknown_deltas)

    def _create(self, body: dict, emit: Emit) -> Reply:
        message = self.client().messages.create(**body)
        for block in message.content:
            if block.type == "text" and block.text:
                emit(TextDelta(block.text))
        return _reply(message, {})


def _reply(message: Any, unknown_deltas: dict[int, list[dict]]) -> Reply:
    blocks = []
    for index, block in enumerate(message.content):
        data = {k: v for k, v in block.to_dict(warnings=False).items() if k not in _SDK_ONLY_FIELDS}
        for delta in unknown_deltas.get(index, ()):
            _merge_delta(data, delta)
        # The API rejects empty text blocks, and an empty one says nothing: it is the only thing dropped.
        if data.get("type") == "text" and not data.get("text"):
            continue
        blocks.append(data)
    details = getattr(message, "stop_details", None)
    return Reply(
        message={"role": "assistant", "content": blocks},
        stop_reason=message.stop_reason,
        usage=Usage.from_api(message.usage),
        stop_details=details.to_dict(warnings=False) if hasattr(details, "to_dict") else details,
    )


def _merge_delta(block: dict, delta: dict) -> None:
    """Fold a delta of a type the SDK does not know into its block: strings append, other values replace."""
    for key, value in delta.items():
        if key == "type":
            continue
        current = block.get(key)
        block[key] = current + value if isinstance(current, str) and isinstance(value, str) else value
