"""The pictures in docs/images, made again by running this file:

    python examples/draw_graphs.py            # agent.svg, shape_error.svg, agent.html, ...
    python examples/draw_graphs.py --screenshots   # and the explorer's PNGs (needs chromium
                                                   # and `pip install playwright`)

`agent_graph` (and `ppo_graph`, `dqn_graph`, `impala_graph`, `wide_graph`) is also what the
command line draws:

    metagraph graph examples/draw_graphs.py:agent_graph -o agent.html
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import jax.numpy as jnp

import metagraph as mg
from components.networks import MLP
from components.policy import Policy
from metagraph.spaces import Box, Discrete, PRNGKey

IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"


class Normalizer(mg.Component):
    """Centres observations by the running mean of every batch seen (state: count, mean)."""

    @mg.api
    def normalize(self, obs):
        count = self.get_state("count", jnp.zeros((), jnp.int32))
        mean = self.get_state("mean", lambda key: jnp.zeros(obs.shape[-1:], jnp.float32))
        n = count + obs.shape[0]
        mean = mean + (obs.sum(0) - obs.shape[0] * mean) / n
        self.set_state("count", n)
        self.set_state("mean", mean)
        return obs - mean


class ActorCritic(mg.Component):
    """A three-level agent: agent -> normalizer, policy -> torso / heads. The normalised
    observation flows from `normalize` into `policy.sample_action` (a data edge)."""

    def __init__(self):
        self.normalizer = Normalizer()
        self.policy = Policy(Discrete(2), hidden=(32,))

    @mg.api
    def act(self, obs, key):
        return self.policy.sample_action(self.normalizer.normalize(obs), key)

    @mg.api
    def value(self, obs):
        return self.policy.value(obs)


class Head(mg.Component):
    @mg.api(inputs={"features": Box((16,), batch=True)})
    def score(self, features):
        return features.sum(-1)


class MisfitAgent(mg.Component):
    """An encoder of 8 features feeding a head that expects 16: a shape error."""

    def __init__(self):
        self.encoder = MLP([8])
        self.head = Head()

    @mg.api
    def act(self, obs):
        return self.head.score(self.encoder.forward(obs))


class Scale(mg.Component):
    """`x * w` with one parameter vector: a leaf of `wide_graph`."""

    @mg.api
    def forward(self, x):
        return x * self.get_param("w", jnp.ones(x.shape[-1:], jnp.float32))


class Block(mg.Component):
    """A chain of `n` Scales, each fed the previous one's output."""

    def __init__(self, n: int):
        self.layers = [Scale() for _ in range(n)]

    @mg.api
    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x


class Wide(mg.Component):
    """`blocks` Blocks of `per_block` Scales: 1 + blocks * (1 + per_block) components."""

    def __init__(self, blocks: int, per_block: int):
        self.blocks = [Block(per_block) for _ in range(blocks)]

    @mg.api
    def forward(self, x):
        for block in self.blocks:
            x = block.forward(x)
        return x


def agent_graph() -> mg.MetaGraph:
    """The example agent's graph."""
    return mg.build(ActorCritic(), {"obs": Box((4,), batch=True), "key": PRNGKey()})


def shape_error() -> mg.SpaceError:
    """The SpaceError of building MisfitAgent."""
    try:
        mg.build(MisfitAgent(), {"obs": Box((4,), batch=True)})
    except mg.SpaceError as error:
        return error
    raise AssertionError("MisfitAgent built without a SpaceError")


def _algorithm_graph(name: str) -> mg.MetaGraph:
    from components.training.registry import resolve

    algorithm = resolve(name)
    return algorithm.build("CartPole-v1", algorithm.config_class(), 10_000, 1)


def ppo_graph() -> mg.MetaGraph:
    """The PPO agent's graph, as `metagraph train CartPole-v1 --algo ppo` builds it."""
    return _algorithm_graph("ppo")


def dqn_graph() -> mg.MetaGraph:
    """The DQN agent's graph (prioritised replay, n-step returns)."""
    return _algorithm_graph("dqn")


def impala_graph() -> mg.MetaGraph:
    """The IMPALA learner's graph."""
    return _algorithm_graph("impala")


def wide_graph(blocks: int = 20, per_block: int = 24) -> mg.MetaGraph:
    """A synthetic graph of 1 + blocks * (1 + per_block) components (501 by default)."""
    return mg.build(Wide(blocks, per_block), {"x": Box((4,), batch=True)})


def chromium() -> str | None:
    """A Chromium-family browser on this machine ($METAGRAPH_CHROMIUM, or on the PATH)."""
    import os

    named = os.environ.get("METAGRAPH_CHROMIUM")
    if named:
        return named
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def screenshot(html: Path, png: Path, click: str | None = None, width: int = 1400,
               height: int = 760) -> Path:
    """A PNG of the explorer `html` in headless Chromium, after clicking the element that the
    CSS selector `click` names."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(html.resolve().as_uri())
        if click:
            page.click(click)
            page.mouse.move(width - 1, height - 1)  # no tooltip in the picture
        page.screenshot(path=str(png))
        browser.close()
    return png


def main() -> None:
    """Draw the pictures of docs/drawing.md."""
    agent = agent_graph()
    error = shape_error()
    print(agent.render(IMAGES / "agent.svg"))
    print(error.draw(IMAGES / "shape_error.svg"))
    if "--screenshots" in sys.argv:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            ppo = ppo_graph().render(Path(tmp) / "ppo.html")
            bad = error.draw(Path(tmp) / "error.html")
            print(screenshot(ppo, IMAGES / "explorer_ppo.png", width=1600, height=1000))
            print(screenshot(bad, IMAGES / "explorer_shape_error.png", width=1200, height=600))


if __name__ == "__main__":
    main()
