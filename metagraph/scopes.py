"""Scopes: the path of every component inside one graph (`agent/policy`).

A scope is a fact about a graph, not about a component: the same component object can be part
of several graphs (alone in a `ComponentTest`, inside an agent, inside a second agent), with a
different path in each. `mg.build` makes one `Scopes` per graph; the graph hands it to every
`Frame` it runs (trace, `init_state`, `pure`), and the `@api` wrapper and the state accessors
read a component's path from the active frame's `Scopes`, so building a component into a
second graph never changes how the first graph runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from metagraph.errors import MetaGraphError


class Scopes:
    """Component -> path for every component reachable from `root` through attributes (and
    lists, tuples and dicts of components). A component reached twice (shared) keeps its first
    path. `components` maps path -> component, parents before children."""

    def __init__(self, root: Any):
        self.root = root
        self.components: dict[str, Any] = {}
        self._paths: dict[int, str] = {}  # id(component) -> path; `components` keeps them alive
        self._visit(root, root.name)

    def _visit(self, component: Any, path: str) -> None:
        if id(component) in self._paths:
            return
        self._paths[id(component)] = path
        self.components[path] = component
        for name, child in component.sub_components():
            self._visit(child, f"{path}/{name}")

    def of(self, component: Any) -> str:
        """The path of `component` in this graph; MetaGraphError if it is not part of it."""
        path = self._paths.get(id(component))
        if path is None:
            raise MetaGraphError(
                f"{type(component).__name__} '{component.name}' is not part of the graph of "
                f"'{self.root.name}': a component whose APIs or state the graph uses must be "
                f"reachable from the root as an attribute (or in a list or dict attribute) of a "
                f"component of the graph; a `link` alone does not add it")
        return path

    def __contains__(self, component: Any) -> bool:
        return id(component) in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self.components)

    def __len__(self) -> int:
        return len(self.components)
