"""The pictures in docs/images, made again by running this file:

    python examples/draw_graphs.py            # docs/images/agent.svg, docs/images/shape_error.svg

`agent_graph` is also what the command line draws:

    metagraph graph examples/draw_graphs.py:agent_graph -o agent.svg
"""

from __future__ import annotations

from pathlib import Path

import metagraph as mg
from components.networks import MLP
from components.policy import Policy
from metagraph.spaces import Box, Discrete, PRNGKey

IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"


class ActorCritic(mg.Component):
    """A three-level agent: agent -> policy -> torso / heads."""

    def __init__(self):
        self.policy = Policy(Discrete(2), hidden=(32,))

    @mg.api
    def act(self, obs, key):
        return self.policy.sample_action(obs, key)

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


def agent_graph() -> mg.MetaGraph:
    return mg.build(ActorCritic(), {"obs": Box((4,), batch=True), "key": PRNGKey()})


def shape_error() -> mg.SpaceError:
    try:
        mg.build(MisfitAgent(), {"obs": Box((4,), batch=True)})
    except mg.SpaceError as error:
        return error
    raise AssertionError("MisfitAgent built without a SpaceError")


def main() -> None:
    print(agent_graph().render(IMAGES / "agent.svg"))
    print(shape_error().draw(IMAGES / "shape_error.svg"))


if __name__ == "__main__":
    main()
