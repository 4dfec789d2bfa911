"""The explorer's views laid out ahead (`metagraph/drawing/views.py`, `dot_layout.py`), without
a browser: which components start open, how edges merge into folded components and how their
labels are cut, and Graphviz's layout of every view (none without `dot`): no edge runs across
a component's title in any view of the built-in agents' graphs and of a shape error's."""

import re

import pytest

from examples.draw_graphs import agent_graph, dqn_graph, ppo_graph, shape_error
from metagraph.drawing import dot_layout, have_graphviz, views
from metagraph.drawing.model import build_drawing, leading_to

HEAD = 38  # px, the explorer's title (explorer.js HEAD)


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


def laid_out_views(drawing):
    """Every view the explorer offers of `drawing` with dot's layout of it and its boxes
    (open scopes, closed ones, APIs); dot laid out each of them."""
    laid = views.candidates(drawing, views.initial_open(drawing))
    layouts = dot_layout.layouts(drawing, laid)
    assert set(layouts) == {views.key(v) for v in laid}
    return [(view, layouts[views.key(view)], views.boxes(drawing, view)) for view in laid]


@pytest.mark.skipif(not have_graphviz(), reason="Graphviz's dot is not installed")
def test_dot_places_every_box_and_edge_of_every_view(drawing):
    for view, layout, (open_scopes, closed, apis) in laid_out_views(drawing):
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


# ---- no edge runs across a title ---------------------------------------------------------------
def path_points(d: str, steps: int = 32) -> list[tuple[float, float]]:
    """Points along an SVG path of `M`, cubic Bezier `C` and straight `L` segments (what
    `dot_layout` writes), `steps` to a segment."""
    points: list[tuple[float, float]] = []
    for command, numbers in re.findall(r"([MCL])([^MCL]*)", d):
        xy = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", numbers)]
        given = list(zip(xy[::2], xy[1::2], strict=True))
        if command == "M":
            points.append(given[0])
            continue
        p0 = points[-1]
        for i in range(1, steps + 1):
            t = i / steps
            if command == "L":
                (x1, y1), = given
                points.append((p0[0] + (x1 - p0[0]) * t, p0[1] + (y1 - p0[1]) * t))
            else:
                (ax, ay), (bx, by), (cx, cy) = given
                u = 1 - t
                points.append((u ** 3 * p0[0] + 3 * u * u * t * ax + 3 * u * t * t * bx
                               + t ** 3 * cx,
                               u ** 3 * p0[1] + 3 * u * u * t * ay + 3 * u * t * t * by
                               + t ** 3 * cy))
    return points


def title_boxes(layout: dict, open_scopes: list[str], closed: list[str]) -> dict[str, list]:
    """Each component's title (x, y, w, h) as the explorer draws it from `layout`: an open
    component's where `dot` put its title node, a closed component's is its whole box (at
    most as wide: explorer.js `title`)."""
    boxes = {scope: layout["titles"][scope] for scope in open_scopes}
    boxes.update({scope: [*layout["boxes"][scope][:3], HEAD] for scope in closed})
    return boxes


def crossings(layout: dict, titles: dict[str, list]) -> list[tuple[str, str]]:
    """(edge, component) for each edge of `layout` whose curve runs across the component's
    title: a point of it more than a pixel inside the title's box (an edge ends on the border of
    a closed component's box)."""
    crossing = []
    for key, edge in layout["edges"].items():
        points = path_points(edge["d"])
        for scope, (x, y, w, h) in titles.items():
            if any(x + 1 < px < x + w - 1 and y + 1 < py < y + h - 1 for px, py in points):
                crossing.append((key, scope))
    return crossing


def test_the_crossing_counter():
    layout = {"edges": {"down": {"d": "M50,0 C50,20 50,40 50,60"},  # through the middle
                        "past": {"d": "M0,0 C10,10 10,30 0,40 L0,60"},  # left of it
                        "into": {"d": "M50,0 L50,20"}}}  # ends on its top border
    assert crossings(layout, {"t": [20, 20, 60, HEAD]}) == [("down", "t")]


def error_drawing():
    error = shape_error()  # as SpaceError.draw draws it
    return build_drawing(leading_to(error.graph, error.edge.callee), error=error)


@pytest.mark.skipif(not have_graphviz(), reason="Graphviz's dot is not installed")
@pytest.mark.parametrize("build", [
    lambda: ppo_graph().drawing(collapse=False), lambda: dqn_graph().drawing(collapse=False),
    lambda: agent_graph().drawing(collapse=False), error_drawing],
    ids=["ppo", "dqn", "agent", "shape_error"])
def test_no_edge_runs_across_a_title_in_any_view(build):
    for view, layout, (open_scopes, closed, _) in laid_out_views(build()):
        assert set(layout["titles"]) == set(open_scopes)  # title nodes, not cluster labels
        titles = title_boxes(layout, open_scopes, closed)
        assert crossings(layout, titles) == [], sorted(view)
        for scope in open_scopes:  # inside its component's box, on its first rank: at the
            x, y, w, h = titles[scope]  # top, or at the left where ranks run left to right
            bx, by, bw, bh = layout["boxes"][scope]
            assert bx <= x and x + w <= bx + bw and by <= y and y + h <= by + bh
            assert (y < by + 20 or x < bx + 20) and abs(h - HEAD) < 0.5


@pytest.mark.skipif(not have_graphviz(), reason="Graphviz's dot is not installed")
def test_where_dot_refuses_the_title_nodes_titles_are_cluster_labels(drawing, monkeypatch):
    run = dot_layout._run_dot
    monkeypatch.setattr(dot_layout, "_run_dot",
                        lambda source: None if "|title" in source else run(source))
    view = set(drawing.clusters)
    layout = dot_layout.layouts(drawing, [view])[views.key(view)]
    assert layout["titles"] == {} and set(layout["boxes"]) >= view
