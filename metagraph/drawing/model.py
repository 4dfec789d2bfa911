"""What a drawing shows, independent of who lays it out: clusters (components, with their
parameters and state), nodes (APIs, with their spaces, source and cost), edges (calls and data
flow), after the options (depth limit, focus on one API, parameters and state) and an optional
highlighted (faulty) edge. Graphviz, matplotlib and the HTML explorer all draw a `Drawing`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import networkx as nx

from metagraph import schema
from metagraph.drawing import style
from metagraph.schema import (
    INPUT,
    ApiNode,
    CallEdge,
    ComponentNode,
    DataEdge,
    InputNode,
    SourceLocation,
)
from metagraph.state_info import StateEntry


@dataclasses.dataclass
class Cluster:
    """A component drawn as a box: its scope, label, nesting depth and parent scope; its
    class, parameters (with those inside it; None when not shown) and own state arrays."""
    scope: str
    label: str
    depth: int
    parent: str | None
    cls: str = ""
    params: int | None = None
    state: list[StateEntry] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Node:
    """An API drawn as a node inside its component's cluster (`cluster` None: the graph's
    input), with the spaces of its first call, where it is defined and, for a root API
    lowered by a backend, its cost."""
    id: str
    label: str
    cluster: str | None  # None for the graph's input
    inputs: dict[str, str] = dataclasses.field(default_factory=dict)
    outputs: str = ""
    source: SourceLocation | None = None
    cost: Mapping[str, Any] | None = None


@dataclasses.dataclass
class Edge:
    """A call (`kind="call"`) or a data flow (`kind="data"`) drawn as an arrow, labelled with
    the spaces that flowed; `details` has one full line per distinct call or flow; `error`
    marks the faulty edge."""
    source: str
    target: str
    label: str
    color: str
    error: bool = False
    kind: str = "call"
    details: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Drawing:
    """Everything a layout engine needs: clusters, nodes, edges, direction and title; `depth`
    is where the interactive explorer starts collapsed (None: all open)."""
    clusters: dict[str, Cluster]
    nodes: dict[str, Node]
    edges: list[Edge]
    rankdir: str = "LR"
    title: str = ""
    depth: int | None = None

    def children(self, scope: str | None) -> list[Cluster]:
        """The clusters directly inside `scope` (None: the top level)."""
        return [c for c in self.clusters.values() if c.parent == scope]

    def nodes_in(self, scope: str | None) -> list[Node]:
        """The nodes directly inside the cluster `scope` (None: the top level)."""
        return [n for n in self.nodes.values() if n.cluster == scope]


def build_drawing(graph: nx.DiGraph, *, depth: int | None = None, focus: str | None = None,
                  show_params: bool = True, rankdir: str = "LR", error: Any = None,
                  title: str = "", data: bool = True,
                  costs: Mapping[str, Mapping[str, Any]] | None = None,
                  collapse: bool = True) -> Drawing:
    """`graph` is a meta-graph's networkx graph. `depth` collapses components deeper than it
    into their ancestor (0 shows the root only; with `collapse=False` every component is kept
    and `depth` only says where an interactive view starts collapsed), `focus` keeps only what
    root API `focus` reaches, `show_params` shows parameter counts and state, `data` the
    data-flow edges, `costs` maps root API names to their costs, `error` a SpaceError whose
    edge is drawn in red with the expected and actual spaces."""
    if rankdir not in ("LR", "TB"):
        raise ValueError(f"drawing: rankdir must be 'LR' or 'TB', got {rankdir!r}")
    calls = list(schema.edges_of(graph, CallEdge))
    flows = [(u, v, e.flows) for u, v, e in schema.edges_of(graph, CallEdge, DataEdge)
             if data and e.flows]
    apis = dict(schema.nodes_of(graph, ApiNode))
    roots = sorted(n for n, a in apis.items() if a.is_root)
    if focus is not None:
        start = [n for n in roots if n.rsplit(".", 1)[-1] == focus]
        if not start:
            raise ValueError(f"drawing: no root API {focus!r}; root APIs: {roots}")
        keep = {start[0]} | nx.descendants(nx.DiGraph([(u, v) for u, v, _ in calls]), start[0])
        calls = [(u, v, d) for u, v, d in calls if v in keep and (u in keep or u == INPUT)]
        flows = [(u, v, f) for u, v, f in flows if v in keep and (u in keep or u == INPUT)]

    collapsed = depth if collapse else None

    def node_of(api_node: str) -> str:
        if api_node == INPUT:
            return INPUT
        scope = apis[api_node].component
        shown = scope if collapsed is None else "/".join(scope.split("/")[: collapsed + 1])
        return api_node if shown == scope else f"{shown}.*"

    error_pair = None
    if error is not None and getattr(error, "edge", None) is not None:
        error_pair = (error.edge.caller or INPUT, error.edge.callee)

    nodes: dict[str, Node] = {}
    used_scopes: set[str] = set()

    def add_node(original: str) -> str:
        shown = node_of(original)
        if shown in nodes:
            return shown
        if shown == INPUT:
            nodes[shown] = Node(INPUT, "input", None)
            return shown
        scope = shown.rsplit(".", 1)[0]
        used_scopes.add(scope)
        if shown.endswith(".*"):
            nodes[shown] = Node(shown, "collapsed:", scope)
            return shown
        info = apis[original]
        cost = costs.get(info.api) if costs and original in roots else None
        nodes[shown] = Node(shown, info.api, scope,
                            {k: style.short(v) for k, v in (info.inputs or {}).items()},
                            style.short(info.outputs), info.source, cost)
        return shown

    edges: dict[tuple[str, str, str], Edge] = {}
    for u, v, call in calls:
        su, sv = add_node(u), add_node(v)
        if su == sv:
            continue  # a call inside a collapsed component
        is_error = error_pair is not None and (u, v) == error_pair
        args, returns = call.args or {}, call.returns
        label = style.edge_label(args, returns)
        if is_error:
            label = (f"{error.edge.argument or 'output'}: expected "
                     f"{style.short(error.edge.expected)}\ngot {style.short(error.edge.actual)}")
        color = style.ERROR_COLOR if is_error else style.KIND_COLORS[style.edge_kind(args)]
        details = [style.signature_text(a, r) for a, r in call.signatures or [(args, returns)]]
        if (su, sv, "call") in edges and not is_error:
            edges[(su, sv, "call")].details.extend(details)
            continue
        edges[(su, sv, "call")] = Edge(su, sv, label, color, is_error, "call", details)
    for u, v, found in flows:
        su, sv = add_node(u), add_node(v)
        if su == sv:
            continue
        lines = [style.flow_text(u == INPUT, f) for f in found]
        kinds = {style.kind_of(f.space) for f in found}
        color = style.KIND_COLORS[kinds.pop() if len(kinds) == 1 else "container"]
        details = [style.flow_text(u == INPUT, f, full=True) for f in found]
        edge = edges.setdefault((su, sv, "data"), Edge(su, sv, "", color, False, "data", []))
        edge.details.extend(details)
        edge.label = style.clip_lines([*edge.label.splitlines(), *lines])

    for node in nodes.values():  # name what a collapsed node stands for
        if node.id.endswith(".*"):
            hidden = sorted({apis[v].component.split("/")[collapsed + 1]
                             for _, v, _ in calls
                             if apis[v].component.startswith(node.cluster + "/")})
            node.label = "collapsed: " + ", ".join(hidden)
    if not collapse:  # the explorer shows every component, with or without calls
        used_scopes.update(n for n, _ in schema.nodes_of(graph, ComponentNode))
    clusters: dict[str, Cluster] = {}
    order = {n: i for i, n in enumerate(graph.nodes)}  # parents first, attributes in order
    for scope in sorted(used_scopes, key=lambda s: order.get(s, len(order))):
        parts = scope.split("/")
        for i in range(1, len(parts) + 1):  # the scope and all its ancestors
            path = "/".join(parts[:i])
            if path in clusters or path not in graph:
                continue
            info = ComponentNode(graph.nodes[path])
            known = show_params and info.state is not None  # None in a failed build's graph
            params = _params(graph, path) if known else None
            state = list(info.state) if known else []
            label = style.cluster_label(parts[i - 1], info.cls or "", params, state)
            clusters[path] = Cluster(path, label, i - 1, "/".join(parts[: i - 1]) or None,
                                     info.cls or "", params, state)
    return Drawing(clusters, nodes, list(edges.values()), rankdir, title, depth)


def _params(graph: nx.DiGraph, path: str) -> int:
    """Parameters of the component `path` and the components inside it."""
    return sum(row.size for n, c in schema.nodes_of(graph, ComponentNode)
               if n == path or n.startswith(path + "/") for row in c.state or [] if row.trainable)


def leading_to(graph: nx.DiGraph, node: str) -> nx.DiGraph:
    """The sub-graph of calls that lead to `node` (its callers, their callers, ...) and the
    other calls those callers made (where a wrong value came from), with the components that
    hold them."""
    calls = nx.DiGraph([(u, v) for u, v, _ in schema.edges_of(graph, CallEdge)])
    if node not in calls:
        return graph.subgraph({node}).copy()
    callers = nx.ancestors(calls, node)
    keep = {node} | callers | {v for u in callers for v in calls.successors(u)}
    components = {n for n, _ in schema.nodes_of(graph, ComponentNode)}
    return graph.subgraph(keep | components).copy()


def lone_edge(edge: Any) -> nx.DiGraph:
    """A meta-graph of one call, for an error raised with no recorded graph: the caller (or
    the input), the called API `edge.callee` (`path.api`) and its component."""
    path, api = edge.callee.rsplit(".", 1)
    caller = edge.caller or INPUT
    graph = nx.DiGraph()
    ComponentNode.add(graph, path, cls="", depth=path.count("/"), parent=None)
    ApiNode.add(graph, edge.callee, component=path, api=api)
    if caller == INPUT:
        InputNode.add(graph, INPUT)
    else:
        caller_path, caller_api = caller.rsplit(".", 1)
        ComponentNode.add(graph, caller_path, cls="", depth=caller_path.count("/"), parent=None)
        ApiNode.add(graph, caller, component=caller_path, api=caller_api)
    CallEdge.add(graph, caller, edge.callee, calls=0)
    return graph
