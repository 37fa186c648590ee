"""Helpers for tests of background jobs: replies the loopback model builds from what it was just sent (a job's
id and a server's port are only known once the tool ran)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from support.fake_api import Reply


@dataclass
class Later(Reply):
    """A reply whose content is made from the request it answers (`make(body) -> content blocks`)."""

    make: Callable[[dict], list[dict]] | None = None
    api: Any = None

    def message(self) -> dict:
        assert self.make is not None and self.api is not None
        self.content = self.make(self.api.message_requests[-1])
        return super().message()


def later(api, make: Callable[[dict], list[dict]]) -> Later:
    return Later(make=make, api=api)


def last_results(body: dict) -> str:
    """The text of the tool results (and notes) in the request's last message."""
    parts = []
    for block in body["messages"][-1]["content"]:
        if block.get("type") == "tool_result":
            content = block["content"]
            parts += [content] if isinstance(content, str) else [item.get("text", "") for item in content]
        elif block.get("type") == "text":
            parts.append(block["text"])
    return "\n".join(parts)


def job_id(text: str) -> str:
    found = re.search(r"background job (\w+)", text)
    assert found, text
    return found.group(1)
