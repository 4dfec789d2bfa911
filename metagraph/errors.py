"""The exceptions metagraph raises. Every message names the component path and the API."""

from __future__ import annotations

import dataclasses
from typing import Any


class MetaGraphError(Exception):
    """Base of every metagraph error."""


@dataclasses.dataclass(frozen=True)
class Edge:
    """The edge of the meta-graph where a space check failed.

    `caller` is the calling API node (`agent.act`), or `"input"` for a root API's argument;
    `callee` the called API node (`agent/policy.act`); `expected` and `actual` are spaces
    (or None when unknown).
    """

    caller: str | None
    callee: str | None
    argument: str | None
    expected: Any = None
    actual: Any = None


class SpaceError(MetaGraphError, ValueError):
    """A value does not fit the space it should have: wrong shape, dtype, structure, count of
    arguments, Python type, or a missing input space.

    Attributes: `edge` (an `Edge`), `graph` (the meta-graph recorded up to the failure, a
    networkx DiGraph, or None), and the parts of the edge as `component`, `api`, `argument`,
    `expected`, `actual`.
    """

    def __init__(self, message: str, *, component: str | None = None, api: str | None = None,
                 argument: str | None = None, expected: Any = None, actual: Any = None,
                 caller: str | None = None):
        super().__init__(message)
        self.component, self.api, self.argument = component, api, argument
        self.expected, self.actual = expected, actual
        callee = f"{component}.{api}" if component and api else None
        self.edge = Edge(caller, callee, argument, expected, actual)
        self.graph = None

    def draw(self, path: Any, rankdir: str = "LR") -> Any:
        """Draw the part of the meta-graph that leads to the faulty edge, that edge in red with
        the expected and the actual space (.svg, .png, .pdf or .dot by suffix)."""
        from metagraph.drawing import build_drawing, render
        from metagraph.drawing.model import leading_to

        if self.graph is None or self.edge.callee is None:
            raise MetaGraphError("this SpaceError has no recorded graph to draw")
        drawing = build_drawing(leading_to(self.graph, self.edge.callee), error=self,
                                rankdir=rankdir, title=f"SpaceError at {self.edge.callee}")
        return render(drawing, path)

    @classmethod
    def mismatch(cls, component: str, api: str, argument: str | None, expected: Any,
                 actual: Any, caller: str | None = None, hint: str = "") -> SpaceError:
        where = f"{component}.{api}({argument})" if argument else f"{component}.{api} -> output"
        message = f"{where}: expected {expected}, got {actual}"
        if caller and caller != "input":
            message += f" (called from {caller})"
        if hint:
            message += f"; {hint}"
        return cls(message, component=component, api=api, argument=argument, expected=expected,
                   actual=actual, caller=caller)


class StateError(MetaGraphError, LookupError):
    """State that is read but was never created, or an invalid `get_state` / `set_state`."""

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0]) if self.args else ""


class LoadError(MetaGraphError, ValueError):
    """A serialized executable or checkpoint that is corrupt or incompatible."""


class RuntimeCheckError(MetaGraphError, ValueError):
    """A value checked inside a running executable broke its API's contract (see
    `metagraph.runtime_checks`). The API's update was skipped; the state is intact."""
