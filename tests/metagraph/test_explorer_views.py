"""The explorer's views laid out ahead (`metagraph/drawing/views.py`, `dot_layout.py`), without
a browser: which components start open, how edges merge into folded components and how their
labels are cut, and Graphviz's layout of every view (none without `dot`)."""

import pytest

from examples.draw_graphs import agent_graph, shape_error
from metagraph.drawing import dot_layout, have_graphviz, views
from metagraph.drawing.model import build_drawing


@pytest.fixture(scope="module")
def drawing():
    return agent_graph().drawing(collapse=False)


def test_a_small_graph_starts_open_and_a_given_depth_folds_it(drawing):
    assert views.initial_open(drawing) == set(drawing.clusters)
    drawing.depth = 0
    try:
        assert views.initial_open(drawing) == {"actor_critic"}
    finally:
        drawing.depth = None


def test_the_faulty_edges_components_start_open_whatever_the_depth():
    error = shape_error()
    folded = build_drawing(error.graph, error=error, collapse=False, depth=0)
    assert views.initial_open(folded) == {"misfit_agent", "misfit_agent/head"}


def test_edges_into_a_folded_component_merge_with_their_labels(drawing):
    folded = views.edges(drawing, {"actor_critic"})
    keys = [edge.key for edge in folded]
    assert "actor_critic.act|actor_critic/policy|call" in keys
    assert "input|actor_critic/policy|data" in keys
    assert not any("policy/" in key or "policy." in key for key in keys)
    [into] = [e for e in folded if e.key == "input|actor_critic/policy|data"]
    assert into.label() == ["key -> key: u32[2]", "obs -> obs: f32[B,4]"]
    opened = {e.key for e in views.edges(drawing, set(drawing.clusters))}
    assert ("actor_critic/policy.distribution_params|actor_critic/policy/torso.forward|call"
            in opened)


def test_a_label_keeps_two_lines_of_thirty_characters_except_the_faulty_edges():
    edge = views.ViewEdge("a", "b", "call", lines=["x" * 40, "y", "z"])
    assert edge.label() == ["x" * 29 + "\u2026", "+2 more"]
    edge.error = True
    assert edge.label() == edge.lines


def test_views_worth_laying_out(drawing):
    start = views.initial_open(drawing)
    laid = views.candidates(drawing, start)
    assert laid[0] == start
    assert {"actor_critic"} in laid  # collapse all
    assert start - {"actor_critic/policy"} in laid  # one fold away
    assert len({views.key(v) for v in laid}) == len(laid)


@pytest.mark.skipif(not have_graphviz(), reason="Graphviz's dot is not installed")
def test_dot_places_every_box_and_edge_of_every_view(drawing):
    laid = views.candidates(drawing, views.initial_open(drawing))
    layouts = dot_layout.layouts(drawing, laid)
    assert set(layouts) == {views.key(v) for v in laid}
    for view in laid:
        layout = layouts[views.key(view)]
        open_scopes, closed, apis = views.boxes(drawing, view)
        assert set(layout["boxes"]) == {*open_scopes, *closed, *apis}
        assert set(layout["edges"]) == {e.key for e in views.edges(drawing, view)}
        width, height = layout["size"]
        for x, y, w, h in layout["boxes"].values():  # inside the drawing, y down
            assert x >= -1 and x + w <= width + 1 and y >= -1 and y + h <= height + 1
        for scope in open_scopes:  # what an open component holds lies inside its box
            x, y, w, h = layout["boxes"][scope]
            for api in apis:
                if drawing.nodes[api].cluster == scope:
                    ax, ay, aw, ah = layout["boxes"][api]
                    assert x <= ax and ax + aw <= x + w and y <= ay and ay + ah <= y + h
        for edge in layout["edges"].values():
            assert edge["d"].startswith("M") and " C" in edge["d"]


def test_no_layout_without_dot(drawing, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert dot_layout.layouts(drawing, [set(drawing.clusters)]) == {}
