"""What a drawing shows, independent of who lays it out: clusters (components), nodes (APIs),
edges (calls), after the options (depth limit, focus on one API, parameter counts) and an
optional highlighted (faulty) edge."""

from __future__ import annotations

import dataclasses
from typing import Any

import networkx as nx

from metagraph.drawing import style

INPUT = "input"


@dataclasses.dataclass
class Cluster:
    """A component drawn as a box: its scope, label, nesting depth and parent scope."""
    scope: str
    label: str
    depth: int
    parent: str | None


@dataclasses.dataclass
class Node:
    """An API drawn as a node inside its component's cluster."""
    id: str
    label: str
    cluster: str | None  # None for the graph's input


@dataclasses.dataclass
class Edge:
    """A call drawn as an arrow, labelled with the spaces that flowed; `error` marks the faulty
    edge."""
    source: str
    target: str
    label: str
    color: str
    error: bool = False


@dataclasses.dataclass
class Drawing:
    """Everything a layout engine needs: clusters, nodes, edges, direction and title."""
    clusters: dict[str, Cluster]
    nodes: dict[str, Node]
    edges: list[Edge]
    rankdir: str = "LR"
    title: str = ""

    def children(self, scope: str | None) -> list[Cluster]:
        """The clusters directly inside `scope` (None: the top level)."""
        return [c for c in self.clusters.values() if c.parent == scope]

    def nodes_in(self, scope: str | None) -> list[Node]:
        """The nodes directly inside the cluster `scope` (None: the top level)."""
        return [n for n in self.nodes.values() if n.cluster == scope]


def build_drawing(graph: nx.DiGraph, *, depth: int | None = None, focus: str | None = None,
                  params: dict[str, int] | None = None, rankdir: str = "LR",
                  error: Any = None, title: str = "") -> Drawing:
    """`graph` is a meta-graph's networkx graph. `depth` collapses components deeper than it
    into their ancestor (0 shows the root only), `focus` keeps only what root API `focus`
    reaches, `params` maps scopes to parameter counts to show, `error` a SpaceError whose edge
    is drawn in red with the expected and actual spaces."""
    if rankdir not in ("LR", "TB"):
        raise ValueError(f"drawing: rankdir must be 'LR' or 'TB', got {rankdir!r}")
    calls = [(u, v, d) for u, v, d in graph.edges(data=True) if d.get("kind") == "call"]
    if focus is not None:
        roots = [n for n, d in graph.nodes(data=True)
                 if d.get("kind") == "api" and n.rsplit(".", 1)[-1] == focus
                 and graph.nodes[n]["component"].count("/") == 0]
        if not roots:
            apis = sorted(n for n, d in graph.nodes(data=True) if d.get("kind") == "api"
                          and graph.nodes[n]["component"].count("/") == 0)
            raise ValueError(f"drawing: no root API {focus!r}; root APIs: {apis}")
        call_graph = nx.DiGraph([(u, v) for u, v, _ in calls])
        keep = {roots[0]} | nx.descendants(call_graph, roots[0])
        calls = [(u, v, d) for u, v, d in calls if v in keep and (u in keep or u == INPUT)]

    def visible_scope(scope: str) -> str:
        if depth is None:
            return scope
        return "/".join(scope.split("/")[: depth + 1])

    def node_of(api_node: str) -> str:
        if api_node == INPUT:
            return INPUT
        data = graph.nodes[api_node]
        scope = visible_scope(data["component"])
        return api_node if scope == data["component"] else f"{scope}.*"

    error_pair = None
    if error is not None and getattr(error, "edge", None) is not None:
        error_pair = (error.edge.caller or INPUT, error.edge.callee)

    nodes: dict[str, Node] = {}
    edges: dict[tuple[str, str], Edge] = {}
    used_scopes: set[str] = set()
    for u, v, data in calls:
        su, sv = node_of(u), node_of(v)
        for original, shown in ((u, su), (v, sv)):
            if shown in nodes:
                continue
            if shown == INPUT:
                nodes[shown] = Node(INPUT, "input", None)
                continue
            scope = shown.rsplit(".", 1)[0]
            label = graph.nodes[original]["api"] if not shown.endswith(".*") else "collapsed:"
            nodes[shown] = Node(shown, label, scope)
            used_scopes.add(scope)
        if su == sv:
            continue  # a call inside a collapsed component
        is_error = error_pair is not None and (u, v) == error_pair
        args, returns = data.get("args", {}), data.get("returns")
        label = style.edge_label(args, returns)
        if is_error:
            label = (f"{error.edge.argument or 'output'}: expected "
                     f"{style.short(error.edge.expected)}\ngot {style.short(error.edge.actual)}")
        color = style.ERROR_COLOR if is_error else style.KIND_COLORS[style.edge_kind(args)]
        if (su, sv) in edges and not is_error:
            continue
        edges[(su, sv)] = Edge(su, sv, label, color, is_error)

    for node in nodes.values():  # name what a collapsed node stands for
        if node.id.endswith(".*"):
            hidden = sorted({graph.nodes[v]["component"].split("/")[depth + 1]
                             for _, v, _ in calls
                             if graph.nodes[v]["component"].startswith(node.cluster + "/")})
            node.label = "collapsed: " + ", ".join(hidden)
    clusters: dict[str, Cluster] = {}
    for scope in sorted(used_scopes):
        parts = scope.split("/")
        for i in range(1, len(parts) + 1):  # the scope and all its ancestors
            path = "/".join(parts[:i])
            if path in clusters or path not in graph:
                continue
            data = graph.nodes[path]
            label = f"{parts[i - 1]}: {data.get('cls', '')}"
            if params is not None:
                label += f"\n{params.get(path, 0):,} params"
            clusters[path] = Cluster(path, label, i - 1, "/".join(parts[: i - 1]) or None)
    return Drawing(clusters, nodes, list(edges.values()), rankdir, title)


def leading_to(graph: nx.DiGraph, node: str) -> nx.DiGraph:
    """The sub-graph of calls that lead to `node` (its callers, their callers, ...) and the
    other calls those callers made (where a wrong value came from), with the components that
    hold them."""
    calls = nx.DiGraph([(u, v) for u, v, d in graph.edges(data=True) if d.get("kind") == "call"])
    if node not in calls:
        return graph.subgraph({node}).copy()
    callers = nx.ancestors(calls, node)
    keep = {node} | callers | {v for u in callers for v in calls.successors(u)}
    components = {n for n, d in graph.nodes(data=True) if d.get("kind") == "component"}
    return graph.subgraph(keep | components).copy()


def lone_edge(edge: Any) -> nx.DiGraph:
    """A meta-graph of one call, for an error raised with no recorded graph: the caller (or
    the input), the called API `edge.callee` (`path.api`) and its component."""
    path, api = edge.callee.rsplit(".", 1)
    caller = edge.caller or INPUT
    graph = nx.DiGraph()
    graph.add_node(path, kind="component", cls="", depth=path.count("/"), parent=None)
    graph.add_node(edge.callee, kind="api", component=path, api=api)
    if caller == INPUT:
        graph.add_node(INPUT, kind="input")
    else:
        caller_path, caller_api = caller.rsplit(".", 1)
        graph.add_node(caller_path, kind="component", cls="", depth=caller_path.count("/"),
                       parent=None)
        graph.add_node(caller, kind="api", component=caller_path, api=caller_api)
    graph.add_edge(caller, edge.callee, kind="call", args={}, returns=None)
    return graph
