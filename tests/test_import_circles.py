"""No import circle anywhere in the house, not even one only the type checker follows.

docs/architecture.md, "No circles": a module that imports one that imports it back, at run
time, under ``TYPE_CHECKING`` or inside a function, is two modules that can only be understood
together. import-linter keeps the layers one way (``make lint``); this test keeps every room
one way inside too, on the import graph import-linter itself reads (grimp), type-only imports
included.
"""

from __future__ import annotations

import grimp

PACKAGES = ("controller", "drivers")


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every set of modules that import one another round (Tarjan's strongly connected parts)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            part = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                part.append(member)
                if member == module:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert len(graph.modules) > 350  # the whole house was read
    assert circles(graph) == []


def test_the_check_finds_a_circle_where_there_is_one() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.b", "a.c", "a.d"):
        graph.add_module(module)
    graph.add_import(importer="a.b", imported="a.c")
    graph.add_import(importer="a.c", imported="a.b")
    graph.add_import(importer="a.d", imported="a.b")
    assert circles(graph) == [["a.b", "a.c"]]
