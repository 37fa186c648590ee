"""The package tree is the architecture: no import cycles between modules, and the layers point one way.

Every import counts, including those only for type checking and those inside functions: a cycle hidden behind
`TYPE_CHECKING` or a late import is still two modules that cannot be understood apart.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mini_agent"


@functools.cache
def parsed(source: str) -> ast.Module:
    """A module's syntax tree, parsed once for all the checks here (each walks every module of the package)."""
    return ast.parse(source)


def module_name(path: Path, package_root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package_root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, modules: set[str], package_root: Path = PACKAGE) -> set[str]:
    """The project modules a file imports, resolved to modules (not names inside them)."""
    name = module_name(path, package_root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(parsed(path.read_text(encoding="utf-8"))):
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
    """Each module of the package and the project modules it imports (a fresh copy: the checks may change it)."""
    return {name: set(targets) for name, targets in _import_graph().items()}


@functools.cache
def _import_graph() -> dict[str, set[str]]:
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


# The layers, top to bottom. A module belongs to the longest name that is it or a package above it; an import may
# point to its own layer or any below, never up. The core (agent down) never imports ui, app or cli: it emits
# events and is handed `confirm`; ui sits above the agent because it draws the agent's results, which it may
# name, while nothing below it may name ui. Why each layer is where it is: CONTRIBUTING.md, "Layers".
LAYERS: list[tuple[str, ...]] = [
    ("entry", "__main__", "serve"),  # the command's first lines; the warm server, which runs cli
    ("cli",),  # arguments + environment + config files -> Settings -> exit status
    ("app",),  # the composition root and the front ends (one-shot, REPL, the showing subcommands)
    ("ui",),  # drawing: console, renderers, Markdown stream, the question
    ("subagents", "commands", "sessions", "skills"),  # extensions above the agent
    ("agent",),  # the loop
    ("tool_calls", "gate", "step_preload"),  # a reply's calls: validate, decide, run, settle
    ("context",),  # blocks, sources, enrichers, keeper, compaction
    ("conversation", "instructions"),  # the model's view + the append-only log
    ("mcp",),
    ("model", "prompt"),  # replies from the endpoint; the system prompt it is sent
    ("hooks",),
    ("events",),  # what the core tells the outside world
    ("tools",),
    ("undo",),
    ("processes",),  # the one way to start, confine, watch and kill a child
    ("settings", "config_files"),
    ("safety",),  # policy primitives: shell classifier, sandbox, permissions, egress, secrets, workspace
    ("files", "xmltext", "usage", "trust", "locations", "process_end", "gc_pause", "threads", "warm"),
    ("errors",),
]


def layer_of(module: str) -> int | None:
    """The index of the layer a module belongs to (the longest matching name), None for the top package."""
    best: tuple[int, int] | None = None
    for index, names in enumerate(LAYERS):
        for name in names:
            full = f"mini_agent.{name}"
            if (module == full or module.startswith(full + ".")) and (best is None or len(full) > best[1]):
                best = (index, len(full))
    return None if best is None else best[0]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if layer_of(module) is not None and layer_of(target) is not None and layer_of(target) < layer_of(module)
    )


def test_every_module_has_a_layer() -> None:
    assert [module for module in import_graph() if layer_of(module) is None] == ["mini_agent"]


def test_every_name_in_the_layers_is_a_module_or_package() -> None:
    modules = set(import_graph())
    assert [name for names in LAYERS for name in names if f"mini_agent.{name}" not in modules] == []


def test_no_package_imports_another_that_imports_it_back() -> None:
    """The rooms, not only the modules, point one way: a package in one layer never imports a package that
    imports it back (the warm start's server and client sides are two packages for this reason)."""
    top_level = {}
    for module, targets in import_graph().items():
        room = ".".join(module.split(".")[:2])
        top_level.setdefault(room, set()).update(".".join(t.split(".")[:2]) for t in targets)
        top_level[room].discard(room)
    assert cycles(top_level) == []


def test_no_import_runs_up_the_layers() -> None:
    assert upward_imports(import_graph()) == []


