"""Expansions that make bash evaluate a variable's value as code, and the builtins that evaluate a name.

`x='a[$(rm -rf ~)]'; echo $((x))` runs rm: arithmetic evaluates a variable's value, and an array subscript in
that value is expanded, command substitutions included. The same happens through indirection (`${!x}`), the
prompt transform (`${x@P}`), `[[ $x -eq 1 ]]`, `(( ))`, `let`, and the names given to `test -v`, `printf -v`,
`read`, `declare`, `unset`, `mapfile`... This module only says where such evaluation happens; the classifier
makes it never read-only, and destructive when the code it would run is visible (a subscript holding `$(...)`
or backticks, or a variable of the same script holding such text).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Node = Any
ARITHMETIC_TESTS = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"}
PLAIN_INDEX = re.compile(r"\s*(-?\d+|@|\*)\s*")
# Builtins that take variable names as operands (and evaluate a subscript in a name: `read 'a[$(cmd)]'`).
NAME_TAKERS = {
    "test", "[", "printf", "read", "declare", "typeset", "local", "export", "readonly", "unset", "mapfile",
    "readarray", "let", "getopts", "wait", "compgen",
}  # fmt: skip
CODE = re.compile(r"\$\(|`|\$\{|\$[A-Za-z_]")
VISIBLE = "with code in it"
"""Marks a reason whose evaluated text visibly holds code: that is destructive, not merely ordinary."""


def evaluates(node: Node, text: Callable[[Node], str]) -> str | None:
    """How this word node (or anything in it, outside command substitutions) evaluates a value as code."""
    kind = node.type
    if kind in ("command_substitution", "process_substitution"):
        return None
    if kind == "expansion":
        types = [child.type for child in node.children]
        if len(types) > 1 and types[1] == "!":
            return f"indirection ({text(node)}) expands a variable named by another one"
        if "@" in types and any(text(child) == "P" for child in node.children[types.index("@") + 1 :]):
            return f"the prompt transform ({text(node)}) runs the command substitutions in a value"
        if ":" in types and any(c.type not in ("number", ":", "}") for c in node.children[types.index(":") + 1 :]):
            return f"a substring's offset or length ({text(node)}) is evaluated as arithmetic"
    if kind == "subscript":
        index = node.child_by_field_name("index")
        if index is not None and not PLAIN_INDEX.fullmatch(text(index)):
            return f"an array subscript ({text(node)}) is evaluated as arithmetic"
    if kind == "arithmetic_expansion" and _names_in(node):
        return f"arithmetic ({text(node)}) evaluates the values of variables"
    for child in node.named_children:
        found = evaluates(child, text)
        if found:
            return found
    return None


def statement_evaluates(node: Node, text: Callable[[Node], str]) -> str | None:
    """What a `[[ ]]`, `(( ))` or `for (( ))` statement evaluates as code, or None."""
    head = text(node.children[0]) if node.children else ""
    if head in ("((", "for") and _names_in(node):
        return f"arithmetic ({head} ... ) evaluates the values of variables"
    return _tests(node, text) or evaluates(node, text)


def _tests(node: Node, text: Callable[[Node], str]) -> str | None:
    if node.type in ("command_substitution", "process_substitution"):
        return None
    if node.type in ("binary_expression", "unary_expression"):
        operator = next((text(child) for child in node.children if child.type == "test_operator"), None)
        operands = [child for child in node.named_children if child.type != "test_operator"]
        if operator in ARITHMETIC_TESTS and any(child.type != "number" for child in operands):
            return f"[[ {operator} ]] evaluates its operands as arithmetic"
        if operator == "-v" and any("[" in text(child) for child in operands):
            visible = any(CODE.search(text(child).partition("[")[2]) for child in operands)
            return f"-v evaluates an array subscript{' ' + VISIBLE if visible else ''}"
    return next((found for child in node.named_children if (found := _tests(child, text))), None)


def _names_in(node: Node) -> bool:
    if node.type in ("variable_name", "subscript", "simple_expansion", "expansion"):
        return True
    if node.type in ("command_substitution", "process_substitution"):
        return False
    return any(_names_in(child) for child in node.named_children)


def subscript_code(name: str, words: list[tuple[str, str | None]]) -> tuple[str, bool] | None:
    """What a name-taking builtin evaluates in its operands (words as (source text, value)): the reason, and
    whether code is visible in it (`$(...)`, backticks, a `$` that is expanded a second time)."""
    if name not in NAME_TAKERS:
        return None
    if name in ("test", "[", "printf"):  # only the operand of -v is a name
        words = [word for before, word in zip(words, words[1:], strict=False) if before[1] == "-v"]
    for source, value in words:
        if value is None:
            if "[" in source:
                return f"{name} evaluates an array subscript built at run time ({source})", False
            continue
        if name == "let" and not PLAIN_INDEX.fullmatch(value):
            return f"let evaluates {value!r} as arithmetic", holds_code(value)
        start = value.find("[")
        if start >= 0 and not PLAIN_INDEX.fullmatch(value[start + 1 :].split("]")[0]):
            return f"{name} evaluates the array subscript in {value!r}", holds_code(value[start:])
    return None


def holds_code(value: str) -> bool:
    """Whether a variable's value is text that, once evaluated, expands or runs something."""
    return bool(CODE.search(value))
