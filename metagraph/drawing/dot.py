"""A `Drawing` as Graphviz DOT (built with the `graphviz` package): components are nested
clusters shaded by depth and labelled with their parameters and state, APIs are nodes inside
them, calls are labelled solid arrows and data flow dashed ones with open heads, coloured by
dtype."""

from __future__ import annotations

import shutil

import graphviz

from metagraph.drawing import style
from metagraph.drawing.model import Drawing


def have_graphviz() -> bool:
    """True if Graphviz's `dot` program is on the PATH."""
    return shutil.which("dot") is not None


def _cluster_name(scope: str) -> str:
    return f"cluster_{scope}"


def to_graphviz(drawing: Drawing) -> graphviz.Digraph:
    """`drawing` as a `graphviz.Digraph`: components as nested clusters, APIs as nodes, calls
    (solid) and data flow (dashed) as edges coloured by dtype."""
    dot = graphviz.Digraph("metagraph", graph_attr={
        "rankdir": drawing.rankdir, "fontname": "Helvetica", "fontsize": "11",
        "compound": "true", "label": drawing.title, "labelloc": "t"},
        node_attr={"fontname": "Helvetica", "fontsize": "10", "shape": "box",
                   "style": "rounded,filled", "fillcolor": style.API_FILL},
        edge_attr={"fontname": "Helvetica", "fontsize": "9"})

    def add_cluster(parent: graphviz.Digraph, scope: str | None) -> None:
        for node in drawing.nodes_in(scope):
            attrs = {"shape": "ellipse", "fillcolor": "#eeeeee"} if scope is None else {}
            parent.node(node.id, node.label, **attrs)
        for cluster in drawing.children(scope):
            with parent.subgraph(name=_cluster_name(cluster.scope)) as sub:
                sub.attr(label=cluster.label, style="rounded,filled",
                         fillcolor=style.depth_fill(cluster.depth), color="#8c96b4")
                add_cluster(sub, cluster.scope)

    add_cluster(dot, None)
    for edge in drawing.edges:
        attrs = {"id": "faulty_edge", "style": "bold"} if edge.error else {}
        if edge.kind == "data":  # data: dashed with an open arrowhead; calls: solid
            attrs = {"style": "dashed", "arrowhead": "empty", "class": "data"}
        dot.edge(edge.source, edge.target, label=edge.label, color=edge.color,
                 fontcolor=edge.color, penwidth="2.5" if edge.error else "1.2", **attrs)
    return dot


def to_dot(drawing: Drawing) -> str:
    """`drawing` as Graphviz DOT source text."""
    return to_graphviz(drawing).source
