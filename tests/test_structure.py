"""The package's import graph has no cycle (issue 12): the core reads as one stack, each layer
importing only layers below it (docs/design.rst, "Layers"). Every ``import`` and ``from ...
import`` is counted, also those inside functions (an import deferred to call time is still a
dependency; deferring it only hides a cycle). Not counted: imports under ``if TYPE_CHECKING:``,
which never run (annotations only)."""
from __future__ import annotations

import ast
import pathlib

import lazyarr

PACKAGE = pathlib.Path(lazyarr.__file__).parent


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    """The package's modules: its Python files and its compiled Cython ones (``.pyx``)."""
    return {_module_name(p): p for p in sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyx")])}


def _source(path: pathlib.Path) -> str:
    """What ``ast`` can parse of a module: a Cython file's import statements only (its
    ``cdef``/``cimport`` lines are not Python)."""
    text = path.read_text()
    if path.suffix != ".pyx":
        return text
    lines = [line.strip() for line in text.splitlines()]
    return "\n".join(line for line in lines if line.startswith(("import ", "from "))
                     and " cimport " not in line and not line.startswith("from cpython"))


def _imports(name: str, path: pathlib.Path, modules: set[str]) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(_source(path), str(path))
    type_only = {id(n) for block in ast.walk(tree) if _is_type_checking_block(block)
                 for stmt in block.body for n in ast.walk(stmt)}  # type: ignore[attr-defined]
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # ``from X import y``: the submodule X.y where there is one, else X itself
            targets = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in modules else stem
                       for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


def _is_type_checking_block(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, set(modules)) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_scan_sees_imports_inside_functions():
    graph = import_graph()
    assert "lazyarr._array" in graph["lazyarr._functions._creation"]
    assert "lazyarr._materialize" in graph["lazyarr._build"]


def test_the_scan_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles in lazyarr:\n" + "\n".join(
        "  " + ", ".join(c) + "\n    " + "; ".join(
            f"{m} -> {', '.join(sorted(graph[m] & set(c)))}" for m in c) for c in found)
