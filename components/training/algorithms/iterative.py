"""PPO and DQN (`--algo ppo`, `--algo dqn`): agents whose `train(key, iterations)` runs up to
`iterations_per_call` whole iterations in one executable (`components.agents.iterations`);
`start(key)` resets their environments first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import jax
import numpy as np

import metagraph as mg
from components.agents.dqn_agent import DQNAgent
from components.agents.dqn_config import DQNConfig
from components.agents.ppo_agent import PPOAgent
from components.agents.ppo_config import PPOConfig
from components.training.algorithm import Algorithm, AlgorithmBase, Distributed
from components.training.algorithms.rows import learned_rows, per_seed, summarise_iterations
from components.training.metrics import Row
from metagraph.spaces import Discrete, PRNGKey

# what every iteration of these agents returns; further statistics (SAC's alpha) become columns
ITERATION_KEYS = ("steps", "episode_return_sum", "episode_length_sum", "episodes", "loss")


class IterativeAlgorithm(Algorithm):
    """An agent class (`agent_class`) with the APIs `start(key)`, `train(key, iterations)` and
    `greedy(observation)`, a `rollout` part and a static `steps_per_iteration(config)`,
    trained a call of up to `iterations_per_call` iterations at a time."""

    agent_class: ClassVar[type]
    precompile = ("start", "train")  # in calling order: the worker compiles in turn
    acting_apis: ClassVar[tuple[str, ...]] = ("greedy", "act")
    """The agent's acting APIs built into the graph: `greedy(observation)`, and
    `act(observation, key)` (stochastic) where the agent has one."""

    def agent(self, env_id: str, config: Any, total_steps: int) -> mg.Component:
        """The agent `build` builds: `agent_class(env_id, config, total_steps)`. Override it
        to give the agent other parts (`policy=`, `preprocessor=`, `loss=`, `optimizer=`)."""
        return self.agent_class(env_id, config, total_steps)

    def build(self, env_id: str, config: Any, total_steps: int, eval_envs: int
              ) -> mg.MetaGraph:
        """The agent's graph with its `start`, `train` and acting (`acting_apis`) APIs."""
        agent = self.agent(env_id, config, total_steps)
        return mg.build(agent, {"key": PRNGKey(),
                                "observation": agent.rollout.acting_space_of(eval_envs),
                                "iterations": Discrete(config.iterations_per_call + 1)},
                        apis=["start", "train", *self.acting_apis])

    def steps_per_iteration(self, config: Any) -> int:
        """The environment steps one iteration takes under `config`."""
        return self.agent_class.steps_per_iteration(config)

    def start(self, exe: Any, key: jax.Array) -> None:
        """Reset the agent's environments with `key`."""
        exe.start(np.asarray(key))

    def run(self, exe: Any, config: Any, key: jax.Array, iterations: int | None
            ) -> list[Row]:
        """Rows of the next `iterations` iterations (at most `iterations_per_call`)."""
        count = min(iterations, config.iterations_per_call)
        counts = count if exe.seeds is None else np.full(exe.seeds, count)
        out = per_seed(exe, exe.train(np.asarray(key), np.asarray(counts, np.int32)))
        episodes = out["episodes"][:, :count]  # outputs are [seeds, iterations_per_call]
        means = {f"episode_{what}_mean": np.where(
            episodes > 0, out[f"episode_{what}_sum"][:, :count] / np.maximum(episodes, 1),
            np.nan) for what in ("return", "length") if f"episode_{what}_sum" in out}
        rows = summarise_iterations({"steps": out["steps"][:, :count], **means,
                                     "episodes": episodes,
                                     "loss": out["loss"][:, :count],
                                     **{name: value[:, :count] for name, value in out.items()
                                        if name not in ITERATION_KEYS}})
        return rows


class PPOSamplers(Distributed):
    """PPO's distributed form: each sampler rolls out `num_steps` x `num_envs` steps with the
    published policy (and a preprocessor's statistics; `PPOAgent.sample`), its environment
    wrapped as the fused form's; the learner learns each batch as it arrives (`PPOAgent.learn`:
    GAE, the clipped-surrogate epochs) and keeps the observation moments of the batch's
    sampler. Asynchronous: with `--runner pipeline` a batch is at most
    one weight version old, which PPO's ratio against the behaviour policy's log-probability
    already covers; in turn (`--runner local`, one sampler) none."""

    sample_api = "sample"
    shared = ("policy", "preprocessor")

    def __init__(self, make_agent: Callable[..., PPOAgent]):
        self.make_agent = make_agent

    def build_sampler(self, env_id: str, config: PPOConfig, num_samplers: int
                      ) -> mg.MetaGraph:
        """A sampler's graph: the agent's `start` and `sample` APIs."""
        return mg.build(self.make_agent(env_id, config, 1_000_000), {"key": PRNGKey()},
                        apis=["start", "sample"])

    def build_learner(self, algorithm: AlgorithmBase, env_id: str, config: PPOConfig,
                      total_steps: int, eval_envs: int) -> mg.MetaGraph:
        """The fused graph's APIs plus `learn` on a batch's spaces (the same state)."""
        agent = self.make_agent(env_id, config, total_steps)
        return mg.build(agent, {"key": PRNGKey(),
                                "observation": agent.rollout.acting_space_of(eval_envs),
                                "iterations": Discrete(config.iterations_per_call + 1),
                                **agent.trajectory_spaces()},
                        apis=["start", "train", "learn", *PPO.acting_apis])

    def start_sampler(self, exe: Any, key: jax.Array) -> None:
        """Reset the sampler's environments with `key`."""
        exe.start(np.asarray(key))

    def update(self, exe: Any, config: PPOConfig, batches: list[dict[str, Any]],
               key: jax.Array) -> list[Row]:
        """One `learn` call per batch (the update's key with it); a metrics row for each.
        With `normalise_observations` each sampler's `NormalizeObservation` keeps its own
        moments (its observations come normalised by them), and the learner takes those of
        the batch it learns: what it acts with and saves."""
        normaliser = exe.graph.root.observation_normaliser
        if normaliser is not None:
            exe.set_state({name: batches[-1][f"observation_{name}"]
                           for name in ("count", "mean", "var")},
                          exe.graph.scope_of(normaliser))
        return learned_rows(exe, batches, key=key)


class PPO(IterativeAlgorithm):
    """Proximal policy optimisation (`PPOAgent`), PureJaxRL-style fused iterations; or
    samplers and a learner (`distributed`: `--runner pipeline`, `--num-samplers K`)."""

    config_class = PPOConfig

    def distributed(self) -> PPOSamplers:
        """Its distributed form: samplers of rollouts, one learner (`PPOSamplers`)."""
        return PPOSamplers(self.agent)
    agent_class = PPOAgent


class DQN(IterativeAlgorithm):
    """Deep Q-learning with prioritised replay and n-step returns (`DQNAgent`)."""

    config_class = DQNConfig
    agent_class = DQNAgent
    acting_apis = ("greedy",)  # ε-greedy lives in the rollout; no stochastic `act`
