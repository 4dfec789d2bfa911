"""The meta-graph's schema: what every node and edge of `MetaGraph.nx` carries, as typed records.

`graph.nx` stays a plain networkx `DiGraph` whose attribute dicts hold these fields under their
names (`graph.nx.edges[u, v]["args"]`), so networkx users and tools read it as before. Inside
the library the attributes are written and read only through the records declared here:

- nodes: `InputNode` (`"input"`, the graph's input), `ComponentNode` (one per component, by
  scope path), `ApiNode` (one per API, named `path.api`);
- edges: `ContainsEdge` (component -> sub-component or API), `CallEdge` (caller API -> callee
  API; it may carry data `flows` too), `DataEdge` (producer -> consumer of a value).

A record is a typed view of the attribute dict networkx stores: reading a field reads the dict,
setting it writes the dict, so the recorder can update a record while it traces. `Record.add`
writes a new node or edge with every declared field (defaults filled in, unknown names refused);
`node(graph, n)` and `edge(graph, u, v)` read one back as the record of its `kind`;
`nodes_of(graph, ApiNode)` and `edges_of(graph, CallEdge)` iterate one kind.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any, ClassVar, TypeVar

import networkx as nx

from metagraph.state_info import StateEntry

INPUT = "input"  # the node of the graph's inputs

R = TypeVar("R", bound="Record")


@dataclasses.dataclass(frozen=True)
class Flow:
    """One value that went from a producer to an API call.

    `output` is where it was in the producer's output (`""` the whole output, `"['obs']"`,
    `"[0]"`; for the graph's input, the root argument's name, `"obs"`), `argument` where it
    went in the call (`"obs"`, `"batch['obs']"`) and `space` its space.
    """

    output: str
    argument: str
    space: Any

    def __str__(self) -> str:
        return f"{self.output or 'output'} -> {self.argument}: {self.space}"


@dataclasses.dataclass(frozen=True)
class SourceLocation:
    """Where an API is defined: `file`, first `line`, and `qualname` (`module.Class.method`)."""

    file: str
    line: int
    qualname: str

    @classmethod
    def of(cls, fn: Any) -> SourceLocation:
        """The location of function `fn` (unwrapped)."""
        fn = inspect.unwrap(fn)
        code = getattr(fn, "__code__", None)
        return cls(code.co_filename if code else "?", code.co_firstlineno if code else 0,
                   f"{fn.__module__}.{fn.__qualname__}")

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class Record:
    """A typed view of one node's or edge's attribute dict.

    A subclass names its `kind` and declares its fields as class annotations; a field's default
    is the class attribute of that name (a list or dict default is copied for each record).
    """

    kind: ClassVar[str]
    _fields: ClassVar[dict[str, Any]]  # name -> default (`_REQUIRED` when there is none)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = [name for name, hint in inspect.get_annotations(cls).items()
                 if not str(hint).startswith("ClassVar")]
        cls._fields = {name: cls.__dict__.get(name, _REQUIRED) for name in names}
        for name in names:  # the defaults live in `_fields`; reads go to the dict
            if name in cls.__dict__:
                delattr(cls, name)

    def __init__(self, attrs: MutableMapping[str, Any]):
        if attrs.get("kind") != self.kind:
            raise TypeError(f"{type(self).__name__}: attributes of kind {attrs.get('kind')!r}, "
                            f"not {self.kind!r}")
        object.__setattr__(self, "attrs", attrs)

    def __getattr__(self, name: str) -> Any:
        fields = type(self)._fields
        if name not in fields:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}; its fields: "
                                 f"{list(fields)}")
        if name not in self.attrs:  # a graph written before the field existed
            default = fields[name]
            return None if default is _REQUIRED else copy.copy(default)
        return self.attrs[name]

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in type(self)._fields:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}")
        self.attrs[name] = value

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in type(self)._fields)
        return f"{type(self).__name__}({fields})"

    @classmethod
    def fields(cls, /, **given: Any) -> dict[str, Any]:
        """The attribute dict of a new record: `given`, defaults for the rest, and `kind`."""
        unknown = set(given) - set(cls._fields)
        if unknown:
            raise TypeError(f"{cls.__name__}: unknown fields {sorted(unknown)}; its fields: "
                            f"{list(cls._fields)}")
        missing = [k for k, v in cls._fields.items() if v is _REQUIRED and k not in given]
        if missing:
            raise TypeError(f"{cls.__name__}: missing fields {missing}")
        attrs = {k: copy.copy(v) for k, v in cls._fields.items() if k not in given}
        return {"kind": cls.kind, **attrs, **given}


class NodeRecord(Record):
    """A record stored on a node."""

    @classmethod
    def add(cls: type[R], graph: nx.DiGraph, node: str, /, **given: Any) -> R:
        """Add `node` to `graph` with this record's fields; returns its record."""
        graph.add_node(node, **cls.fields(**given))
        return cls(graph.nodes[node])