def test_the_layer_check_sees_an_import_that_runs_up() -> None:
    graph = {"mini_agent.tools.bash": {"mini_agent.ui.render"}, "mini_agent.ui.render": {"mini_agent.tools.base"}}
    assert upward_imports(graph) == ["mini_agent.tools.bash -> mini_agent.ui.render"]


def test_a_function_level_import_is_an_edge(tmp_path: Path) -> None:
    module = tmp_path / "mini_agent" / "tools" / "late.py"
    module.parent.mkdir(parents=True)
    module.write_text("def f():\n    from mini_agent.ui import render\n", encoding="utf-8")
    found = imported_modules(module, {"mini_agent.ui.render", "mini_agent.ui"}, package_root=tmp_path / "mini_agent")
    assert found == {"mini_agent.ui.render", "mini_agent.ui"}


def test_a_private_module_is_imported_only_inside_its_package() -> None:
    outside = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        for target in targets
        if target.rpartition(".")[2].startswith("_")
        and not target.endswith("__main__")
        and not module.startswith(target.rpartition(".")[0] + ".")
    )
    assert outside == []


def test_every_package_says_what_it_owns() -> None:
    for init in PACKAGE.rglob("__init__.py"):
        docstring = ast.get_docstring(parsed(init.read_text(encoding="utf-8")))
        where = init.relative_to(PACKAGE.parent)
        assert docstring and len(docstring) > 80, f"{where} does not say what it owns"
        assert "import" in docstring.lower(), f"{where} does not say what it may import"


# ---- the agent is built complete ----------------------------------------------------------------------------
# app/build.py passes the agent everything it runs with; what changes during a session changes through one method
# of the agent each (set_mode, switch_model, start_conversation, ...). An assignment from outside would be a
# holder the builder and those methods do not know of: a model switch that does not reach it, a sub-agent that
# does not inherit it.


def agent_like(node: ast.expr) -> bool:
    """An expression that names an agent: `agent`, `parent`, `child`, `sub_agent`, `<anything>.agent` ..."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name in ("parent", "child") or name.endswith("agent")


def agent_attribute_writes(source: str) -> list[str]:
    """`agent.X = ...`, `agent.X += ...`, `a, agent.X = ...`, `agent.X[k] = ...`, `del agent.X` and
    `setattr(agent, ...)` in `source`, in line order."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(parsed(source)):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for part in (part for target in targets for part in ast.walk(target)):
                if not isinstance(getattr(part, "ctx", None), ast.Store | ast.Del):
                    continue
                # `agent.X = ...`, or `agent.X[key] = ...`: one of its holders changed in place
                owner = part.value if isinstance(part, ast.Attribute) else None
                if isinstance(part, ast.Subscript) and isinstance(part.value, ast.Attribute):
                    owner = part.value.value
                if owner is not None and agent_like(owner):
                    found.append((node.lineno, ast.unparse(part)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
            if node.args and agent_like(node.args[0]):
                found.append((node.lineno, ast.unparse(node)))
    return [f"line {line}: {text}" for line, text in sorted(found)]


def test_no_module_outside_the_agent_assigns_its_attributes() -> None:
    writes = [
        f"{path.relative_to(PACKAGE.parent)} {write}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "agent.py"
        for write in agent_attribute_writes(path.read_text(encoding="utf-8"))
    ]
    assert writes == []


def test_the_agent_attribute_check_sees_each_way_of_assigning() -> None:
    source = """
agent.hooks = hooks
repl.agent.settings = settings
parent.delegated += usage
child.gate, x = gate, 1
del sub_agent.mcp
setattr(agent, "mode", "auto")
agent.gate.rules = rules
agent.notes.append(note)
agent.run_hints["key"] = hint
hooks.emit = emit
options["agent"] = value
"""
    assert [write.split(": ", 1)[1] for write in agent_attribute_writes(source)] == [
        "agent.hooks",
        "repl.agent.settings",
        "parent.delegated",
        "child.gate",
        "sub_agent.mcp",
        "setattr(agent, 'mode', 'auto')",
        "agent.run_hints['key']",
    ]
