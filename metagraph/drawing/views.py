"""What the explorer shows for one set of open components (a *view*), for laying views out ahead
of time: which components start open, which views are worth a layout, and which boxes and
edges a view draws.

A component is open (its APIs and sub-components drawn inside its box) or closed (one box
standing for everything inside). An API inside a closed component is drawn as that component's
box (the outermost closed one); the edges between two drawn boxes are merged by kind, one per
`(source box, target box, kind)`, keyed `source|target|kind` as the explorer keys them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from metagraph.drawing.model import Drawing

READABLE = 60  # the explorer opens as deep as keeps at most this many components drawn
MOST_LABEL_LINES = 2  # a merged edge's label: its first line, then "+N more"
LABEL_CHARS = 30  # a longer line of a label is cut (the panel and the tooltip show it whole)


@dataclasses.dataclass
class ViewEdge:
    """One drawn edge of a view: between two drawn boxes, of one kind, standing for the
    drawing's `edges` between what those boxes hold; `error` if one of them is the faulty edge."""

    source: str
    target: str
    kind: str
    error: bool = False
    lines: list[str] = dataclasses.field(default_factory=list)

    @property
    def key(self) -> str:
        """How the explorer names the drawn edge: `source|target|kind`."""
        return f"{self.source}|{self.target}|{self.kind}"

    def label(self) -> list[str]:
        """The label's lines as drawn: all of the faulty edge's, else at most
        `MOST_LABEL_LINES` (the first, then how many more), each cut at `LABEL_CHARS`."""
        if self.error:
            return self.lines
        lines = self.lines
        if len(lines) > MOST_LABEL_LINES:
            lines = [lines[0], f"+{len(lines) - 1} more"]
        return [line if len(line) <= LABEL_CHARS else line[: LABEL_CHARS - 1] + "…"
                for line in lines]


def key(open_components: Iterable[str]) -> str:
    """The name of a view: its open components, sorted, one a line (the explorer computes the
    same to find a view's layout)."""
    return "\n".join(sorted(open_components))


def ancestors(drawing: Drawing, scope: str) -> list[str]:
    """The components around `scope`, nearest first."""
    out, parent = [], drawing.clusters[scope].parent
    while parent is not None and parent in drawing.clusters:
        out.append(parent)
        parent = drawing.clusters[parent].parent
    return out


def initial_open(drawing: Drawing) -> set[str]:
    """The components the explorer starts with open: those at most `drawing.depth` deep (when
    not given: as deep as keeps at most `READABLE` components drawn), and every component around
    the faulty edge's two APIs."""
    depths = [c.depth for c in drawing.clusters.values()]
    start = drawing.depth
    if start is None:
        start = max(depths, default=0)
        while start > 0 and sum(d <= start + 1 for d in depths) > READABLE:
            start -= 1
    opened = {c.scope for c in drawing.clusters.values() if c.depth <= start}
    for edge in drawing.edges:
        if edge.error:
            for end in (edge.source, edge.target):
                node = drawing.nodes.get(end)
                if node is not None and node.cluster in drawing.clusters:
                    opened |= {node.cluster, *ancestors(drawing, node.cluster)}
    return opened


def candidates(drawing: Drawing, start: set[str], singles: int = 40) -> list[set[str]]:
    """The views worth laying out ahead: the first one, each depth level (what "expand all" and
    "collapse all" show among them), and for graphs of at most `singles` components the first
    view with any one component opened or closed."""
    views = [start]
    for depth in range(max((c.depth for c in drawing.clusters.values()), default=0) + 1):
        views.append({c.scope for c in drawing.clusters.values() if c.depth <= depth})
    if len(drawing.clusters) <= singles:
        for scope in drawing.clusters:
            views.append(start ^ {scope})
    unique: dict[str, set[str]] = {}
    for view in views:
        unique.setdefault(key(view), view)
    return list(unique.values())


def shown_as(drawing: Drawing, opened: set[str], api: str) -> str:
    """The drawn box that stands for `api` in the view: itself, or its outermost closed
    component."""
    node = drawing.nodes.get(api)
    if node is None or node.cluster not in drawing.clusters:
        return api
    for scope in [*reversed(ancestors(drawing, node.cluster)), node.cluster]:
        if scope not in opened:
            return scope
    return api


def boxes(drawing: Drawing, opened: set[str]) -> tuple[list[str], list[str], list[str]]:
    """The view's open components (drawn as boxes holding others), closed components (drawn
    as one box) and APIs drawn, each in the drawing's order."""
    drawn = [s for s, c in drawing.clusters.items()
             if all(a in opened for a in ancestors(drawing, s))]
    apis = [n.id for n in drawing.nodes.values()
            if n.cluster not in drawing.clusters or
            (n.cluster in opened and n.cluster in drawn)]
    return ([s for s in drawn if s in opened], [s for s in drawn if s not in opened], apis)


def edges(drawing: Drawing, opened: set[str]) -> list[ViewEdge]:
    """The view's drawn edges, merged by `(source box, target box, kind)`, in the drawing's
    order, each with the distinct lines of the labels it stands for."""
    merged: dict[tuple[str, str, str], ViewEdge] = {}
    for edge in drawing.edges:
        source, target = shown_as(drawing, opened, edge.source), shown_as(drawing, opened,
                                                                          edge.target)
        if source == target:
            continue
        view = merged.setdefault((source, target, edge.kind),
                                 ViewEdge(source, target, edge.kind))
        view.error = view.error or edge.error
        for line in edge.label.splitlines():
            if line and line not in view.lines:
                view.lines.append(line)
    return list(merged.values())
