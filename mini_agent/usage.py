"""Token usage as the API reports it."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @classmethod
    def from_mapping(cls, usage: dict) -> Usage:
        """From usage as the API's JSON gives it; missing, null or odd counts are zero."""
        return cls(
            **{
                name: value if isinstance(value := usage.get(name), int) and not isinstance(value, bool) else 0
                for name in cls.__dataclass_fields__
            }
        )

    def __add__(self, other: Usage) -> Usage:
        return Usage(**{name: getattr(self, name) + getattr(other, name) for name in self.__dataclass_fields__})

    @property
    def context_tokens(self) -> int:
        """The size of the conversation after this reply: everything read plus everything written."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, int]:
        return asdict(self)
