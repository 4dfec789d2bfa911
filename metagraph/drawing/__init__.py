"""Drawing meta-graphs: `MetaGraph.render(path)`, `MetaGraph.to_dot()`, `SpaceError.draw(path)`
and notebooks' inline view. `.html` is the interactive explorer (one offline file, its own
small renderer in plain JavaScript and SVG); for the static formats Graphviz lays the graph
out when its `dot` program is installed, a matplotlib layout otherwise."""

from metagraph.drawing.dot import have_graphviz, to_dot
from metagraph.drawing.html import to_html
from metagraph.drawing.model import Drawing, build_drawing
from metagraph.drawing.notebook import notebook_html
from metagraph.drawing.render import render, svg_text

__all__ = ["Drawing", "build_drawing", "have_graphviz", "notebook_html", "render", "svg_text",
           "to_dot", "to_html"]
