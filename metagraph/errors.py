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
        the expected and the actual space (.svg, .png, .pdf or .dot by suffix).

        An error raised before any call was recorded (at an executor's input check, say)
        draws its edge alone: the caller, the called API and its component. An error that
        names no API (a bad `input_spaces` entry) has nothing to draw: MetaGraphError says so.
        """
        from metagraph.drawing import build_drawing, render
        from metagraph.drawing.model import leading_to, lone_edge

        if self.edge.callee is None:
            raise MetaGraphError(
                f"this SpaceError names no API, so there is no edge of the meta-graph to draw "
                f"(it was raised before any API was traced): {self}")
        graph = self.graph if self.graph is not None else lone_edge(self.edge)
        drawing = build_drawing(leading_to(graph, self.edge.callee), error=self,
                                rankdir=rankdir, title=f"SpaceError at {self.edge.callee}")
        return render(drawing, path)

    @classmethod
    def mismatch(cls, component: str, api: str, argument: str | None, expected: Any,
                 actual: Any, caller: str | None = None, hint: str = "") -> SpaceError:
        """A `SpaceError` saying `component.api(argument)` expected one space and got
        another (called from `caller`), plus `hint`."""
        where = f"{component}.{api}({argument})" if argument else f"{component}.{api} -> output"
        message = f"{where}: expected {expected}, got {actual}"
        if caller and caller != "input":
            message += f" (called from {caller})"
        if hint:
            message += f"; {hint}"
        return cls(message, component=component, api=api, argument=argument, expected=expected,
                   actual=actual, caller=caller)


class TraceError(MetaGraphError, TypeError):
    """An API's Python code cannot run on traced values: an `if` on an array (use `jnp.where`
    or `mg.cond`), NumPy on a traced array, a comparison of the symbolic batch dimension
    (build with `batch_size=n`), or an array kept on `self` between calls (keep it as state).
    The message names the component path (`component`), the API (`api`) and the fix; the JAX
    error, if any, is the `__cause__`."""

    def __init__(self, message: str, *, component: str | None = None, api: str | None = None):
        super().__init__(message)
        self.component, self.api = component, api


class StateError(MetaGraphError, LookupError):
    """State that is read but was never created, or an invalid `get_state` / `set_state`."""

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0]) if self.args else ""


class LoadError(MetaGraphError, ValueError):
    """A serialized executable or checkpoint that is corrupt or incompatible."""


class MissingExtraError(MetaGraphError, ImportError):
    """An optional dependency is not installed; the message names the project's extra that
    brings it (`pip install -e ".[games]"`) or the system package."""


class RuntimeCheckError(MetaGraphError, ValueError):
    """A value checked inside a running executable broke its API's contract (see
    `metagraph.runtime_checks`). The API's update was skipped; the state is intact."""
