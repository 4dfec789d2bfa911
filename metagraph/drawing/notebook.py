"""What a notebook shows for a `MetaGraph` (`_repr_html_`): the explorer, with the static SVG
where scripts do not run."""

from __future__ import annotations

import uuid
from html import escape

from metagraph.drawing.html import to_html
from metagraph.drawing.model import Drawing
from metagraph.drawing.render import svg_text


def notebook_html(drawing: Drawing, static: Drawing | None = None) -> str:
    """What a notebook shows: the explorer in a sandboxed frame, and the static SVG of
    `static` (or `drawing`) in its place where scripts do not run."""
    tag = f"mg-{uuid.uuid4().hex[:12]}"
    page = escape(to_html(drawing), quote=True)
    return (
        f"<div id=\"{tag}\"><div class=\"mg-static\">{svg_text(static or drawing)}</div>"
        f"<iframe class=\"mg-live\" sandbox=\"allow-scripts\" srcdoc=\"{page}\" "
        "style=\"display:none;width:100%;height:640px;border:1px solid #d0d7de;"
        "border-radius:4px\"></iframe>"
        f"<script>(function(){{var d=document.getElementById(\"{tag}\");"
        "d.querySelector(\".mg-static\").style.display=\"none\";"
        "d.querySelector(\".mg-live\").style.display=\"block\";})();</script></div>")
