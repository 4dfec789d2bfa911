"""Compose a small agent from components, build its meta-graph, lower it to XLA and run it.

    python examples/compose_and_run.py

Reads top to bottom: the components, the graph, the executable, a few calls.
"""

from __future__ import annotations

import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np

import metagraph as mg
from backends import eager, xla
from metagraph.spaces import Box, Discrete, PRNGKey


class MLP(mg.Component):
    """A dm-haiku MLP whose parameters are this component's state (written out here to show a
    component from scratch; the library's own is `components.networks.MLP`)."""

    def __init__(self, sizes: list[int]):
        self.network = hk.without_apply_rng(hk.transform(lambda x: hk.nets.MLP(sizes)(x)))

    @mg.api
    def forward(self, x):
        params = self.get_param("params", lambda key: self.network.init(key, x))
        return self.network.apply(params, x)


class CategoricalPolicy(mg.Component):
    """Logits from an MLP; samples or picks the greedy action."""

    def __init__(self, obs_space: Box, num_actions: int):
        self.obs_space = obs_space
        self.logits = MLP([32, 32, num_actions])

    @mg.api(inputs={"obs": lambda self: self.obs_space})
    def act(self, obs, key):
        return jax.random.categorical(key, self.logits.forward(obs)).astype(jnp.int32)

    @mg.api
    def greedy(self, obs):
        return jnp.argmax(self.logits.forward(obs), axis=-1).astype(jnp.int32)


class StepCounter(mg.Component):
    @mg.api
    def add(self, n):
        total = self.get_state("total", jnp.zeros((), jnp.int32)) + n
        self.set_state("total", total)
        return total


class Agent(mg.Component):
    def __init__(self, obs_space: Box, num_actions: int):
        self.policy = CategoricalPolicy(obs_space, num_actions)
        self.steps = StepCounter()

    @mg.api(outputs=Discrete(2, batch=True))
    def act(self, obs, key):
        self.steps.add(jnp.int32(obs.shape[0]))
        return self.policy.act(obs, key)

    @mg.api
    def greedy(self, obs):
        return self.policy.greedy(obs)


def main() -> None:
    obs_space = Box((4,), batch=True)
    graph = mg.build(Agent(obs_space, num_actions=2),
                     input_spaces={"obs": obs_space, "key": PRNGKey()})
    print(graph.summary())
    print("drawing of the meta-graph:", graph.render("runs/compose_and_run/graph.svg"))

    exe = xla.lower(graph, compiler_options={"xla_cpu_enable_fast_math": False})
    obs = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
    key = jax.random.PRNGKey(0)
    for _ in range(3):
        key, sub = jax.random.split(key)
        actions = exe.act(obs, sub)
    print("\nactions:", np.asarray(actions), " greedy:", np.asarray(exe.greedy(obs)))
    print("steps counted in graph state:", exe.get_state("agent/steps")["total"])

    act = exe.executables["act"]
    print(f"\nact: {len(act.as_text().splitlines())} lines of StableHLO, "
          f"{act.cost_analysis()['flops']:.0f} flops per call")
    dbg = eager.lower(graph)  # same APIs, op by op: put a breakpoint in any @api method
    np.testing.assert_array_equal(dbg.greedy(obs), exe.greedy(obs))
    print("eager and XLA agree on the greedy actions")


if __name__ == "__main__":
    main()
