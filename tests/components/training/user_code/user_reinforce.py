"""A user's own algorithm, written as a user would from the docs: REINFORCE with reward-to-go
(Williams 1992), composed from the library's components (an Environment in the
EpisodeStatistics wrapper, Policy, Optimizer) and a loss component of its own, with a
distributed form (samplers run `rollout`, the learner `learn`). The tests copy this file
outside the package and name it on the command line."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

import metagraph as mg
from components.agents import AgentConfig
from components.envs import Environment
from components.envs.wrappers import EPISODE_RETURN, EpisodeStatistics
from components.losses import discounted_returns, policy_gradient
from components.optimizer import Optimizer
from components.policy import Policy
from components.training import (
    Algorithm,
    Distributed,
    DistributedAlgorithm,
    env_kwargs_of,
    inputs_for,
)
from metagraph.spaces import Box, Discrete, PRNGKey


@dataclasses.dataclass(frozen=True)
class ReinforceConfig(AgentConfig):
    num_envs: int = 4
    num_steps: int = 32
    learning_rate: float = 1e-2
    gamma: float = 0.99
    hidden: tuple[int, ...] = (16,)
    door: str = "native"
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)  # --env-kwargs


class ReinforceLoss(mg.Component):
    def __init__(self, policy: mg.Component):
        super().__init__()
        self.link("policy", policy)

    @mg.api
    def loss(self, obs, action, returns):
        advantage = (returns - returns.mean()) / (returns.std() + 1e-8)
        return policy_gradient(self.policy.log_prob(obs, action), advantage)


class ReinforceAgent(mg.Component):
    def __init__(self, env_id: str, config: ReinforceConfig):
        super().__init__()
        self.config = config
        # the returns of the episodes each step ends, in its extras (EPISODE_RETURN)
        self.env = EpisodeStatistics(Environment(env_id, config.num_envs,
                                                 **env_kwargs_of(config)))
        self.policy = Policy(self.env.action_space, hidden=config.hidden)
        self.loss = ReinforceLoss(self.policy)
        self.optimizer = Optimizer(self.loss, "loss", optax.adam(config.learning_rate),
                                   wrt=self.policy)
        self.baseline = None  # (a value baseline would go here; its state would be shared)

    def spaces(self) -> dict[str, Any]:
        t, n = self.config.num_steps, self.config.num_envs
        obs = self.env.observation_space.shape
        return {"obs": Box((t, n, *obs)), "action": Discrete(self.env.action_space.n,
                                                             shape=(t, n)),
                "reward": Box((t, n)), "done": Box((t, n))}

    def _obs(self):
        """The current observations: state, created as zeros."""
        shape = (self.config.num_envs, *self.env.observation_space.shape)
        return self.get_state("obs", jnp.zeros(shape, jnp.float32))

    @mg.api
    def start(self, key):
        self._obs()
        obs = self.env.reset(key)
        self.set_state("obs", obs)
        return obs

    @mg.api
    def rollout(self, key):
        obs = self._obs()

        def step(obs, step_key):
            action, _ = self.policy.sample_action(obs, step_key)
            out = self.env.step(action)
            done = (out.terminated | out.truncated).astype(jnp.float32)
            return out.obs, {"obs": obs, "action": action, "reward": out.reward,
                             "done": done, "episode_return": out.extras[EPISODE_RETURN]}

        last, trajectory = mg.scan(step, obs, jax.random.split(key, self.config.num_steps))
        self.set_state("obs", last)
        return trajectory

    @mg.api
    def learn(self, obs, action, reward, done):
        returns = discounted_returns(reward, self.config.gamma * (1.0 - done),
                                     jnp.zeros_like(reward[0]))
        return self.optimizer.step(obs, action, returns)["loss"]

    @mg.api
    def train(self, key):
        trajectory = self.rollout(key)
        loss = self.learn(trajectory["obs"], trajectory["action"], trajectory["reward"],
                          trajectory["done"])
        return {**trajectory, "loss": loss}

    @mg.api
    def greedy(self, observation):
        return self.policy.greedy_action(observation)


def row(batch: dict[str, Any], loss: Any) -> dict[str, Any]:
    done = np.asarray(batch["done"]) > 0
    ends = int(done.sum())
    mean = float(np.sum(batch["episode_return"])) / ends if ends else None
    return {"steps": int(done.size), "episode_return_mean": mean,
            "ends": ends, "loss": float(loss),
            "reward_sum": float(np.sum(batch["reward"]))}


class ReinforceSamplers(Distributed):
    sample_api = "rollout"
    shared = ("policy", "baseline")  # no baseline in this configuration: left out

    def build_sampler(self, env_id, config, num_samplers):
        agent = ReinforceAgent(env_id, config)
        return mg.build(agent, {"key": PRNGKey()}, apis=["start", "rollout"])

    def build_learner(self, algorithm, env_id, config, total_steps, eval_envs):
        # the API `update` calls, only in the learner of a distributed run
        return algorithm.build(env_id, config, total_steps, eval_envs, extra_apis=["learn"])

    def start_sampler(self, exe, key):
        exe.start(np.asarray(key))

    def update(self, exe, config, batches, key):
        return [row(batch, exe.learn(*inputs_for(exe.graph, "learn", batch)))
                for batch in batches]


class Reinforce(Algorithm):
    config_class = ReinforceConfig

    def distributed(self):
        return ReinforceSamplers()

    def build(self, env_id, config, total_steps, eval_envs, extra_apis=()):
        agent = ReinforceAgent(env_id, config)
        obs = agent.env.observation_space.shape
        return mg.build(agent, {"key": PRNGKey(), **agent.spaces(),
                                "observation": Box((eval_envs, *obs))},
                        apis=["start", "train", "greedy", *extra_apis])

    def steps_per_iteration(self, config):
        return config.num_envs * config.num_steps

    def start(self, exe, key):
        exe.start(np.asarray(key))

    def run(self, exe, config, key, iterations):
        out = exe.train(np.asarray(key))
        return [row(out, out["loss"])]


class NotAnAlgorithm:
    pass


class Unfinished(Algorithm):
    config_class = ReinforceConfig


class ReinforceBySamplers(DistributedAlgorithm):
    """The same REINFORCE as an algorithm that only runs as samplers and a learner (as IMPALA
    does): no `run`, its learner's graph and its `distributed()`."""

    config_class = ReinforceConfig

    def build(self, env_id, config, total_steps, eval_envs, extra_apis=()):
        return Reinforce().build(env_id, config, total_steps, eval_envs, extra_apis)

    def steps_per_iteration(self, config):
        return config.num_envs * config.num_steps

    def distributed(self):
        return ReinforceSamplers()


class UnfinishedBySamplers(DistributedAlgorithm):
    config_class = ReinforceConfig

    def build(self, env_id, config, total_steps, eval_envs):
        raise NotImplementedError
