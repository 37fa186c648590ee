"""The small exception vocabulary of mini-agent and the process exit statuses."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """What the process tells its caller; documented in README.md."""

    SUCCESS = 0
    ERROR = 1
    """A runtime failure: the endpoint failed after retries, the model refused, the reply was cut."""
    USAGE = 2
    """Bad flags, no prompt, no API key: fix the invocation or the configuration."""
    STEP_LIMIT = 3
    """The turn reached --max-steps before the model finished."""
    DENIED = 4
    """The model finished, but at least one tool call was refused (by a rule, plan mode, or for want of a yes):
    the answer may rest on work that was not done. A failure above (1, 3, 130) takes precedence."""
    INTERRUPTED = 130
    """Ctrl-C (SIGINT), as shells report it."""


class MiniAgentError(Exception):
    """Base of every error meant to be shown to the human as one line."""

    exit_status = ExitStatus.ERROR
    kind = "error"
    """How a session file records a turn that ended with it (`turn_error` entries)."""


class ConfigError(MiniAgentError):
    """The invocation or the configuration cannot work (no key, bad flag value)."""

    exit_status = ExitStatus.USAGE


class ProviderError(MiniAgentError):
    """The model endpoint failed in a way retrying did not fix; the message names the endpoint."""

    kind = "api"


class ContextOverflow(ProviderError):
    """The endpoint said the prompt is longer than the model's context window."""

    kind = "overflow"


class ImagesRejected(ProviderError):
    """The endpoint refused a request because of its images (a text-only model, an unsupported image)."""

    kind = "images_rejected"


class StepLimitReached(MiniAgentError):
    """The turn used every step it was allowed."""

    exit_status = ExitStatus.STEP_LIMIT
    kind = "step_limit"

    def __init__(self, max_steps: int) -> None:
        super().__init__(
            f"Stopped after {max_steps} steps (the --max-steps limit) before the model finished; "
            "raise --max-steps or continue the task with a new prompt."
        )
        self.max_steps = max_steps


class TurnAborted(MiniAgentError):
    """The human interrupted the turn (Ctrl-C)."""

    exit_status = ExitStatus.INTERRUPTED

    def __init__(self, message: str = "Interrupted.") -> None:
        super().__init__(message)


def redact(text: str, secrets: list[str]) -> str:
    """Replace every secret value in text with a mask, before a session exists; a session masks with its
    SecretSet (Settings.secret_set), which also knows their encodings."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "****")
    return text
