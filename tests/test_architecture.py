"""The package tree is the architecture: no import cycles between modules, and the layers point one way.

Every import counts, including those only for type checking and those inside functions: a cycle hidden behind
`TYPE_CHECKING` or a late import is still two modules that cannot be understood apart.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mini_agent"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The project modules a file imports, resolved to modules (not names inside them)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from package import module` names a module; `from module import name` names the module.
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target.startswith("mini_agent"):
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    files = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    modules = set(files)
    graph = {name: imported_modules(path, modules) for name, path in files.items()}
    for name, targets in graph.items():
        # A module importing its own package's __init__ (or the top package, for __version__) is not an edge.
        targets -= {name, "mini_agent"} | {name.rpartition(".")[0]}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_another_that_imports_it_back() -> None:
    assert cycles(import_graph()) == []


# Lower layers never reach up: the terminal is ui's alone, the wiring is cli's alone.
FORBIDDEN = {
    "mini_agent.model": ("mini_agent.ui", "mini_agent.cli", "mini_agent.context", "mini_agent.agent"),
    "mini_agent.context": ("mini_agent.ui", "mini_agent.cli", "mini_agent.agent", "mini_agent.tool_calls"),
    "mini_agent.safety": ("mini_agent.ui", "mini_agent.cli", "mini_agent.agent", "mini_agent.context"),
    "mini_agent.tools": ("mini_agent.ui", "mini_agent.cli", "mini_agent.agent", "mini_agent.context"),
    "mini_agent.undo": ("mini_agent.ui", "mini_agent.cli", "mini_agent.agent", "mini_agent.context"),
    "mini_agent.agent": ("mini_agent.ui", "mini_agent.cli"),
    "mini_agent.compaction": ("mini_agent.ui", "mini_agent.cli", "mini_agent.agent"),
    "mini_agent.mcp": ("mini_agent.ui", "mini_agent.cli", "mini_agent.agent", "mini_agent.context"),
    "mini_agent.commands": ("mini_agent.ui", "mini_agent.cli"),
    "mini_agent.commands.catalog": ("mini_agent.ui", "mini_agent.cli", "mini_agent.agent"),
    "mini_agent.commands.files": ("mini_agent.ui", "mini_agent.cli", "mini_agent.agent"),
    "mini_agent.subagents": ("mini_agent.ui", "mini_agent.cli"),
    "mini_agent.hooks": (
        "mini_agent.ui",
        "mini_agent.cli",
        "mini_agent.agent",
        "mini_agent.tool_calls",
        "mini_agent.context",
        "mini_agent.safety",
        "mini_agent.tools",
    ),
    "mini_agent.trust": ("mini_agent.ui", "mini_agent.cli", "mini_agent.agent", "mini_agent.mcp", "mini_agent.hooks"),
    "mini_agent.events": ("mini_agent.ui", "mini_agent.cli", "mini_agent.agent", "mini_agent.compaction"),
}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_never_imports_the_layers_above_it(layer: str) -> None:
    graph = import_graph()
    reaching_up = {
        f"{module} -> {target}"
        for module, targets in graph.items()
        if module == layer or module.startswith(layer + ".")
        for target in targets
        for above in FORBIDDEN[layer]
        if target == above or target.startswith(above + ".")
    }
    assert reaching_up == set()


def test_every_package_says_what_it_owns() -> None:
    for init in PACKAGE.rglob("__init__.py"):
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        where = init.relative_to(PACKAGE.parent)
        assert docstring and len(docstring) > 80, f"{where} does not say what it owns"
        assert "import" in docstring.lower(), f"{where} does not say what it may import"
