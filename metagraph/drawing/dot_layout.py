"""Graphviz's own layout of the explorer's views: where `dot` is installed, each view (a set of
open components, `views.py`) is laid out by `dot` as the static drawing is, and the explorer
draws boxes, edge curves and edge labels where `dot` put them (`dot -Tjson0`, a few views
at a time). Where `dot` is missing or fails, there is no layout and the explorer packs boxes in
rows itself.

A view's graph: an open component is a cluster that holds, besides its APIs and components,
its title (name, then class, parameters and state) as an invisible node of the title's size.
A node without edges lies on its cluster's first rank, so the title is in the component's top
row (its left column when ranks run left to right), first in it, and `dot` routes the edges
around it as around any node: no edge runs across a title, which a cluster label does not
give (edges ran across those). Where that graph fails, the view is laid out again with the
titles as cluster labels. A closed component and an API are boxes of about the explorer's
size; edges carry the labels the explorer draws, so `dot` makes room for them beside the
curves. Coordinates come back in points with y up; the explorer's are pixels with y down
(12 px text is 12 pt here).
"""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import graphviz

from metagraph.drawing import views
from metagraph.drawing.dot import have_graphviz
from metagraph.drawing.model import Drawing
from metagraph.state_info import bytes_text

DPI = 72.0
API_HEIGHT = 22  # px, the explorer's API box (PILL_H)
HEAD = 38  # px, the explorer's component title (HEAD)
MOST_ITEMS = 400  # boxes and edges in one view; past this the explorer packs rows itself
TIMEOUT = 30  # seconds for one view
WORKERS = min(4, os.cpu_count() or 1)
SCREEN = (1000, 700)  # px: the explorer's drawing area on a laptop, beside its panel


def _title(drawing: Drawing, scope: str) -> str:
    """The component's title as the explorer writes it: name, then `class · N params · state`
    (the explorer's own text is measured by the browser; this one only sizes the room)."""
    cluster = drawing.clusters[scope]
    state = sum(row.nbytes for s, c in drawing.clusters.items()
                if s == scope or s.startswith(scope + "/") for row in c.state)
    meta = [cluster.cls]
    if cluster.params is not None:
        meta.append(f"{cluster.params:,} params")
    if state:
        meta.append(f"{bytes_text(state)} state")
    return f"{scope.rsplit('/', 1)[-1]}\n{' · '.join(meta)}"


def view_source(drawing: Drawing, opened: set[str], rankdir: str,
                title_nodes: bool = True) -> str:
    """The DOT text of one view, ranks running `rankdir` ("LR" or "TB"). An open component's
    title is an invisible node of the title's size on the component's first rank
    (`title_nodes`), or else its cluster's label."""
    open_scopes, closed, apis = views.boxes(drawing, opened)
    dot = graphviz.Digraph("view", graph_attr={
        "rankdir": rankdir, "fontname": "Helvetica", "fontsize": "12",
        "nodesep": "0.25", "ranksep": "0.45", "labeljust": "l", "labelloc": "t"},
        node_attr={"shape": "box", "fontname": "Helvetica", "fontsize": "12.5",
                   "height": f"{API_HEIGHT / DPI:.3f}", "margin": "0.16,0.02"},
        edge_attr={"fontname": "Helvetica", "fontsize": "10.5"})

    def add_title(scope: str, into: graphviz.Digraph) -> None:
        into.node(_title_node(scope), "", width=f"{_title_width(drawing, scope) / DPI:.3f}",
                  height=f"{HEAD / DPI:.3f}", fixedsize="true", style="invis")

    def add_cluster(scope: str | None, into: graphviz.Digraph) -> None:
        for api in apis:
            if drawing.nodes[api].cluster == scope or (
                    scope is None and drawing.nodes[api].cluster not in drawing.clusters):
                into.node(api, drawing.nodes[api].label)
        for child in drawing.children(scope):
            if child.scope in closed:  # the title and the toggle, as one box
                into.node(child.scope, "   " + _title(drawing, child.scope), fontsize="13",
                          width=f"{_title_width(drawing, child.scope) / DPI:.3f}",
                          height=f"{HEAD / DPI:.3f}")
            elif child.scope in open_scopes:
                with into.subgraph(name=f"cluster_{child.scope}") as sub:
                    sub.attr(margin="10")
                    if not title_nodes:
                        # three lines of 12 pt keep the explorer's 38 px title clear of the
                        # inside
                        sub.attr(label="     " + _title(drawing, child.scope) + "\n ",
                                 fontsize="12")
                    # a node without edges lies on its cluster's first rank; declared first
                    # (LR) or last (TB), dot puts it first there: top, or left
                    if title_nodes and rankdir == "LR":
                        add_title(child.scope, sub)
                    add_cluster(child.scope, sub)
                    if title_nodes and rankdir != "LR":
                        add_title(child.scope, sub)

    add_cluster(None, dot)
    for edge in views.edges(drawing, opened):
        # a little larger than the explorer draws them, for room around the curves
        dot.edge(edge.source, edge.target, label="\n".join(edge.label()), id=edge.key,
                 fontsize="14" if edge.error else "11")
    return dot.source


def _title_node(scope: str) -> str:
    """The name of an open component's title node (`|` is in no API's or component's name)."""
    return f"{scope}|title"


