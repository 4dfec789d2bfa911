"""Drawing meta-graphs: a three-level agent rendered to SVG (with Graphviz when it is
installed, and with the matplotlib fallback with `dot` hidden from PATH) and parsed back:
every component and API appears, clusters nest like the components, arrow labels carry the
shapes; a shape error's drawing highlights the faulty edge with both spaces."""

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from metagraph.drawing import have_graphviz, render

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from examples.draw_graphs import agent_graph, shape_error  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
COMPONENTS = ["actor_critic", "actor_critic/policy", "actor_critic/policy/torso",
              "actor_critic/policy/action_head", "actor_critic/policy/value_network"]
APIS = ["act", "value", "sample_action", "distribution_params", "forward"]


@pytest.fixture(scope="module")
def graph():
    return agent_graph()


@pytest.fixture(params=["graphviz", "fallback"])
def layout(request, monkeypatch, tmp_path):
    if request.param == "graphviz" and not have_graphviz():
        pytest.skip("Graphviz's dot is not installed")
    if request.param == "fallback":
        monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` anywhere on PATH
        assert not have_graphviz()
    return request.param


def numbers(path_d: str) -> list[tuple[float, float]]:
    values = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", path_d)]
    return list(zip(values[::2], values[1::2], strict=False))


def parse(svg_path: Path) -> tuple[dict[str, tuple], str]:
    """(cluster name -> bounding box, all the text) of an SVG from either layout."""
    root = ET.parse(svg_path).getroot()
    boxes = {}
    for group in root.iter(f"{SVG}g"):
        title = group.find(f"{SVG}title")
        name = None
        if group.get("class") == "cluster" and title is not None:
            name = title.text.removeprefix("cluster_")  # Graphviz
        elif (group.get("id") or "").startswith("cluster_"):
            name = group.get("id").removeprefix("cluster_")  # matplotlib
        if name is None:
            continue
        shape = group.find(f"{SVG}path")
        points = numbers(shape.get("d")) if shape is not None else numbers(
            group.find(f"{SVG}polygon").get("points"))
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        boxes[name] = (min(xs), min(ys), max(xs), max(ys))
    text = "\n".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    return boxes, text


def inside(inner, outer) -> bool:
    return (inner[0] >= outer[0] and inner[1] >= outer[1] and inner[2] <= outer[2]
            and inner[3] <= outer[3])


def test_three_level_agent_svg(graph, layout, tmp_path):
    boxes, text = parse(graph.render(tmp_path / "agent.svg"))
    assert sorted(boxes) == sorted(COMPONENTS)
    for scope in COMPONENTS[1:]:
        parent = scope.rsplit("/", 1)[0]
        assert inside(boxes[scope], boxes[parent]), f"{scope} is not drawn inside {parent}"
    for name in [c.rsplit("/", 1)[-1] for c in COMPONENTS] + APIS + ["Policy", "MLP"]:
        assert name in text
    for shape in ["obs: f32[B,4]", "x: f32[B,32]", "-> f32[B,2]", "-> f32[B]"]:
        assert shape in text, shape


def test_shape_error_drawing_highlights_the_faulty_edge(layout, tmp_path):
    error = shape_error()
    path = error.draw(tmp_path / "error.svg")
    _, text = parse(path)
    assert "expected f32[B,16]" in text and "got f32[B,8]" in text
    assert "#d62728" in path.read_text()  # the red of the faulty edge
    assert "encoder" in text  # where the wrong value came from


def test_options_dot_text_and_formats(graph, tmp_path):
    dot = graph.to_dot()
    assert 'subgraph "cluster_actor_critic/policy"' in dot and "rankdir=LR" in dot
    collapsed = graph.to_dot(depth=1, focus="act", show_params=False, rankdir="TB")
    assert "cluster_actor_critic/policy/torso" not in collapsed
    assert "collapsed: action_head, torso" in collapsed and "value_network" not in collapsed
    assert " params" not in collapsed and "rankdir=TB" in collapsed
    assert (tmp_path / "g.dot").exists() is False
    graph.render(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    with pytest.raises(ValueError, match="unknown format"):
        graph.render(tmp_path / "g.jpeg")
    with pytest.raises(ValueError, match="no root API 'learn'"):
        graph.to_dot(focus="learn")
    assert graph._repr_svg_().lstrip().startswith(("<?xml", "<svg", "<!--"))


def test_png_and_pdf_by_suffix(graph, layout, tmp_path):
    assert graph.render(tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    assert render(graph.drawing(), tmp_path / "g.pdf").read_bytes()[:4] == b"%PDF"

