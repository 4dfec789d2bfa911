"""IMPALA (`--algo impala`): only distributed. The learner's graph has `learn` and `greedy`;
each sampler's has `start` and `sample`. One V-trace update per batch, in the order batches
arrive, each maybe a few weight versions old."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

import metagraph as mg
from components.agents.impala_agent import ImpalaAgent
from components.agents.impala_config import ImpalaConfig
from components.training.algorithm import Distributed, DistributedAlgorithm
from components.training.algorithms.rows import learned_rows
from components.training.metrics import Row
from metagraph.spaces import PRNGKey


class ImpalaSamplers(Distributed):
    """Asynchronous samplers running fused rollouts of the agents `make_agent(env_id,
    config)` makes; the learner's V-trace corrects for the policy lag."""

    sample_api = "sample"

    def __init__(self, make_agent: Callable[[str, ImpalaConfig], ImpalaAgent] = ImpalaAgent):
        self.make_agent = make_agent

    def build_sampler(self, env_id: str, config: ImpalaConfig, num_samplers: int
                      ) -> mg.MetaGraph:
        """A sampler's graph: the agent's `start` and `sample` APIs."""
        return mg.build(self.make_agent(env_id, config), {"key": PRNGKey()},
                        apis=["start", "sample"])

    def start_sampler(self, exe: Any, key: jax.Array) -> None:
        """Reset the sampler's environments with `key`."""
        exe.start(np.asarray(key))

    def update(self, exe: Any, config: ImpalaConfig, batches: list[dict[str, Any]],
               key: jax.Array) -> list[Row]:
        """One `learn` call per gathered batch; a metrics row for each."""
        return learned_rows(exe, batches)

    def batch_axes(self, graph: mg.MetaGraph) -> dict[str, dict[str, int]]:
        """The batch axis of each `learn` input, for data-parallel learners."""
        return ImpalaAgent.batch_axes()


class Impala(DistributedAlgorithm):
    """Importance-weighted actor-learner (`ImpalaAgent`): samplers feed one V-trace learner."""

    config_class = ImpalaConfig

    def agent(self, env_id: str, config: ImpalaConfig, total_steps: int = 1_000_000
              ) -> ImpalaAgent:
        """The agent of the learner and of every sampler: `ImpalaAgent(env_id, config,
        total_steps)` (the run's length sets the learner's learning-rate annealing; samplers
        build it with the default). Override it to give the agent other parts (`policy=`,
        `preprocessor=`, ...)."""
        return ImpalaAgent(env_id, config, total_steps)

    def distributed(self) -> ImpalaSamplers:
        """Its distributed part: samplers of unrolls, one V-trace learner."""
        return ImpalaSamplers(self.agent)

    def build(self, env_id: str, config: ImpalaConfig, total_steps: int, eval_envs: int
              ) -> mg.MetaGraph:
        """The learner's graph: `learn` on the agent's trajectory spaces and `greedy` for
        evaluation."""
        agent = self.agent(env_id, config, total_steps)
        return mg.build(agent, {**agent.trajectory_spaces(), "key": PRNGKey(),
                                "observation": agent.rollout.acting_space_of(eval_envs)},
                        apis=["learn", "greedy", "act"])

