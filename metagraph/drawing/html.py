"""The graph explorer: a `Drawing` as one self-contained, offline HTML file.

The page carries the drawing as JSON and its own renderer (`explorer/explorer.js`, plain
JavaScript drawing SVG, no library, and `explorer/explorer.css`), both inlined. A
Content-Security-Policy forbids every network request, so the file works offline and cannot
leak. In the browser: nested components expand and collapse, a click shows a component's
state table or an API's spaces, source and cost, an API's reach is highlighted, names can be
searched, and a `SpaceError`'s faulty edge is red.

Layout: where Graphviz is installed, `dot` lays out the first view, every depth level and (for
graphs of up to 40 components) every view one fold away from the first, as it lays out the
static drawing (`dot_layout.py`); the explorer draws boxes, titles, curves and edge labels where
`dot` put them (no edge runs across a title). Any other view, and every view without Graphviz,
is laid out in the browser by a shelf packer (a few hundred lines that draw 500 components in
milliseconds), rather than by a JavaScript layout library that would bring a megabyte into
every file. Edge labels are on by
default; one that would cover another label, an API or a title is hidden until its edge is
hovered, and the faulty edge's label is always shown.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

from metagraph.drawing import dot_layout, views
from metagraph.drawing.model import Drawing
from metagraph.spaces.space import short_dtype

# no request of any kind: scripts, styles and images only from the page itself
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data:; font-src data:")


def _asset(name: str) -> str:
    return resources.files("metagraph.drawing").joinpath("explorer", name).read_text("utf-8")


def explorer_data(drawing: Drawing) -> dict[str, Any]:
    """The drawing as the JSON the explorer reads: components (with state rows), APIs (with
    spaces, source and cost), edges (calls and data flow, with details), the components
    that start open, and Graphviz's layout of the views a reader is likely to open (none
    without Graphviz: the explorer then packs rows itself)."""
    components = []
    for cluster in drawing.clusters.values():
        components.append({
            "id": cluster.scope, "name": cluster.scope.rsplit("/", 1)[-1], "cls": cluster.cls,
            "parent": cluster.parent, "depth": cluster.depth, "params": cluster.params,
            "state": [{"name": row.full_name, "shape": list(row.shape),
                       "dtype": short_dtype(row.dtype), "trainable": row.trainable,
                       "size": row.size, "bytes": row.nbytes} for row in cluster.state]})
    apis = []
    for node in drawing.nodes.values():
        source = node.source
        apis.append({
            "id": node.id, "name": node.label, "component": node.cluster,
            "inputs": node.inputs, "outputs": node.outputs,
            "source": None if source is None else {"file": source.file, "line": source.line,
                                                   "qualname": source.qualname},
            "cost": None if node.cost is None else {k: _number(v) for k, v in node.cost.items()}})
    edges = [{"source": e.source, "target": e.target, "kind": e.kind, "label": e.label,
              "color": e.color, "error": e.error, "details": e.details}
             for e in drawing.edges]
    opened = views.initial_open(drawing)
    return {"title": drawing.title, "components": components,
            "apis": apis, "edges": edges, "open": sorted(opened),
            "layouts": dot_layout.layouts(drawing, views.candidates(drawing, opened))}


def _number(value: Any) -> Any:
    """A cost value as JSON: numbers stay numbers, anything else its text."""
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def to_html(drawing: Drawing) -> str:
    """The drawing as one self-contained HTML page (the interactive explorer)."""
    data = json.dumps(explorer_data(drawing), separators=(",", ":"))
    data = data.replace("<", "\\u003c")  # no `</script>` inside the JSON
    title = html.escape(drawing.title or "metagraph")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{title}</title><style>{_asset('explorer.css')}</style></head>\n<body>"
        "<noscript>This graph explorer needs JavaScript; `graph.render(\"graph.svg\")` draws "
        "a static picture.</noscript>\n"
        f"<script type=\"application/json\" id=\"mg-data\">{data}</script>\n"
        f"<script>{_asset('explorer.js')}</script>\n</body></html>\n")
