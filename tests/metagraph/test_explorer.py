"""The graph explorer (`graph.render("x.html")`) in a real browser: headless Chromium, the
system's (Debian's `chromium`; `$METAGRAPH_CHROMIUM` names another), driven by Playwright from
PyPI. Nothing is downloaded: Playwright is told the browser's path. Skipped, saying why, where
no browser or no Playwright is installed (`.ci/run` installs both).

Checked: no console error, no network request, every component and API drawn, collapsing a
component hides what is inside and expanding shows it, a stateful component's state table, an
API's source, reach and XLA cost, search, a SpaceError's faulty edge in red, the notebook view
with and without scripts, a 500-component graph opened and expanded quickly; the layout:
Graphviz's where `dot` is installed and the row packer where it is not, edge labels on by
default that never overlap, the faulty edge's label always shown, titles above the edges and
no edge drawn across a title."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import networkx as nx
import pytest

from metagraph.drawing import have_graphviz

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from examples.draw_graphs import (  # noqa: E402
    agent_graph,
    chromium,
    ppo_graph,
    shape_error,
    wide_graph,
)

playwright = pytest.importorskip(
    "playwright.sync_api", reason="the browser tests need Playwright: pip install -e \".[test]\"")
BROWSER = chromium()
pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium found (apt-get install chromium, or set "
                            "METAGRAPH_CHROMIUM to a Chromium-family browser)")
RED = "rgb(214, 39, 40)"  # style.ERROR_COLOR


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        # --no-sandbox: CI runs as root, where Chromium's sandbox cannot start
        launched = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
        yield launched
        launched.close()


class Page:
    """A page of the browser with every console error and network request it made."""

    def __init__(self, browser, path: Path | None = None, html: str | None = None,
                 scripts: bool = True):
        self.context = browser.new_context(viewport={"width": 1400, "height": 800},
                                           java_script_enabled=scripts)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r))
        self.url = path.resolve().as_uri() if path is not None else None
        if path is not None:
            self.page.goto(self.url)
        else:
            self.page.set_content(html)

    def count(self, selector: str) -> int:
        return self.page.locator(selector).count()

    def external_requests(self) -> list[str]:
        return [r.url for r in self.requests if r.url != self.url and
                not r.url.startswith(("data:", "about:"))]

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module")
def ppo(tmp_path_factory):
    graph = ppo_graph()
    return graph, graph.render(tmp_path_factory.mktemp("ppo") / "ppo.html")


def component(scope: str) -> str:
    return f'.mg-component[data-id="{scope}"]'


def api(node: str) -> str:
    return f'.mg-api[data-id="{node}"]'


def test_every_component_and_api_offline_without_errors(browser, ppo):
    graph, path = ppo
    page = Page(browser, path)
    page.page.click("#mg-expand")
    for scope in graph.components:
        assert page.count(component(scope)) == 1, scope
    apis = [n for n, kind in graph.nx.nodes(data="kind") if kind == "api"]
    for node in apis + ["input"]:
        assert page.count(api(node)) == 1, node
    # calls solid, data dashed: env.step's observation goes into policy.value
    data = ('.mg-edge.mg-data[data-source="ppo_agent/rollout/env.step"]'
            '[data-target="ppo_agent/policy.value"]')
    assert page.count(data) == 1
    dashes = page.page.eval_on_selector(data, "e => getComputedStyle(e).strokeDasharray")
    assert dashes not in ("", "none")
    assert page.count(".mg-edge.mg-call") >= 10
    assert page.errors == [] and page.external_requests() == []
    page.close()


def test_collapse_hides_the_inside_and_expand_shows_it(browser, ppo):
    _, path = ppo
    page = Page(browser, path)
    inside = [component("ppo_agent/policy/torso"), api("ppo_agent/policy/torso.forward"),
              api("ppo_agent/policy.sample_action")]
    assert all(page.count(s) == 1 for s in inside)  # a graph this small starts open
    page.page.click('.mg-toggle[data-id="ppo_agent/policy"]')
    assert all(page.count(s) == 0 for s in inside)
    assert page.count(component("ppo_agent/policy") + ".mg-collapsed") == 1
    # edges into the folded component now end at its box
    assert page.count('.mg-edge[data-target="ppo_agent/policy"]') >= 1
    page.page.click('.mg-toggle[data-id="ppo_agent/policy"]')
    assert all(page.count(s) == 1 for s in inside)
    assert page.errors == []
    page.close()


def test_a_stateful_component_shows_its_state_table(browser, ppo):
    graph, path = ppo
    page = Page(browser, path)
    page.page.click('.mg-head[data-id="ppo_agent/optimizer"]')
    rows = page.page.locator("#mg-panel table.mg-state tbody tr")
    expected = graph.state_table("ppo_agent/optimizer")
    assert rows.count() == len(expected) > 0
    table = page.page.inner_text("#mg-panel table.mg-state")
    for row in expected:
        assert row.full_name in table
    assert "f32[9155]" in table and "35.8 KiB" in table and "state" in table
    page.close()


def test_an_api_shows_source_and_highlights_its_reach(browser, ppo):
    graph, path = ppo
    page = Page(browser, path)
    page.page.click(api("ppo_agent.greedy"))
    panel = page.page.inner_text("#mg-panel")
    source = graph.nx.nodes["ppo_agent.greedy"]["source"]
    assert "def greedy" in Path(source.file).read_text().splitlines()[source.line - 1:][1]
    assert f"{Path(source.file).name}:{source.line}" in panel
    assert source.qualname.endswith("PPOAgent.greedy") and source.qualname in panel
    calls = nx.DiGraph([(u, v) for u, v, k in graph.nx.edges(data="kind") if k == "call"])
    reached = {"ppo_agent.greedy"} | nx.descendants(calls, "ppo_agent.greedy")
    lit = set(page.page.eval_on_selector_all(
        ".mg-api.mg-reach", "els => els.map(e => e.dataset.id)"))
    assert lit == reached
    assert page.count(api("ppo_agent/rollout/env.step") + ".mg-dim") == 1
    page.page.fill("#mg-search", "value_net")
    assert page.count(component("ppo_agent/policy/value_network") + ".mg-match") == 1
    assert page.page.inner_text("#mg-count") == "2 found"  # the component and its API
    page.close()


@pytest.fixture(scope="module")
def error_page(tmp_path_factory):
    return shape_error().draw(tmp_path_factory.mktemp("error") / "error.html")


def test_a_shape_errors_faulty_edge_is_red(browser, error_page):
    page = Page(browser, error_page)
    edge = '.mg-edge.mg-error[data-target="misfit_agent/head.score"]'
    assert page.count(edge) == 1
    assert page.page.eval_on_selector(edge, "e => getComputedStyle(e).stroke") == RED
    assert page.count(".mg-edge.mg-error") == 1
    panel = page.page.inner_text("#mg-panel")
    assert "expected f32[B,16]" in panel and "got f32[B,8]" in panel
    # where the wrong value came from: the encoder's output, a data edge into the head
    assert page.count('.mg-edge.mg-data[data-source="misfit_agent/encoder.forward"]') == 1
    assert page.errors == [] and page.external_requests() == []
    page.close()


def test_costs_from_the_xla_executor(browser, tmp_path):
    from backends import xla

    exe = xla.lower(agent_graph())
    path = exe.render(tmp_path / "agent.html")
    page = Page(browser, path)
    page.page.click(api("actor_critic.act"))
    cost = page.page.inner_text("#mg-panel table.mg-cost")
    for key in ("flops", "bytes accessed", "temp bytes", "compile seconds"):
        assert key in cost
    assert page.errors == []
    page.close()


def test_notebook_view_with_and_without_scripts(browser):
    html = agent_graph()._repr_html_()
    live = Page(browser, html=html)
    assert live.page.is_visible("iframe.mg-live") and not live.page.is_visible(".mg-static")
    frame = live.page.frame_locator("iframe.mg-live")
    assert frame.locator(component("actor_critic/policy")).count() == 1
    assert live.errors == [] and live.external_requests() == []
    live.close()
    static = Page(browser, html=html, scripts=False)
    assert static.page.is_visible(".mg-static svg") and not static.page.is_visible("iframe")
    static.close()


def test_500_components_open_and_expand_quickly(browser, tmp_path):
    graph = wide_graph()
    assert len(graph.components) == 501
    path = graph.render(tmp_path / "wide.html")
    start = time.perf_counter()
    page = Page(browser, path)
    opened = time.perf_counter() - start
    assert page.count(".mg-component") == 21  # large: starts folded below the blocks
    took = page.page.evaluate("""() => { const t = performance.now();
        document.getElementById('mg-expand').click(); return performance.now() - t; }""")
    assert page.count(".mg-component") == 501 and page.count(".mg-api") == 502
    print(f"500 components: opened in {opened:.2f} s, expanded in {took:.0f} ms")
    assert opened < 10 and took < 3000  # about 0.3 s and 0.2 s on 2 busy cores
    assert page.errors == []
    page.close()


# ---- layout and labels ------------------------------------------------------------------------
VISIBLE_LABELS = """() => [...document.querySelectorAll('.mg-label')]
    .filter(e => getComputedStyle(e).display !== 'none')
    .map(e => { const r = e.getBoundingClientRect();
                return {key: e.dataset.key, text: e.textContent,
                        error: e.classList.contains('mg-error'),
                        x: r.x, y: r.y, w: r.width, h: r.height}; })"""


def overlapping(boxes: list[dict]) -> list[tuple[str, str]]:
    """The pairs of label boxes that overlap (by more than half a pixel)."""
    def cross(a, b):
        return (a["x"] + 0.5 < b["x"] + b["w"] and b["x"] + 0.5 < a["x"] + a["w"] and
                a["y"] + 0.5 < b["y"] + b["h"] and b["y"] + 0.5 < a["y"] + a["h"])
    return [(a["text"], b["text"]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
            if cross(a, b)]


def hovering_shows_thinned_labels(page: Page) -> int:
    """Hover each edge whose label was thinned, at a point where nothing lies over it; its
    label shows. Returns how many edges were hovered."""
    thinned = page.page.eval_on_selector_all(
        ".mg-label.mg-thinned", "els => els.map(e => e.dataset.key)")
    hovered = 0
    for key in thinned:
        point = page.page.evaluate("""k => {
            const p = document.querySelector(`.mg-hit[data-key="${k}"]`);
            for (const f of [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8]) {
                const q = p.getPointAtLength(p.getTotalLength() * f);
                const s = new DOMPoint(q.x, q.y).matrixTransform(p.getScreenCTM());
                if (document.elementFromPoint(s.x, s.y) === p) return [s.x, s.y];
            }
            return null; }""", key)
        if point is None:
            continue  # covered all along by other edges or boxes
        page.page.mouse.move(*point)
        shown = page.page.evaluate(
            "k => getComputedStyle(document.querySelector(`.mg-label[data-key=\"${k}\"]`))"
            ".display", key)
        assert shown != "none", key
        hovered += 1
    return hovered


def drawn_layout(page: Page) -> str:
    return page.page.get_attribute("#mg-svg", "data-layout")


@pytest.mark.skipif(not have_graphviz(), reason="Graphviz's dot is not installed")
def test_positions_come_from_dot(browser, ppo):
    _, path = ppo
    page = Page(browser, path)
    assert drawn_layout(page) == "dot"
    # every API box is centred where dot put it
    placed = page.page.evaluate("""() => {
        const x = window.metagraphExplorer, open = x.data.components.filter(c => x.open[c.id])
            .map(c => c.id).sort().join('\\n');
        return x.data.layouts[open].boxes; }""")
    drawn = page.page.eval_on_selector_all(".mg-api rect", """els => els.map(e => [
        e.parentNode.dataset.id, +e.getAttribute('x') + e.getAttribute('width') / 2,
        +e.getAttribute('y') + e.getAttribute('height') / 2])""")
    assert len(drawn) >= 17
    for node, cx, cy in drawn:
        x, y, w, h = placed[node]
        assert abs(cx - (x + w / 2)) < 0.5 and abs(cy - (y + h / 2)) < 0.5, node
    # dot kept room for every title: no API lies under one
    assert page.page.evaluate("""() => {
        const box = e => e.getBoundingClientRect();
        const cross = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 &&
                                a.top < b.bottom - 1 && b.top < a.bottom - 1;
        const titles = [...document.querySelectorAll('.mg-heading rect')].map(box);
        return [...document.querySelectorAll('.mg-api rect')].map(box)
            .every(a => titles.every(t => !cross(a, t))); }""")
    # folding a component shows dot's layout of that view too; the edges follow dot's curves
    page.page.click('.mg-toggle[data-id="ppo_agent/policy"]')
    assert drawn_layout(page) == "dot"
    assert page.count('.mg-edge[data-target="ppo_agent/policy"]') >= 1
    assert page.errors == []
    page.close()


def test_labels_are_on_and_never_overlap(browser, ppo, error_page):
    for path in (ppo[1], error_page):
        page = Page(browser, path)
        assert page.page.is_checked("#mg-show-labels")  # the same default on every page
        labels = page.page.evaluate(VISIBLE_LABELS)
        edges = page.count(".mg-edge")
        assert len(labels) >= edges / 2, (len(labels), edges)
        assert overlapping(labels) == []
        hovering_shows_thinned_labels(page)
        page.close()


def test_the_faulty_call_and_its_spaces_are_never_hidden(browser, error_page):
    page = Page(browser, error_page)
    for _ in range(2):  # as it opens, and with every component folded and opened again
        labels = page.page.evaluate(VISIBLE_LABELS)
        [faulty] = [label for label in labels if label["error"]]
        assert "expected f32[B,16]" in faulty["text"] and "got f32[B,8]" in faulty["text"]
        assert overlapping(labels) == []
        for node in ("misfit_agent.act", "misfit_agent/head.score"):
            assert page.page.is_visible(api(node))
        assert page.page.evaluate("""() => {  // drawn last: no title or toggle covers it
            const label = document.querySelector('.mg-label.mg-error');
            return [...document.querySelectorAll('.mg-heading, .mg-toggle, .mg-api')].every(
                e => e.compareDocumentPosition(label) & Node.DOCUMENT_POSITION_FOLLOWING); }""")
        page.page.click("#mg-collapse")
        page.page.click("#mg-expand")
    page.page.uncheck("#mg-show-labels")  # the faulty edge's label stays even then
    assert [label["error"] for label in page.page.evaluate(VISIBLE_LABELS)] == [True]
    page.close()


def test_titles_are_drawn_above_every_edge_and_label(browser, ppo):
    _, path = ppo
    page = Page(browser, path)
    above = page.page.evaluate("""() => {
        const titles = [...document.querySelectorAll('.mg-heading')];
        const under = [...document.querySelectorAll('.mg-edge, .mg-label')];
        return titles.length > 0 && titles.every(t => under.every(e =>
            e.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING)); }""")
    assert above
    page.close()


TITLE_CROSSINGS = """() => {  // `edge x component` for each drawn edge across a drawn title
    const titles = [...document.querySelectorAll('rect.mg-head')].map(r => ({
        id: r.dataset.id, x: +r.getAttribute('x'), y: +r.getAttribute('y'),
        w: +r.getAttribute('width'), h: +r.getAttribute('height')}));
    const crossing = [];
    for (const path of document.querySelectorAll('.mg-edge')) {
        const length = path.getTotalLength();
        const points = [...Array(301).keys()].map(i => path.getPointAtLength(length * i / 300));
        for (const t of titles) {  // more than a pixel inside: an edge ends on a closed box
            if (points.some(q => q.x > t.x + 1 && q.x < t.x + t.w - 1 &&
                                 q.y > t.y + 1 && q.y < t.y + t.h - 1))
                crossing.push(path.dataset.key + ' x ' + t.id);
        }
    }
    return crossing; }"""


@pytest.mark.skipif(not have_graphviz(), reason="Graphviz's dot is not installed")
def test_no_drawn_edge_runs_across_a_drawn_title(browser, ppo, error_page):
    for path in (ppo[1], error_page):
        page = Page(browser, path)
        for click in (None, "#mg-collapse", "#mg-expand"):
            if click:
                page.page.click(click)
            assert drawn_layout(page) == "dot"
            assert page.count(".mg-edge") > 0 and page.count("rect.mg-head") > 0
            assert page.page.evaluate(TITLE_CROSSINGS) == [], (path.name, click)
        assert page.errors == []
        page.close()


def test_without_dot_the_row_packer_lays_it_out(browser, ppo, tmp_path, monkeypatch):
    graph, _ = ppo
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` on it
    assert not have_graphviz()
    path = graph.render(tmp_path / "rows.html")
    assert '"layouts":{}' in path.read_text()
    page = Page(browser, path)
    assert drawn_layout(page) == "rows"
    labels = page.page.evaluate(VISIBLE_LABELS)
    assert len(labels) >= 5 and overlapping(labels) == []
    assert hovering_shows_thinned_labels(page) > 0  # rows are tighter: some labels wait
    page.page.click("#mg-expand")
    assert overlapping(page.page.evaluate(VISIBLE_LABELS)) == []
    assert page.errors == []
    page.close()
