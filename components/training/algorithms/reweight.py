"""Path reweighting (`--algo reweight`): locally, `sample` samples and reweights all N paths
in one executable; distributed, each of K samplers runs `sample_paths` on its N / K share and
the learner's `select` reweights all N together before fitting."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

import metagraph as mg
from components.agents.reweight_agent import ReweightAgent
from components.agents.reweight_config import ReweightConfig
from components.training.algorithm import Algorithm, Distributed
from components.training.algorithms.rows import per_seed, summarise
from components.training.inputs import inputs_for
from components.training.metrics import Row
from metagraph.spaces import Box, Discrete, PRNGKey


class ReweightSamplers(Distributed):
    """Synchronous: every sampler returns its share of the paths with their qualities; the
    learner reweights all of them together (`select`: bits, effective sample size, the M
    paths resampled from Q) and fits those for `fit_steps` steps."""

    sample_api = "sample_paths"
    synchronous = True

    def __init__(self, make_agent: Callable[[str, ReweightConfig], ReweightAgent]
                 = ReweightAgent):
        self.make_agent = make_agent

    def check(self, config: ReweightConfig, num_samplers: int) -> None:
        """Raise ValueError unless `num_envs` (the N paths) divides evenly among the samplers."""
        if config.num_envs % num_samplers:
            raise ValueError(f"reweight: num_envs={config.num_envs} must divide evenly "
                             f"among {num_samplers} samplers")

    def build_sampler(self, env_id: str, config: ReweightConfig, num_samplers: int
                      ) -> mg.MetaGraph:
        """A sampler's graph: `sample_paths` for its share of the paths."""
        self.check(config, num_samplers)
        share = dataclasses.replace(config, num_envs=config.num_envs // num_samplers,
                                    fit_paths=1)
        return mg.build(self.make_agent(env_id, share), {"key": PRNGKey()},
                        apis=["sample_paths"])

    def update(self, exe: Any, config: ReweightConfig, batches: list[dict[str, Any]],
               key: jax.Array) -> list[Row]:
        """Select paths from all samplers' quality scores and fit the policy to them; one
        metrics row."""
        paths = {name: np.concatenate([batch[name] for batch in batches])
                 for name in batches[0]}
        selected = exe.select(paths["quality"], np.asarray(key))
        chosen = np.asarray(selected["chosen"])
        fit = {name: value[chosen] for name, value in paths.items()}
        fit["weight"] = np.full((len(chosen),), 1.0 / len(chosen), np.float32)
        for _ in range(config.fit_steps):
            fitted = exe.fit(*inputs_for(exe.graph, "fit", fit))
        return [Row(int(paths["mask"].sum()), float(paths["return"].mean()),
                    {"episode_return_max": float(paths["return"].max()),
                     "bits": float(selected["bits"]), "ess": float(selected["ess"]),
                     "loss": float(fitted["loss"])})]


class Reweight(Algorithm):
    """Sample N paths, weight each by its quality, fit the policy to the reweighted path
    distribution by weighted maximum likelihood (`ReweightAgent`)."""

    config_class = ReweightConfig
    precompile = ("sample",)
    progress_metrics = ("bits",)

    def agent(self, env_id: str, config: ReweightConfig) -> ReweightAgent:
        """The agent `build` builds (and every sampler, distributed): `ReweightAgent(env_id,
        config)`. Override it to give the agent other parts (`policy=`, `preprocessor=`, ...)."""
        return ReweightAgent(env_id, config)

    def distributed(self) -> ReweightSamplers:
        """Its distributed part: samplers of paths, one learner that selects and fits."""
        return ReweightSamplers(self.agent)

    def build(self, env_id: str, config: ReweightConfig, total_steps: int, eval_envs: int
              ) -> mg.MetaGraph:
        """The agent's graph: `sample`, `fit`, `select` and `greedy` over its path spaces."""
        agent = self.agent(env_id, config)
        m, t = config.fit_paths, agent.horizon
        observations = agent.rollout.observation_space_of
        action_space = agent.rollout.env.action_space
        actions = (Discrete(action_space.n, shape=(m, t)) if isinstance(action_space, Discrete)
                   else Box((m, t, *action_space.shape)))
        spaces = {"key": PRNGKey(), "obs": observations(m, t), "action": actions,
                  "mask": Box((m, t)), "weight": Box((m,)), "quality": Box((config.num_envs,)),
                  "observation": agent.rollout.acting_space_of(eval_envs)}
        return mg.build(agent, spaces, apis=["sample", "fit", "greedy", "act", "select"])

    def run(self, exe: Any, config: ReweightConfig, key: jax.Array, iterations: int | None
            ) -> list[Row]:
        """One iteration: sample paths, fit `fit_steps` times; one metrics row."""
        out = exe.sample(np.asarray(key))
        for _ in range(config.fit_steps):
            fitted = exe.fit(out["obs"], out["action"], out["mask"], out["weight"])
        seeds = per_seed(exe, {"steps": out["steps"], "episode_return_mean": out["return_mean"],
                               "episode_return_max": out["return_max"], "bits": out["bits"],
                               "ess": out["ess"], "loss": fitted["loss"]})
        # every path is one whole episode: the curve's rolling mean counts them
        return [summarise(seeds).with_extra(episodes=config.num_envs * (exe.seeds or 1))]
