"""Shell variables known before running: `x=rm; $x -rf /` runs rm, so `$x` is resolved when it is safe to.

A variable resolves only when the script gives it exactly one static value, before the use, and sets it in no
other way. Anything else (`read x`, `for x in`, `${x:=...}`, two different values, an append) leaves it
dynamic, which is never in the command's favour. HOME and PWD, when the script does not set them, stand for
`~` and `.`.
"""

from __future__ import annotations

from collections.abc import Callable

from mini_agent.safety.shell.words import Node

KNOWN = {"HOME": "~", "PWD": "."}


class Variables:
    def __init__(self, root: Node, text: Callable[[Node], str]):
        self.values: dict[str, str | None] = {}
        self.poisoned = _poisoned(root, text)

    def lookup(self, name: str) -> str | None:
        if "IFS" in self.poisoned:  # a script that sets IFS splits words where only the running shell knows
            return None
        if name in self.poisoned:
            return None
        if name in self.values:
            return self.values[name]
        return KNOWN.get(name)

    def assign(self, name: str, value: str | None) -> None:
        self.values[name] = value


def _poisoned(root: Node, text: Callable[[Node], str]) -> set[str]:
    """Names that cannot be trusted from their plain assignments: assigned two different values, appended to,
    or set some other way (`read x`, `for x in`, `printf -v x`, `${x:=...}`, arithmetic)."""
    values: dict[str, set[str]] = {}
    poisoned: set[str] = set()
    mentioned: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind == "variable_assignment":
            name = node.child_by_field_name("name")
            value = node.child_by_field_name("value")
            if name is not None:
                values.setdefault(text(name), set()).add(text(value) if value is not None else "")
                if name.type != "variable_name" or any(child.type == "+=" for child in node.children):
                    poisoned.add(text(name).split("[")[0])
        elif kind == "variable_name":
            parent = node.parent
            if parent is not None and parent.type not in ("simple_expansion", "expansion", "variable_assignment"):
                poisoned.add(text(node))
            elif (
                parent is not None
                and parent.type == "expansion"
                and any(child.type in ("=", ":=") for child in parent.children)
            ):
                poisoned.add(text(node))
        elif kind == "word" and node.end_byte - node.start_byte < 100:
            mentioned.add(text(node).split("=")[0].split("+")[0])
        stack.extend(node.children)
    poisoned |= {name for name, texts in values.items() if len(texts) > 1}
    poisoned |= {"IFS"} & (set(values) | mentioned)
    return poisoned | (mentioned & set(values))