class EdgeRecord(Record):
    """A record stored on an edge."""

    @classmethod
    def add(cls: type[R], graph: nx.DiGraph, source: str, target: str, /,
            **given: Any) -> R:
        """Add the edge `source -> target` to `graph` with this record's fields; returns its
        record."""
        graph.add_edge(source, target, **cls.fields(**given))
        return cls(graph.edges[source, target])


class _Required:
    def __repr__(self) -> str:
        return "<required>"


_REQUIRED = _Required()


# ---- nodes ------------------------------------------------------------------------------------
class InputNode(NodeRecord):
    """The graph's input: the root APIs' arguments come from here."""

    kind = "input"


class ComponentNode(NodeRecord):
    """A component, named by its scope path (`agent/policy`): its class name, nesting depth,
    parent path (None at the root), its own parameter count, and its own state arrays with
    their total bytes and scalars (`state` is None until the build succeeded)."""

    kind = "component"
    cls: str
    depth: int
    parent: str | None
    params: int = 0
    state: list[StateEntry] | None = None
    state_bytes: int = 0
    state_size: int = 0


class ApiNode(NodeRecord):
    """An API of a component, named `path.api`: the spaces of its first call's arguments
    (`inputs`, argument name -> space) and result (`outputs`), and where it is defined."""

    kind = "api"
    component: str
    api: str
    inputs: dict[str, Any] = {}
    outputs: Any = None
    source: SourceLocation | None = None

    @property
    def is_root(self) -> bool:
        """Whether this is an API of the root component."""
        return "/" not in self.component


# ---- edges ------------------------------------------------------------------------------------
class ContainsEdge(EdgeRecord):
    """A component holds a sub-component or an API."""

    kind = "contains"


class CallEdge(EdgeRecord):
    """A call from a caller API (or the input) to a callee API: `args` (argument name -> space)
    and `returns` of its first call, `calls` how many, `signatures` every distinct
    `(args, returns)` pair of them (each one call's input and output), `flows` the values it
    carried that the caller got from another API, and `error`, the `SpaceError` raised on it."""

    kind = "call"
    args: dict[str, Any] = {}
    returns: Any = None
    calls: int = 1
    signatures: list[tuple[dict[str, Any], Any]] = []
    flows: list[Flow] = []
    error: Any = None


class DataEdge(EdgeRecord):
    """Values one API (or the input) produced and another API consumed (`flows`)."""

    kind = "data"
    flows: list[Flow] = []
    error: Any = None


NODE_TYPES: dict[str, type[NodeRecord]] = {t.kind: t for t in (InputNode, ComponentNode, ApiNode)}
EDGE_TYPES: dict[str, type[EdgeRecord]] = {t.kind: t for t in (ContainsEdge, CallEdge, DataEdge)}


def node(graph: nx.DiGraph, name: str) -> NodeRecord:
    """The record of node `name`, of the type its `kind` names."""
    attrs = graph.nodes[name]
    return NODE_TYPES[attrs["kind"]](attrs)


def edge(graph: nx.DiGraph, source: str, target: str) -> EdgeRecord:
    """The record of the edge `source -> target`, of the type its `kind` names."""
    attrs = graph.edges[source, target]
    return EDGE_TYPES[attrs["kind"]](attrs)


def nodes_of(graph: nx.DiGraph, kind: type[R]) -> Iterator[tuple[str, R]]:
    """`(name, record)` of every node of record type `kind`, in the graph's order."""
    for name, attrs in graph.nodes(data=True):
        if attrs.get("kind") == kind.kind:
            yield name, kind(attrs)


def edges_of(graph: nx.DiGraph, *kinds: type[R]) -> Iterator[tuple[str, str, R]]:
    """`(source, target, record)` of every edge of one of the record types `kinds`."""
    wanted: dict[str, Callable[[Any], Any]] = {k.kind: k for k in kinds}
    for u, v, attrs in graph.edges(data=True):
        make = wanted.get(attrs.get("kind"))
        if make is not None:
            yield u, v, make(attrs)
