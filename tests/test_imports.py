"""No two `coworkenv` modules import each other, directly or through others.

Every import counts: at the top of a module, inside a function, or under `TYPE_CHECKING`
(a cycle that type checkers see is a cycle a reader must untangle too). Importing a
submodule is not counted as importing its package's `__init__` (Python runs that first
whatever the order, so it closes no loop)."""

import ast
import importlib.util
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = "coworkenv"


def _package_modules(package: str) -> dict[str, Path]:
    """The modules of a package's folder (not its subpackages'), by name."""
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations is not None, package
    found = {}
    for folder in spec.submodule_search_locations:
        for path in sorted(Path(folder).glob("*.py")):
            found[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return found


def _subpackages(package: str) -> list[str]:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations is not None
    return [
        f"{package}.{p.parent.name}"
        for folder in spec.submodule_search_locations
        for p in sorted(Path(folder).glob("*/__init__.py"))
    ]


def _imported_names(module: str, path: Path) -> Iterator[tuple[str, list[str]]]:
    """(module imported, names imported from it) for every import statement of a module."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, node.module] if node.module else parts)
            else:
                base = node.module or ""
            yield base, [alias.name for alias in node.names]


@cache
def _is_package(name: str) -> bool:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.submodule_search_locations is not None


def import_graph() -> dict[str, set[str]]:
    """Every `coworkenv` module and the `coworkenv` modules it imports. Packages are found
    from `coworkenv` down: each package's folder, and the subpackages its modules import
    (some live in top-level folders of their own)."""
    modules: dict[str, Path] = {}
    packages: list[str] = [ROOT]
    seen_packages: set[str] = set()
    imports: dict[str, list[tuple[str, list[str]]]] = {}
    while packages:
        package = packages.pop()
        if package in seen_packages:
            continue
        seen_packages.add(package)
        found = _package_modules(package)
        modules.update(found)
        packages += _subpackages(package)
        for name, path in found.items():
            imports[name] = list(_imported_names(name, path))
            for base, names in imports[name]:
                for imported in [base, *(f"{base}.{n}" for n in names)]:
                    parts = imported.split(".")
                    for candidate in (".".join(parts[:i]) for i in range(2, len(parts) + 1)):
                        if parts[0] == ROOT and candidate not in seen_packages and _is_package(candidate):
                            packages.append(candidate)
    graph: dict[str, set[str]] = {}
    for name, statements in imports.items():
        targets: set[str] = set()
        for base, names in statements:
            submodules = [f"{base}.{n}" for n in names if f"{base}.{n}" in modules]
            targets.update(submodules)
            if not names or len(submodules) < len(names):
                targets.add(base)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One closed path (first module repeated at the end) through each group of modules that
    import each other (the strongly connected components with more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_closed_path(graph, group) for group in groups]


def _closed_path(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & group):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    raise AssertionError(f"no path back to {start} in {sorted(group)}")


def test_the_walk_finds_the_modules_of_every_top_level_folder() -> None:
    graph = import_graph()
    for module in [
        "coworkenv.cli",
        "coworkenv.state.workspace",
        "coworkenv.servers.mail.store",
        "coworkenv.verifiers.evaluate",
        "coworkenv.rollout.episode",
        "coworkenv.synth.families.workdays",
    ]:
        assert module in graph, module
    assert "coworkenv.servers.mail.store" in graph["coworkenv.servers.mail.tools_read"]
    assert "coworkenv.servers.toolkit" in graph["coworkenv.servers.mail.store"]


def test_a_cycle_is_named_as_a_closed_path() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": set()}
    assert cycles(graph) == [["a", "b", "c", "a"]]


def test_no_coworkenv_modules_import_each_other() -> None:
    found = [" -> ".join(path) for path in cycles(import_graph())]
    assert not found, "modules that import each other:\n" + "\n".join(found)
