"""Writing a drawing to a file by suffix: .html the interactive explorer (needs neither Graphviz
nor a network), .svg, .png, .pdf, .dot with Graphviz's `dot` when it is installed and the
matplotlib layout otherwise (said once, with how to get Graphviz)."""

from __future__ import annotations

import warnings
from pathlib import Path

from metagraph.drawing import dot, fallback, html
from metagraph.drawing.dot import have_graphviz
from metagraph.drawing.model import Drawing

FORMATS = ("html", "svg", "png", "pdf", "dot")
_warned = False


def _say_once() -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn("metagraph: Graphviz's `dot` program is not installed, so graphs are laid "
                      "out by a simpler matplotlib drawing. For the better layout install "
                      "Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install "
                      "graphviz; conda: conda install graphviz).", stacklevel=3)


def render(drawing: Drawing, path: str | Path) -> Path:
    """Write `drawing` to `path`, in the format its suffix names.

    `.html` writes the interactive explorer (one self-contained file). Graphviz lays the
    others out when `dot` is installed, matplotlib otherwise (`.dot` needs neither).

    Args:
        drawing: What to draw (`build_drawing`).
        path: The file to write, ending in `.html`, `.svg`, `.png`, `.pdf` or `.dot`; its folder
            is created.

    Returns:
        The path written.

    Raises:
        ValueError: The suffix names no known format.
    """
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"render: unknown format {path.suffix!r} of {path}; use one of "
                         f"{['.' + f for f in FORMATS]}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "html":
        path.write_text(html.to_html(drawing), encoding="utf-8")
    elif fmt == "dot":
        path.write_text(dot.to_dot(drawing))
    elif have_graphviz():
        path.write_bytes(dot.to_graphviz(drawing).pipe(format=fmt))
    else:
        _say_once()
        fallback.render(drawing, str(path), fmt)
    return path


def svg_text(drawing: Drawing) -> str:
    """The drawing as SVG text (for notebooks)."""
    if have_graphviz():
        return dot.to_graphviz(drawing).pipe(format="svg").decode()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "graph.svg"
        _say_once()
        fallback.render(drawing, str(out), "svg")
        return out.read_text()
