"""The house keeps its order (docs/architecture.md): every import of the package, lazy ones
inside functions included, goes to the importer's own room or one below it; there is no import
circle; no module imports another module's private (``_name``) attribute."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
#: Each room's height: a module imports only from rooms of its height or lower (a family
#: imports no other family: they share one height and are told apart below).
HEIGHT = {"floor": 0, "io": 1, "report": 2, "synth": 3, "reference_check": 4, "metrics": 5,
          "verifiers": 6, "benchmark": 7, "audit": 8, "review": 9,
          "andi": 10, "stages": 10, "conversion": 10, "cli": 11, "napari_plugin": 11}
FAMILIES = {"andi", "stages", "conversion"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room(module: str) -> str:
    parts = module.split(".")
    if module == "trackverify.__main__":
        return "cli"
    return parts[1] if len(parts) > 1 and parts[1] in HEIGHT else "floor"


def imports(path: Path, modules: set[str]):
    """``(target module, imported name or None)`` of every import of the package in ``path``."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((a.name, None) for a in node.names if a.name.startswith("trackverify"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1],
                                 *([base] if base else [])])
            if base.startswith("trackverify"):
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    yield (full, None) if full in modules else (base, alias.name)


@pytest.fixture(scope="module")
def graph():
    files = sorted(SRC.rglob("*.py"))
    modules = {module_name(p) for p in files}
    return {module_name(p): list(imports(p, modules)) for p in files}


def test_rooms_import_only_downwards(graph):
    upward = []
    for source, targets in graph.items():
        for target, _ in targets:
            a, b = room(source), room(target)
            if a != b and (HEIGHT[b] > HEIGHT[a] or (a in FAMILIES and b in FAMILIES)):
                upward.append(f"{source} ({a}) imports {target} ({b})")
    assert upward == []


def test_no_import_circle(graph):
    edges = {m: {t for t, _ in ts if t in graph} for m, ts in graph.items()}
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                raise AssertionError(" -> ".join([*path, node, nxt]))
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [])


def test_no_module_imports_another_modules_private_name(graph):
    private = [f"{source} imports {target}.{name}" for source, targets in graph.items()
               for target, name in targets
               if name is not None and name.startswith("_") and not name.startswith("__")]
    assert private == []


def test_the_rules_catch_what_they_forbid():
    """The checks on a made-up graph: an upward import, a circle, a private name."""
    assert room("trackverify.io.tracks") == "io" and room("trackverify.tables") == "floor"
    assert HEIGHT[room("trackverify.cli.audit")] > HEIGHT[room("trackverify.audit.core")]
    with pytest.raises(AssertionError, match="a -> b -> a"):
        test_no_import_circle({"a": [("b", None)], "b": [("a", None)]})
    with pytest.raises(AssertionError):
        test_rooms_import_only_downwards({"trackverify.io.x": [("trackverify.audit.core", None)]})
    with pytest.raises(AssertionError):
        test_no_module_imports_another_modules_private_name(
            {"trackverify.a": [("trackverify.b", "_hidden")]})
