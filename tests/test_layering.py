"""Dependencies point one way: metagraph <- backends <- components <- components.training.
The imports of every module of the three packages are read with `ast` (at any depth, inside
functions too: a lazy import is still a dependency) and checked against the layers, and the
graph of imports between modules must have no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("metagraph", "backends", "components")

# (prefix, layer): a module may import modules of its own layer or lower ones; the longest
# matching prefix decides a module's layer
LAYERS = [("metagraph", 0), ("backends", 1), ("components", 2), ("components.training", 3)]


def layer(module: str) -> int:
    matches = [(len(prefix), rank) for prefix, rank in LAYERS
               if module == prefix or module.startswith(prefix + ".")]
    return max(matches)[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


# compiled modules (CMakeLists.txt), which have no .py file in the source tree
NATIVE = ("components.envs.classic_control._tasks", "components.envs.mujoco._tasks",
          "components.envs.games._tasks", "components.envs.minatar._tasks")


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            found[module_name(path)] = path
    return found


def imports(path: Path, name: str, known: dict[str, Path]) -> set[str]:
    """The project modules `path` imports (for `from a import b`: a.b when it is a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, up level - 1
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known or sub in NATIVE else base)
    return {m for m in found if m.split(".")[0] in PACKAGES and m != name}


def import_graph() -> nx.DiGraph:
    known = modules()
    graph = nx.DiGraph()
    for name, path in known.items():
        graph.add_node(name)
        for target in imports(path, name, known):
            graph.add_edge(name, target)
    return graph


def test_no_module_imports_a_higher_layer():
    upward = sorted(f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})"
                    for a, b in import_graph().edges if layer(b) > layer(a))
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_backends_xla_and_eager_import_no_components():
    bad = sorted(f"{a} imports {b}" for a, b in import_graph().edges
                 if a.startswith(("backends.xla", "backends.eager"))
                 and b.startswith("components"))
    assert not bad, "\n".join(bad)


def test_the_search_depends_on_the_doors_interface_not_on_an_environment_module():
    """components.search models a game through a protocol (GameModel) that the environment's
    in-graph door satisfies: it imports nothing of components.envs (issue 54, part 3)."""
    bad = sorted(f"{a} imports {b}" for a, b in import_graph().edges
                 if a.startswith("components.search") and b.startswith("components.envs"))
    assert not bad, "\n".join(bad)


def test_no_cycle_between_modules():
    graph = import_graph()
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_checker_sees_what_it_must():
    """The walk itself: lazy imports inside functions count, and an upward one is found."""
    source = "def f():\n    from components.training import train\n"
    tree_imports = {n.module for n in ast.walk(ast.parse(source))
                    if isinstance(n, ast.ImportFrom)}
    assert tree_imports == {"components.training"}
    assert layer("metagraph.build") < layer("backends.xla") < layer("components.envs") \
        < layer("components.training.trainer")
    assert "metagraph.build" in import_graph()


def test_component_test_finds_the_backends_without_importing_them():
    from metagraph.testing import BACKENDS

    assert {"xla", "eager"} <= set(BACKENDS)
