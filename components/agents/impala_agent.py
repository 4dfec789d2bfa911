"""IMPALA (Espeholt et al. 2018) as a meta-graph: actors and learner are the same graph, each
building the APIs its role needs.

- A sampler builds `start(key)` and `rollout(key)`: `num_steps` steps of policy sampling and
  environment stepping over `num_envs` environments as one fused executable, returning the
  trajectory with the behaviour policy's log-probabilities.
- The learner builds `learn(...)`: one V-trace actor-critic update on a trajectory that may be
  several policy versions old, and `greedy(observation)` for evaluation.

An episode end (terminated or truncated) cuts the return: V-trace's discount is 0 there.
"""

from __future__ import annotations

import optax

import metagraph as mg
from components.agents.impala_config import ImpalaConfig
from components.agents.iterative_agent import IterativeAgent
from components.losses import VTraceLoss
from components.optimizer import Optimizer
from components.policy import Policy
from metagraph.spaces import Bool, Box, Discrete


class ImpalaAgent(IterativeAgent):
    def __init__(self, env_id: str, config: ImpalaConfig = ImpalaConfig(),
                 name: str | None = None):
        super().__init__(env_id, config, name)
        self.policy = Policy(self.env.action_space, hidden=config.hidden, value="separate",
                             squash=False)
        self.loss = VTraceLoss(self.policy, gamma=config.gamma, value_coef=config.value_coef,
                               entropy_coef=config.entropy_coef, clip_rho=config.clip_rho,
                               clip_c=config.clip_c)
        self.optimizer = Optimizer(self.loss, "loss", optax.adam(config.learning_rate),
                                   max_grad_norm=config.max_grad_norm, has_aux=True,
                                   wrt=self.policy, flat=True)

    def trajectory_spaces(self, num_envs: int | None = None) -> dict[str, mg.spaces.Space]:
        """The spaces of `learn`'s inputs for batches of `num_envs` environments."""
        t, n = self.config.num_steps, num_envs or self.config.num_envs
        obs_shape = self.env.observation_space.shape
        actions = self.env.action_space
        action = (Discrete(actions.n, shape=(t, n)) if isinstance(actions, Discrete)
                  else Box((t, n, *actions.shape)))
        return {"obs": Box((t, n, *obs_shape)), "action": action, "reward": Box((t, n)),
                "done": Bool((t, n)), "behaviour_log_prob": Box((t, n)),
                "last_obs": Box((n, *obs_shape))}

    @staticmethod
    def batch_axes() -> dict[str, dict[str, int]]:
        """The batch (environment) axis of `learn`'s inputs, for a data-parallel learner
        (`backends.xla.DataParallel(batch_axes=...)`): time-major trajectories split along
        axis 1, the last observations along axis 0."""
        return {"learn": {"obs": 1, "action": 1, "reward": 1, "done": 1,
                          "behaviour_log_prob": 1, "last_obs": 0}}

    @mg.api
    def rollout(self, key):
        """`num_steps` steps of every environment, continuing their episodes: the trajectory
        for `learn` and the returns of the episodes that finished in it."""
        def act(obs, step_key):
            return self.policy.sample_action(obs, step_key)

        (obs, action, log_prob, reward, done, finished), last_obs = \
            self._run_envs(act, key, self.config.num_steps)
        return {"obs": obs, "action": action, "reward": reward * self.config.reward_scale,
                "done": done, "behaviour_log_prob": log_prob, "last_obs": last_obs,
                "episode_return_sum": finished.sum(), "episodes": (finished != 0).sum()}

    @mg.api
    def learn(self, obs, action, reward, done, behaviour_log_prob, last_obs):
        """One V-trace update; returns the loss, its terms and the gradient norm."""
        stats = self.optimizer.step(obs, action, reward, done, behaviour_log_prob, last_obs)
        return {"loss": stats["loss"], "grad_norm": stats["grad_norm"], **stats["aux"]}

    @mg.api
    def greedy(self, observation):
        return self.policy.greedy_action(observation)

