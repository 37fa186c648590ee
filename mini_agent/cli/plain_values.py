"""The root command's option values read without pydantic.

typer (0.2x) turns every option's text into its value through a pydantic TypeAdapter built on the option's first
use: importing pydantic and building the root command's ~20 adapters cost ~0.1 s of every start, before the REPL's
prompt (the model SDK imports pydantic too, but behind the prompt). The root's options are all strings, integers,
floats, switches and lists of strings, which need no pydantic: `plain(command, ctx)` gives each such option a reader of
its own before click parses the line. An option of any other type keeps typer's, and a typer without the hook
this uses (its `_runtime_param`) keeps its own for all: slower, never different.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

NUMBERS: dict[type, tuple[Callable[[str], Any], str]] = {int: (int, "an integer"), float: (float, "a number")}


def plain(command, ctx) -> None:
    """Give each plain option of `command` (a typer click command; its --help too) a reader without pydantic."""
    try:
        from typer._coercion import RuntimeParam
    except ImportError:  # another typer: its own coercion stays
        return
    reader = _reader_class(RuntimeParam)
    for param in command.get_params(ctx):
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", "absent") is not None:
            continue  # not typer's, or read already
        info = descriptor.parameter_info
        if descriptor.file_annotation is not None or getattr(info, "parser", None) is not None:
            continue
        if getattr(info, "min", None) is not None or getattr(info, "max", None) is not None:
            continue
        annotation = descriptor.annotation
        item = annotation.__args__[0] if getattr(annotation, "__origin__", None) is list else annotation
        if item in (str, bool, int, float) and (annotation is item or param.multiple):
            param._runtime_param = reader(parameter_info=info, annotation=annotation)


_READERS: dict[type, type] = {}


def _reader_class(base: type) -> type:
    """typer's RuntimeParam (None, a list where a list is due) with the plain types read as click reads them."""
    if base not in _READERS:

        class PlainValue(base):
            def _coerce_value(self, value: Any, param, ctx) -> Any:
                annotation = self.annotation
                if getattr(annotation, "__origin__", None) is list:
                    item = annotation.__args__[0]
                    return [read(item, one, param, ctx) for one in value]
                return read(annotation, value, param, ctx)

        _READERS[base] = PlainValue
    return _READERS[base]


def read(kind: type, value: Any, param, ctx) -> Any:
    """`value` (a string from the command line, or a default) as `kind`; a usage error names the option."""
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    if kind is str:
        return str(value)
    if kind is bool:
        return _switch(value, param, ctx)
    convert, name = NUMBERS[kind]
    try:
        return convert(str(value).strip())
    except ValueError:
        from typer._click.exceptions import BadParameter

        raise BadParameter(f"{value!r} is not {name}.", ctx=ctx, param=param) from None


def _switch(value: Any, param, ctx) -> bool:
    word = str(value).strip().lower()
    if word in ("1", "true", "t", "yes", "y", "on"):
        return True
    if word in ("0", "false", "f", "no", "n", "off"):
        return False
    from typer._click.exceptions import BadParameter

    raise BadParameter(f"{value!r} is not a switch's value.", ctx=ctx, param=param)
