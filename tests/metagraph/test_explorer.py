"""The graph explorer (`graph.render("x.html")`) in a real browser: headless Chromium, the
system's (Debian's `chromium`; `$METAGRAPH_CHROMIUM` names another), driven by Playwright from
PyPI. Nothing is downloaded: Playwright is told the browser's path. Skipped, saying why, where
no browser or no Playwright is installed (`.ci/run` installs both).

Checked: no console error, no network request, every component and API drawn, collapsing a
component hides what is inside and expanding shows it, a stateful component's state table, an
API's source, reach and XLA cost, search, a SpaceError's faulty edge in red, the notebook view
with and without scripts, and a 500-component graph opened and expanded quickly."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import networkx as nx
import pytest

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


def test_a_shape_errors_faulty_edge_is_red(browser, tmp_path):
    path = shape_error().draw(tmp_path / "error.html")
    page = Page(browser, path)
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
