"""Drawing meta-graphs: `MetaGraph.render(path)`, `MetaGraph.to_dot()`, `SpaceError.draw(path)`
and notebooks' inline SVG. Graphviz lays them out when its `dot` program is installed; a
matplotlib layout draws them otherwise."""

from metagraph.drawing.dot import to_dot
from metagraph.drawing.model import Drawing, build_drawing
from metagraph.drawing.render import have_graphviz, render, svg_text

__all__ = ["Drawing", "build_drawing", "have_graphviz", "render", "svg_text", "to_dot"]
