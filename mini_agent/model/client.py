"""The one real Provider: the Messages API over the official `anthropic` SDK.

`anthropic` is imported lazily (it is the slowest import of the program), while what the endpoint says about
itself (discovery.py) is asked on a thread of its own. The SDK parses the event stream; the reply is assembled
here from its events (assembly.py) so that the gaps of compatible servers do not lose a reply, retried by one
policy (faults.py), and never carries the key.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from mini_agent import threads
from mini_agent.errors import ContextOverflow, ImagesRejected, ProviderError
from mini_agent.model.endpoints import answers, connect_advice, family_of
from mini_agent.model.lookups import EndpointLookups
from mini_agent.model.sdk import import_sdk, load_request_path
from mini_agent.settings import Settings

if TYPE_CHECKING:
    from mini_agent.events import Emit
    from mini_agent.model.discovery import Discovery
    from mini_agent.model.endpoint_memory import EndpointMemory
    from mini_agent.model.replies import Reply, Request
    from mini_agent.model.thinking import Support, Thinking

DISCOVERY_WAIT = 8.0
"""Seconds the first turn waits for the endpoint to say its window (each lookup gives up after 5)."""


class Provider(Protocol):
    def complete(self, request: Request, emit: Emit) -> Reply: ...

    def context_window(self, wait: float = 0.0) -> int | None: ...

    def discovery(self, wait: float = 0.0) -> Discovery: ...

    def list_models(self) -> list[str]: ...

    def use_model(self, model: str) -> None: ...

    def thinking_support(self, model: str | None = None) -> Support: ...


class AnthropicProvider:
    """Messages API over the official SDK: streaming, one retry policy, clear one-line failures."""

    def __init__(
        self, settings: Settings, sleep: Callable[[float], None] = time.sleep, memory: EndpointMemory | None = None
    ) -> None:
        self.settings = settings
        self.family = family_of(settings.base_url, settings.provider)
        self._sleep = sleep
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._http_client: Any = None
        self._http_lock = threading.Lock()
        self._lookups = EndpointLookups(self.family, self._fetch, memory)
        """What the endpoint said, per model asked about (its window is the model's); `memory`: what remote
        endpoints said in earlier runs (endpoint_memory.py), None to ask every run."""
        self._warming = False
        self.on_sent: Callable[[], None] | None = None
        """Called on the requesting thread once per model request, as it goes out (the SDK has built it): the
        model's latency follows, idle time in which the caller may load what the reply will need (preload.py)."""
        self._announced = threading.local()
        self._thinking: Thinking | None = None

    @property
    def thinking(self) -> Thinking:
        """What thinking the session sends, and what the endpoint refused of it (thinking.py): made on first
        use, which is a request's or /effort's, never the start-up's."""
        if self._thinking is None:
            from mini_agent.model.thinking import Thinking

            with self._client_lock:  # sub-agents' threads ask too: one Thinking, whose refusals all of them see
                if self._thinking is None:
                    self._thinking = Thinking()
        return self._thinking

    # ---- start-up ------------------------------------------------------------------------------------

    def warm_up(self, here: bool = False) -> None:
        """Ask the endpoint about itself on a thread of its own, and import the SDK and build the client: on
        another thread, or with `here` on this one.

        The lookup needs only httpx (a tenth of the SDK's import time), so its answer is in before the SDK is
        ready to send the first request, and waiting for it costs that request nothing. `here` is for a thread
        with nothing else to do before the first request than work of its own: under one GIL, two threads
        importing side by side took ~0.15 s more CPU than the same imports one after the other.
        """
        with self._client_lock:
            first, self._warming = not self._warming, True
            self._look_up()
        if here:
            self._import_sdk()
        elif first:
            threads.start(self._import_sdk, name="provider-warm-up")

    def _import_sdk(self) -> None:
        try:
            self.client()
        except Exception:  # the main thread will meet the same error (a missing SDK, a bad URL) and report it
            pass
        load_request_path()

    def client(self) -> Any:
        with self._client_lock:
            if self._client is None:
                anthropic = import_sdk()
                shared = self._http()
                self._client = anthropic.Anthropic(
                    api_key=self.settings.api_key,
                    auth_token=None if self.settings.api_key else self.settings.auth_token,
                    base_url=self.settings.base_url,
                    max_retries=0,  # faults.py owns the retry policy
                    timeout=self._timeout(),
                    **({"http_client": shared} if type(shared).__module__.startswith("httpx2") else {}),
                )
            return self._client

    def _timeout(self) -> Any:
        """The read timeout is the idle time between two pieces of a reply, so a stream that stalls mid-way is
        abandoned (and retried) after stream_idle_timeout, however long the reply as a whole runs."""
        settings = self.settings
        return self._library.Timeout(settings.request_timeout, read=min(settings.stream_idle_timeout, 86_400))

    def _http(self) -> Any:
        """One HTTP client for the lookups and the SDK, made with the SDK's own HTTP library (httpx2): no second
        library to import, one TLS context built, and the connection the lookup opened carries the first request.
        """
        with self._http_lock:
            if self._http_client is None:
                try:
                    import httpx2 as library
                except ImportError:  # an SDK on another transport: the lookups use httpx, the SDK its own
                    import httpx as library

                secure = self.settings.base_url.startswith("https://")
                # Plain http loads no certificates (~50 ms of start-up CPU), and then follows no redirect to a
                # host whose certificate nobody would check.
                self._library = library
                self._http_client = library.Client(
                    verify=secure,
                    follow_redirects=secure,
                    timeout=self._timeout(),
                    event_hooks={"request": [self._sent]},
                )
            return self._http_client

    def _look_up(self) -> None:
        """Ask the endpoint about the model in use (lookups.py), unless it was asked already. Under the client lock."""
        self._lookups.ask(self.settings.base_url, self.settings.model)

    def use_model(self, model: str) -> None:
        """Requests name `model` from now on, and what the endpoint says is what it says of that model: once
        warmed up, its window is asked for now (the first request waits for the answer, as at start-up)."""
        with self._client_lock:
            self.settings = replace(self.settings, model=model)
            if self._warming:
                self._look_up()

    def _fetch(self, method: str, path: str, body: dict | None) -> Any:
        """JSON from a path under the base URL (`.../anthropic/v1/models`, as the SDK joins them), with the
        headers the SDK sends: the key as a bearer token, and the API version Anthropic's endpoint wants."""
        from mini_agent.model.discovery import LOOKUP_TIMEOUT

        key = self.settings.api_key or self.settings.auth_token
        headers = {"anthropic-version": "2023-06-01", **({"Authorization": f"Bearer {key}"} if key else {})}
        url = self.settings.base_url.rstrip("/") + path
        answer = self._http().request(method, url, json=body, headers=headers, timeout=LOOKUP_TIMEOUT)
        answer.raise_for_status()
        return answer.json()

    def list_models(self) -> list[str]:
        """The model ids the endpoint lists (`GET /v1/models`); empty when it lists none or cannot say."""
        known = self.discovery(DISCOVERY_WAIT).models
        if known:
            return known
        try:
            data = self._fetch("GET", "/v1/models", None).get("data") or []
        except Exception:
            return []
        return [entry["id"] for entry in data if isinstance(entry, dict) and isinstance(entry.get("id"), str)]

    def discovery(self, wait: float = 0.0) -> Discovery:
        """What the endpoint said about itself; `wait` seconds for the lookup if warm_up started it."""
        return self._lookups.said(self.settings.model, wait)

    def context_window(self, wait: float = 0.0) -> int | None:
        """The endpoint's context window if it said, else None."""
        return self.discovery(wait).window

    def endpoint_model(self) -> str:
        """The model the endpoint serves first, for servers that host one of the user's choosing (vLLM, llama.cpp)."""
        self.warm_up()
        models = self.discovery(DISCOVERY_WAIT).models
        if not models and not answers(self.settings.base_url):
            advice = connect_advice(self.settings.base_url, self.settings.provider)
            raise ProviderError(f"Nothing answers at {self.settings.base_url}. {advice}")
        if not models:
            raise ProviderError(
                f"No model configured, and {self.settings.base_url} lists none at /v1/models. "
                "Name one with --model or ANTHROPIC_MODEL."
            )
        with self._client_lock:  # the lookup without a model told the window of the first: the one served
            self._lookups.same_answer(models[0], as_for=self.settings.model)
        return models[0]

    # ---- requests ------------------------------------------------------------------------------------

    def thinking_support(self, model: str | None = None) -> Support:
        """What thinking `model` (by default the one in use) takes at this endpoint (the one rule: thinking.py).
        A sub-agent of its own model asks with it: what the endpoint said is said of the model in use."""
        model = model or self.settings.model
        said = self.discovery().capabilities if model == self.settings.model else None
        from mini_agent.model.thinking import support_for

        return support_for(self.family, self.settings.base_url, model, said)

    def complete(self, request: Request, emit: Emit) -> Reply:
        from mini_agent.events import Notice, ReplyDiscarded
        from mini_agent.model.faults import backoff, classify
        from mini_agent.model.wellformed import call_ids

        plain = request.body()
        body, headers = self.thinking.prepare(plain, self.thinking_support(request.model), request.effort)
        taken = frozenset(call_ids(request.messages))  # a reply's calls may not reuse the conversation's ids
        streaming = True
        attempt = 0
        fresh_connection_tried = False
        said = ""  # the last retry's reason: the same again is told in a few words
        while True:
            try:
                sent = {**body, "extra_headers": headers} if headers else body
                return self._stream(sent, emit, taken) if streaming else self._create(sent, emit, taken)
            except Exception as exc:
                advice = connect_advice(self.settings.base_url, self.settings.provider)
                fault = classify(exc, self.settings.base_url, self.settings.model, advice)
                if fault.kind == "stale_connection" and not fresh_connection_tried:
                    fresh_connection_tried = True  # once, at once and unannounced: nothing was lost
                    continue
                if fault.kind == "fatal" and (told := self.thinking.rejection(fault.message, body)):
                    emit(Notice(self.settings.secret_set.mask(told)))
                    body, headers = self.thinking.prepare(plain, self.thinking_support(request.model), request.effort)
                    continue
                if fault.kind == "stream_error":
                    streaming = False  # an error event mid-stream, or JSON where events were due: ask plainly
                if fault.kind == "context_overflow":
                    raise ContextOverflow(self.settings.secret_set.mask(fault.message)) from None
                if fault.kind == "images_rejected" and '"type": "image"' in json.dumps(body["messages"]):
                    raise ImagesRejected(self.settings.secret_set.mask(fault.message)) from None
                if not fault.retryable or attempt >= self.settings.max_retries:
                    tries = f" (gave up after {plural(attempt + 1, 'attempt')})" if fault.retryable else ""
                    raise ProviderError(self.settings.secret_set.mask(fault.message + tries)) from None
                attempt += 1
                delay = backoff(attempt, self.settings.retry_base_delay, fault)
                reason = self.settings.secret_set.mask(fault.message)
                emit(ReplyDiscarded(reason, attempt, delay, repeated=reason == said))
                said = reason
                self._sleep(delay)

    def _stream(self, body: dict, emit: Emit, taken: frozenset[str]) -> Reply:
        from mini_agent.model.reading import read_reply

        self._announced.done = False
        stream = self.client().messages.create(**body, stream=True)
        self._sent(None)  # an SDK on its own HTTP client: the answer has begun, the model's latency follows
        with stream:
            return read_reply(stream.response, stream.raw_events, emit, taken, self.family)

    def _create(self, body: dict, emit: Emit, taken: frozenset[str]) -> Reply:
        import anthropic

        from mini_agent.model.reading import read_reply

        self._announced.done = False
        raw = self.client().messages.with_raw_response.create(**body)
        self._sent(None)
        return read_reply(raw.http_response, anthropic.Stream.raw_events, emit, taken, self.family)

    def _sent(self, request: Any) -> None:
        """`request`: the HTTP request about to go out (the shared client's hook), None after the SDK sent it."""
        if request is not None and request.method != "POST":
            return  # a lookup, not a model request
        if self.on_sent is not None and not getattr(self._announced, "done", False):
            self._announced.done = True
            self.on_sent()


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
