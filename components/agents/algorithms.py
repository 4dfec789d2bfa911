"""The algorithms `metagraph train` knows: how each builds its agent's graph, starts it, and
runs one call's worth of training (one or more iterations, one metrics row each)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

import metagraph as mg
from components.agents.dqn_agent import DQNAgent
from components.agents.dqn_config import DQNConfig
from components.agents.ppo_agent import PPOAgent
from components.agents.ppo_config import PPOConfig
from components.agents.reweight_agent import ReweightAgent
from components.agents.reweight_config import ReweightConfig
from metagraph.spaces import Box, Discrete, PRNGKey


class Reweight:
    name = "reweight"
    config_class = ReweightConfig

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
                  "mask": Box((m, t)), "weight": Box((m,)),
                  "observation": Box((eval_envs, *obs_shape))}
        return mg.build(agent, spaces, apis=["rollout", "fit", "greedy"])

    @staticmethod
    def start(exe: Any, key: jax.Array) -> None:
        pass  # every rollout starts its own episodes

    @staticmethod
    def run(exe: Any, config: ReweightConfig, key: jax.Array) -> list[dict[str, Any]]:
        out = exe.rollout(np.asarray(key))
        for _ in range(config.fit_steps):
            fitted = exe.fit(out["obs"], out["action"], out["mask"], out["weight"])
        return [{"steps": int(out["steps"]), "episode_return_mean": float(out["return_mean"]),
                 "episode_return_max": float(out["return_max"]), "bits": float(out["bits"]),
                 "ess": float(out["ess"]), "loss": float(fitted["loss"])}]


class PPO:
    name = "ppo"
    config_class = PPOConfig

    @staticmethod
    def build(env_id: str, config: PPOConfig, total_steps: int, eval_envs: int
              ) -> mg.MetaGraph:
        agent = PPOAgent(env_id, config, total_steps)
        obs_shape = agent.env.observation_space.shape
        return mg.build(agent, {"key": PRNGKey(), "observation": Box((eval_envs, *obs_shape))},
                        apis=["start", "train", "greedy"])

    @staticmethod
    def start(exe: Any, key: jax.Array) -> None:
        exe.start(np.asarray(key))

    @staticmethod
    def run(exe: Any, config: PPOConfig, key: jax.Array) -> list[dict[str, Any]]:
        out = jax.tree.map(np.asarray, exe.train(np.asarray(key)))
        rows = []
        for i in range(config.iterations_per_call):
            episodes = int(out["episodes"][i])
            mean = float(out["episode_return_sum"][i]) / episodes if episodes else None
            rows.append({"steps": int(out["steps"][i]), "episode_return_mean": mean,
                         "episodes": episodes, "loss": float(out["loss"][i])})
        return rows


class DQN(PPO):
    """Same calling pattern as PPO: `start`, then `train` runs several iterations."""

    name = "dqn"
    config_class = DQNConfig

    @staticmethod
    def build(env_id: str, config: DQNConfig, total_steps: int, eval_envs: int
              ) -> mg.MetaGraph:
        agent = DQNAgent(env_id, config, total_steps)
        obs_shape = agent.env.observation_space.shape
        return mg.build(agent, {"key": PRNGKey(), "observation": Box((eval_envs, *obs_shape))},
                        apis=["start", "train", "greedy"])


ALGORITHMS = {algorithm.name: algorithm for algorithm in (Reweight, PPO, DQN)}
