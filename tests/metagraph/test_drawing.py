"""Drawing meta-graphs: a three-level agent rendered to SVG (with Graphviz when it is
installed, and with the matplotlib fallback with `dot` hidden from PATH) and parsed back:
every component and API appears, clusters nest like the components, arrow labels carry the
shapes, data-flow edges and state tables are drawn too; a shape error's drawing highlights the
faulty edge with both spaces. The explorer in a browser: test_explorer.py."""

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from metagraph.drawing import have_graphviz, render

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from examples.draw_graphs import agent_graph, shape_error  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
COMPONENTS = ["actor_critic", "actor_critic/normalizer", "actor_critic/policy",
              "actor_critic/policy/torso", "actor_critic/policy/action_head",
              "actor_critic/policy/value_network"]
APIS = ["act", "value", "normalize", "sample_action", "distribution_params", "forward"]


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
    # data flow: the normalised observation into the policy, dashed; state under its component
    assert "out -> obs: f32[B,4]" in text
    assert "count: i32[] 4 B" in text and "mean: f32[4] 16 B" in text
    assert "params: 2 arrays, 160 scalars, 640 B, trainable" in text


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
    assert '"actor_critic/normalizer.normalize" -> "actor_critic/policy.sample_action"' in dot
    assert "style=dashed" in dot and "arrowhead=empty" in dot
    assert "style=dashed" not in graph.to_dot(data=False)
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



def test_data_edge_from_normalizer_to_policy(graph):
    """The issue's example: normalize's output is what policy.sample_action(obs) consumed."""
    edge = graph.nx.edges["actor_critic/normalizer.normalize", "actor_critic/policy.sample_action"]
    assert edge["kind"] == "data"
    [flow] = edge["flows"]
    assert (flow.output, flow.argument, str(flow.space)) == ("", "obs", "float32[B,4]")
    # the root API's own inputs: from "input" to the API that consumed them
    flows = graph.nx.edges["input", "actor_critic/normalizer.normalize"]["flows"]
    assert [(f.output, f.argument) for f in flows] == [("obs", "obs")]
    # a value computed inside the policy is no data edge; a call edge keeps its kind
    assert ("actor_critic.act", "actor_critic/policy.sample_action") in graph.nx.edges
    assert graph.nx.edges["actor_critic.act", "actor_critic/policy.sample_action"]["kind"] == "call"
    assert ("actor_critic/policy/torso.forward",
            "actor_critic/policy/action_head.forward") in graph.nx.edges
    text = graph.summary()
    assert ("actor_critic/policy.sample_action(obs: float32[B,4]) <- "
            "actor_critic/normalizer.normalize") in text
    assert "actor_critic/normalizer.normalize(obs: float32[B,4]) <- input:obs" in text


def test_parts_of_an_output_flow_by_path():
    """A dict output's entry and a tuple's element are followed into the calls that use them."""
    import jax.numpy as jnp

    import metagraph as mg
    from metagraph.spaces import Box

    class Source(mg.Component):
        @mg.api
        def emit(self, x):
            return {"obs": x * 2, "mask": x > 0}, x.sum(-1)

    class Sink(mg.Component):
        @mg.api
        def take(self, obs, total):
            return obs.mean(-1) + total

    class Pipe(mg.Component):
        def __init__(self):
            self.source, self.sink = Source(), Sink()

        @mg.api
        def run(self, x):
            out, total = self.source.emit(x)
            return self.sink.take(out["obs"], jnp.abs(total))  # abs: made here, no edge

    graph = mg.build(Pipe(), {"x": Box((3,), batch=True)})
    flows = graph.nx.edges["pipe/source.emit", "pipe/sink.take"]["flows"]
    assert [(f.output, f.argument, str(f.space)) for f in flows] == [
        ("[0]['obs']", "obs", "float32[B,3]")]


def test_state_of_every_component_with_totals():
    """An optimizer's moments are state: listed with shape, dtype, bytes; totals add up."""
    from toy_components import LeastSquares

    import metagraph as mg
    from metagraph.spaces import Box

    graph = mg.build(LeastSquares(), {"x": Box((3,), batch=True), "y": Box((), batch=True)})
    model, optimizer = "least_squares/model", "least_squares/optimizer"
    rows = graph.state_table(model)
    assert {(r.full_name, r.shape, r.dtype.name, r.trainable, r.nbytes) for r in rows} == {
        ("params/mlp/~/linear_0/w", (3, 1), "float32", True, 12),
        ("params/mlp/~/linear_0/b", (1,), "float32", True, 4)}
    assert graph.nx.nodes[model]["state"] == rows
    opt_rows = graph.state_table(optimizer)
    assert opt_rows and not any(r.trainable for r in opt_rows)
    assert graph.nx.nodes[optimizer]["state_bytes"] == sum(r.nbytes for r in opt_rows)
    assert graph.state_bytes() == sum(r.nbytes for r in graph.state_table())
    assert graph.state_bytes("least_squares") == graph.state_bytes()
    assert graph.param_count() == 4 and graph.param_count(optimizer) == 0
    text = graph.summary()
    assert "least_squares/model:params/mlp/~/linear_0/w param  float32[3,1] 3 scalars, 12 B" in text
    label = graph.drawing().clusters[optimizer].label
    assert "0 params, own state" in label


def test_html_is_one_offline_file(graph, tmp_path):
    """No URL to fetch anywhere: no src/href attributes, a CSP that forbids requests, the JSON
    and the script inlined; the SVG namespace is the only http string."""
    page = graph.render(tmp_path / "agent.html").read_text()
    assert "default-src 'none'" in page
    assert not re.search(r"\b(src|href)\s*=", page)
    assert set(re.findall(r"https?://[^\s\"'<>)]+", page)) <= {"http://www.w3.org/2000/svg"}
    assert '"actor_critic/policy/torso"' in page and "mg-data" in page
    notebook = graph._repr_html_()
    assert "<iframe" in notebook and "srcdoc=" in notebook and "<svg" in notebook
