"""The algorithms `metagraph train` knows: how each builds its agent's graph, starts it, and
runs one call's worth of training (one or more iterations, one metrics row each)."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import numpy as np

import metagraph as mg
from components.agents.dqn_agent import DQNAgent
from components.agents.dqn_config import DQNConfig
from components.agents.impala_agent import ImpalaAgent
from components.agents.impala_config import ImpalaConfig
from components.agents.ppo_agent import PPOAgent
from components.agents.ppo_config import PPOConfig
from components.agents.reweight_agent import ReweightAgent
from components.agents.reweight_config import ReweightConfig
from metagraph.spaces import Box, Discrete, PRNGKey


class Reweight:
    """Locally, `rollout` samples and reweights all N paths in one executable. Distributed,
    each sampler runs `sample_paths` on its share of the N (a graph built for N / K paths) and
    the learner's `select` reweights all of them together."""

    name = "reweight"
    config_class = ReweightConfig
    sample_api = "sample_paths"
    precompile = ("rollout",)

    @staticmethod
    def build(env_id: str, config: ReweightConfig, total_steps: int, eval_envs: int
              ) -> mg.MetaGraph:
        agent = ReweightAgent(env_id, config)
        m, t = config.fit_paths, agent.horizon
        obs_shape = agent.env.observation_space.shape
        action_space = agent.env.action_space
        actions = (Discrete(action_space.n, shape=(m, t)) if isinstance(action_space, Discrete)
                   else Box((m, t, *action_space.shape)))
        spaces = {"key": PRNGKey(), "obs": Box((m, t, *obs_shape)), "action": actions,
                  "mask": Box((m, t)), "weight": Box((m,)), "quality": Box((config.num_paths,)),
                  "observation": Box((eval_envs, *obs_shape))}
        return mg.build(agent, spaces, apis=["rollout", "fit", "greedy", "select"])

    @staticmethod
    def build_sampler(env_id: str, config: ReweightConfig, num_samplers: int) -> mg.MetaGraph:
        if config.num_paths % num_samplers:
            raise ValueError(f"reweight: num_paths={config.num_paths} must divide evenly "
                             f"among {num_samplers} samplers")
        share = dataclasses.replace(config, num_paths=config.num_paths // num_samplers,
                                    fit_paths=1)
        return mg.build(ReweightAgent(env_id, share), {"key": PRNGKey()}, apis=["sample_paths"])

    @staticmethod
    def start_sampler(exe: Any, key: jax.Array) -> None:
        pass

    @staticmethod
    def start(exe: Any, key: jax.Array) -> None:
        pass  # every rollout starts its own episodes

    @staticmethod
    def run(exe: Any, config: ReweightConfig, key: jax.Array) -> list[dict[str, Any]]:
        out = exe.rollout(np.asarray(key))
        for _ in range(config.fit_steps):
            fitted = exe.fit(out["obs"], out["action"], out["mask"], out["weight"])
        seeds = per_seed(exe, {"steps": out["steps"], "episode_return_mean": out["return_mean"],
                               "episode_return_max": out["return_max"], "bits": out["bits"],
                               "ess": out["ess"], "loss": fitted["loss"]})
        return [summarise(seeds)]


class PPO:
    name = "ppo"
    config_class = PPOConfig
    agent_class = PPOAgent
    precompile = ("start", "train")  # in calling order: the worker compiles in turn

    @classmethod
    def build(cls, env_id: str, config: Any, total_steps: int, eval_envs: int
              ) -> mg.MetaGraph:
        agent = cls.agent_class(env_id, config, total_steps)
        obs_shape = agent.env.observation_space.shape
        return mg.build(agent, {"key": PRNGKey(), "observation": Box((eval_envs, *obs_shape)),
                                "iterations": Discrete(config.iterations_per_call + 1)},
                        apis=["start", "train", "greedy"])

    @classmethod
    def total_iterations(cls, config: Any, steps: int) -> int:
        """The iterations a run of `steps` environment steps does: the whole ones, at least
        one (what the agent's schedules, PPO's learning rate, were made for)."""
        return max(1, steps // cls.agent_class.steps_per_iteration(config))

    @staticmethod
    def start(exe: Any, key: jax.Array) -> None:
        exe.start(np.asarray(key))

    @staticmethod
    def run(exe: Any, config: PPOConfig, key: jax.Array, iterations: int
            ) -> list[dict[str, Any]]:
        """Rows of the next `iterations` iterations (at most `iterations_per_call`)."""
        count = min(iterations, config.iterations_per_call)
        seeds = getattr(exe, "seeds", None)
        out = per_seed(exe, exe.train(np.asarray(key), np.asarray(
            count if seeds is None else np.full(seeds, count), np.int32)))  # [seeds, K]
        rows = []
        for i in range(count):
            episodes = out["episodes"][:, i]
            means = np.where(episodes > 0, out["episode_return_sum"][:, i]
                             / np.maximum(episodes, 1), np.nan)
            rows.append(summarise({"steps": out["steps"][:, i], "episode_return_mean": means,
                                   "episodes": episodes, "loss": out["loss"][:, i]}))
        return rows


class DQN(PPO):
    """Same calling pattern as PPO: `start`, then `train` runs several iterations."""

    name = "dqn"
    config_class = DQNConfig
    agent_class = DQNAgent


class Impala:
    """IMPALA: only distributed (samplers and a learner, in one process or on Ray). The
    learner's graph (`build`) has `learn` and `greedy`; a sampler's has `start` and
    `rollout`."""

    name = "impala"
    config_class = ImpalaConfig
    sample_api = "rollout"
    distributed_only = True

    @staticmethod
    def build(env_id: str, config: ImpalaConfig, total_steps: int, eval_envs: int
              ) -> mg.MetaGraph:
        agent = ImpalaAgent(env_id, config)
        obs_shape = agent.env.observation_space.shape
        return mg.build(agent, {**agent.trajectory_spaces(),
                                "observation": Box((eval_envs, *obs_shape))},
                        apis=["learn", "greedy"])

    @staticmethod
    def build_sampler(env_id: str, config: ImpalaConfig, num_samplers: int) -> mg.MetaGraph:
        return mg.build(ImpalaAgent(env_id, config), {"key": PRNGKey()},
                        apis=["start", "rollout"])

    @staticmethod
    def start_sampler(exe: Any, key: jax.Array) -> None:
        exe.start(np.asarray(key))


def per_seed(exe: Any, out: dict[str, Any]) -> dict[str, np.ndarray]:
    """Outputs with a leading seed axis (added for a single-seed executor)."""
    seeded = getattr(exe, "seeds", None) is not None
    return {k: np.asarray(v) if seeded else np.asarray(v)[None] for k, v in out.items()}


def summarise(values: dict[str, np.ndarray]) -> dict[str, Any]:
    """One metrics row from per-seed values: means over seeds (steps per seed), and the
    per-seed returns when there are several seeds. A return is None when no episode ended."""
    row: dict[str, Any] = {"steps": int(round(float(np.mean(values["steps"]))))}
    for name, value in values.items():
        if name == "steps":
            continue
        finite = value[np.isfinite(value)] if value.dtype.kind == "f" else value
        row[name] = float(np.mean(finite)) if finite.size else None
        if name == "episodes":
            row[name] = int(np.sum(value))
    returns = values["episode_return_mean"]
    if returns.shape[0] > 1:
        row["episode_return_mean_per_seed"] = [None if not np.isfinite(r) else float(r)
                                               for r in returns]
    return row


ALGORITHMS = {algorithm.name: algorithm for algorithm in (Reweight, PPO, DQN, Impala)}