def _title_width(drawing: Drawing, scope: str) -> float:
    """The width of a component's title, in px: room for the explorer's toggle, bold 13 px
    name and 11 px class and sizes (its `headWidth`) at generous widths of a sans-serif font's
    letters (the explorer squeezes a wider text into it)."""
    name, meta = _title(drawing, scope).split("\n")
    return max(0.72 * 13 * len(name) + 34, 0.62 * 11 * len(meta) + 20, 110)


def _items(drawing: Drawing, opened: set[str]) -> int:
    """How many boxes and edges a view draws."""
    return sum(map(len, views.boxes(drawing, opened))) + len(views.edges(drawing, opened))


def _path(pos: str, height: float) -> str:
    """An edge's `pos` (`e,x,y x0,y0 x1,y1 ...`, a cubic B-spline) as an SVG path in the
    explorer's coordinates (`height` flips y), ending at the arrow's tip."""
    tip = None
    points = []
    for item in pos.split():
        parts = item.split(",")
        if parts[0] == "e":
            tip = [float(parts[1]), height - float(parts[2])]
        elif parts[0] != "s":
            points.append((float(parts[0]), height - float(parts[1])))
    path = f"M{points[0][0]:.1f},{points[0][1]:.1f}"
    for i in range(1, len(points) - 2, 3):
        (x1, y1), (x2, y2), (x3, y3) = points[i: i + 3]
        path += f" C{x1:.1f},{y1:.1f} {x2:.1f},{y2:.1f} {x3:.1f},{y3:.1f}"
    if tip is not None:
        path += f" L{tip[0]:.1f},{tip[1]:.1f}"
    return path


def _layout(result: dict[str, Any]) -> dict[str, Any]:
    """One view's `dot -Tjson0` output as the explorer reads it: `boxes` (id -> x, y, w, h
    of every component and API, top-left corner), `titles` (the same of each open component's
    title; none where its title was a cluster label), `edges` (key -> SVG path `d` and label
    centre `label`), `size`."""
    x0, y0, x1, y1 = (float(v) for v in result["bb"].split(","))
    height = y1
    boxes: dict[str, list[float]] = {}
    titles: dict[str, list[float]] = {}
    for obj in result.get("objects", []):
        if "bb" in obj and obj["name"].startswith("cluster_"):
            a, b, c, d = (float(v) for v in obj["bb"].split(","))
            boxes[obj["name"][len("cluster_"):]] = [a, height - d, c - a, d - b]
        elif "pos" in obj:
            x, y = (float(v) for v in obj["pos"].split(","))
            w, h = float(obj["width"]) * DPI, float(obj["height"]) * DPI
            name = obj["name"]
            into = titles if name.endswith("|title") else boxes
            into[name.removesuffix("|title")] = [x - w / 2, height - y - h / 2, w, h]
    edges = {}
    for edge in result.get("edges", []):
        if "id" not in edge or "pos" not in edge:
            continue  # not routed: the explorer draws its own curve
        path = _path(edge["pos"], height)
        label = None
        if "lp" in edge:
            x, y = (float(v) for v in edge["lp"].split(","))
            label = [x, height - y]
        edges[edge["id"]] = {"d": path, "label": label}
    return {"boxes": boxes, "titles": titles, "edges": edges, "size": [x1 - x0, y1 - y0]}


def layouts(drawing: Drawing, opened: list[set[str]]) -> dict[str, dict[str, Any]]:
    """`dot`'s layout of each view in `opened` (sets of open components; the first is the view
    the explorer opens with), by view key (`views.key`): empty without Graphviz or if `dot`
    fails, and without the views too large to lay out quickly (more than `MOST_ITEMS` boxes and
    edges). Ranks run left to right or top to bottom, whichever shows the first view larger
    on a screen (`SCREEN`)."""
    if not have_graphviz():
        return {}
    wanted = [view for view in opened if _items(drawing, view) <= MOST_ITEMS]
    if not wanted:
        return {}
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        first = dict(zip(("LR", "TB"), pool.map(
            lambda rankdir: _laid_out(drawing, wanted[0], rankdir),
            ("LR", "TB")), strict=True))
        rankdir = max(first, key=lambda r: _screen_scale(first[r]))
        rest = list(pool.map(lambda view: _laid_out(drawing, view, rankdir), wanted[1:]))
    results = [first[rankdir], *rest]
    return {views.key(view): _layout(result)
            for view, result in zip(wanted, results, strict=True) if result is not None}


def _laid_out(drawing: Drawing, opened: set[str], rankdir: str) -> dict[str, Any] | None:
    """`dot`'s layout of one view with each open component's title a node of its own, or with
    the titles as cluster labels where that fails; None where both fail."""
    return (_run_dot(view_source(drawing, opened, rankdir)) or
            _run_dot(view_source(drawing, opened, rankdir, title_nodes=False)))


def _screen_scale(result: dict[str, Any] | None) -> float:
    """How large a laid-out view shows when fitted to `SCREEN` (0 for no layout)."""
    if result is None:
        return 0.0
    x0, y0, x1, y1 = (float(v) for v in result["bb"].split(","))
    return min(SCREEN[0] / max(x1 - x0, 1.0), SCREEN[1] / max(y1 - y0, 1.0))


def _run_dot(source: str) -> dict[str, Any] | None:
    """`dot -Tjson0` of one graph (one process per graph: some Graphviz versions crash on a
    second graph in one input), or None if it fails."""
    try:
        done = subprocess.run(["dot", "-Tjson0"], input=source, text=True,
                              capture_output=True, timeout=TIMEOUT, check=True)
        return json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
