"""Drawing without Graphviz: a nested-box layout drawn with matplotlib (SVG, PNG or PDF).

Each component is a box holding a row of its APIs and, below it, its sub-components side by
side; calls are solid arrows between API boxes with their labels, data flow dashed ones.
Cruder than Graphviz's layout but always available. SVG text stays text (searchable), and
every element carries an id: `cluster_<scope>`, `api_<node>`, `call_<source>-><target>`,
`data_<source>-><target>`.
"""

from __future__ import annotations

import dataclasses

from metagraph.drawing import style
from metagraph.drawing.model import Drawing

NODE_W, NODE_H, GAP, PAD, HEADER, LINE, CHAR_W = 1.6, 0.5, 0.4, 0.25, 0.55, 0.16, 0.075


@dataclasses.dataclass
class Box:
    """A laid-out rectangle: lower-left corner (`x`, `y`), width `w` and height `h`."""
    x: float
    y: float
    w: float
    h: float


def _layout(drawing: Drawing, scope: str | None, x: float, y: float,
            boxes: dict[str, Box], nodes: dict[str, Box]) -> Box:
    """Place `scope`'s APIs and sub-components with the top-left corner at (x, y); y grows
    downwards. Returns the box of the scope."""
    lines = drawing.clusters[scope].label.count("\n") if scope is not None else 0
    header = HEADER + LINE * lines if scope is not None else 0.0
    cx, cy = x + PAD, y + PAD + header
    row = drawing.nodes_in(scope)
    for i, node in enumerate(row):
        nodes[node.id] = Box(cx + i * (NODE_W + GAP), cy, NODE_W, NODE_H)
    width = len(row) * (NODE_W + GAP) - (GAP if row else 0)
    height = NODE_H if row else 0.0
    sx, sy = cx, cy + (NODE_H + GAP if row else 0.0)
    child_h = 0.0
    for child in drawing.children(scope):
        box = _layout(drawing, child.scope, sx, sy, boxes, nodes)
        sx += box.w + GAP
        child_h = max(child_h, box.h)
    if child_h:
        width = max(width, sx - GAP - cx)
        height = (sy - cy) + child_h
    if scope is not None:  # wide enough for the label's longest line
        longest = max(len(line) for line in drawing.clusters[scope].label.splitlines())
        width = max(width, CHAR_W * longest)
    box = Box(x, y, width + 2 * PAD, height + 2 * PAD + header)
    if scope is not None:
        boxes[scope] = box
    return box


def render(drawing: Drawing, path: str, fmt: str) -> None:
    """Draw `drawing` with matplotlib into `path` in format `fmt` (used when Graphviz's `dot` is
    missing)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    boxes: dict[str, Box] = {}
    nodes: dict[str, Box] = {}
    total = _layout(drawing, None, 0.0, 0.0, boxes, nodes)
    scale = 1.0
    fig, ax = plt.subplots(figsize=(max(4.0, total.w * scale + 1), max(3.0, total.h + 1)))
    with plt.rc_context({"svg.fonttype": "none"}):
        for scope, box in sorted(boxes.items(), key=lambda item: item[0].count("/")):
            cluster = drawing.clusters[scope]
            ax.add_patch(FancyBboxPatch((box.x, -box.y - box.h), box.w, box.h,
                                        boxstyle="round,pad=0.02,rounding_size=0.1",
                                        fc=style.depth_fill(cluster.depth), ec="#8c96b4",
                                        gid=f"cluster_{scope}"))
            ax.text(box.x + PAD, -box.y - 0.15, cluster.label, va="top", ha="left", fontsize=8,
                    gid=f"label_{scope}")
        for node_id, box in nodes.items():
            node = drawing.nodes[node_id]
            ax.add_patch(FancyBboxPatch((box.x, -box.y - box.h), box.w, box.h,
                                        boxstyle="round,pad=0.02,rounding_size=0.1",
                                        fc=style.API_FILL if node.cluster else "#eeeeee",
                                        ec="#444444", gid=f"api_{node_id}"))
            ax.text(box.x + box.w / 2, -box.y - box.h / 2, node.label, ha="center",
                    va="center", fontsize=8)
        for edge in drawing.edges:
            a, b = nodes[edge.source], nodes[edge.target]
            if abs(a.y - b.y) < 1e-9:  # same row: side to side
                left_to_right = a.x < b.x
                start = (a.x + (a.w if left_to_right else 0), -a.y - a.h / 2)
                end = (b.x + (0 if left_to_right else b.w), -b.y - b.h / 2)
            else:
                start = (a.x + a.w / 2, -a.y - a.h)
                end = (b.x + b.w / 2, -b.y)
            data = edge.kind == "data"  # dashed, open head, bent the other way
            ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>" if not data else "->",
                                         mutation_scale=10, color=edge.color,
                                         lw=2.5 if edge.error else 1.0,
                                         linestyle="--" if data else "-",
                                         connectionstyle=f"arc3,rad={-0.2 if data else 0.15}",
                                         gid=f"{edge.kind}_{edge.source}->{edge.target}"))
            ax.text(0.35 * start[0] + 0.65 * end[0], 0.35 * start[1] + 0.65 * end[1], edge.label,
                    fontsize=6,
                    color=edge.color, ha="center", va="center",
                    bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 0.5})
        ax.set_xlim(-0.2, total.w + 0.2)
        ax.set_ylim(-total.h - 0.2, 0.2)
        ax.set_aspect("equal")
        ax.axis("off")
        if drawing.title:
            ax.set_title(drawing.title, fontsize=9)
        fig.savefig(path, format=fmt, bbox_inches="tight")
    plt.close(fig)
