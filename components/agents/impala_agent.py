"""IMPALA (Espeholt et al. 2018) as a meta-graph: actors and learner are the same graph, each
building the APIs its role needs.

- A sampler builds `start(key)` and `sample(key)`: `num_steps` steps of policy sampling and
  environment stepping over `num_envs` environments as one fused executable, returning the
  trajectory with the behaviour policy's log-probabilities.
- The learner builds `learn(...)`: one V-trace actor-critic update on a trajectory that may be
  several policy versions old, and `greedy(observation)` for evaluation.

An episode end (terminated or truncated) cuts the return: V-trace's discount is 0 there.

Its parts can be swapped without subclassing (keyword arguments, see `ImpalaAgent`): the
policy, an observation preprocessor, the loss and the optimizer.
"""

from __future__ import annotations

import optax

import metagraph as mg
from components.agents.impala_config import ImpalaConfig
from components.agents.parts import (
    LossPart,
    learning_rate,
    make_env,
    make_loss,
    make_optimizer,
    make_policy,
)
from components.agents.preprocessing import acting_view, check_preprocessor, preprocess
from components.agents.rollout import Rollout
from components.losses import VTraceLoss, bootstrap_truncated, truncated_values
from metagraph.spaces import Bool, Box, Discrete


class ImpalaAgent(mg.Component):
    """IMPALA's sampler and learner over `config.num_envs` environments of `env_id` (see the
    module docstring).

    Args:
        env_id: the environment (`config.door` says which door steps it).
        config: the hyperparameters (`ImpalaConfig`).
        total_steps: the training's length in environment steps, for the learning-rate
            annealing of the default optimizer (`config.anneal_lr`): one update per batch of
            `num_envs x num_steps` steps.
        name: the scope name (default "impala_agent").
        env: the environments (default `Environment(env_id, config.num_envs, door=config.door,
            **config.env_kwargs)`): any component with its `reset`/`step` APIs, `num_envs`
            and spaces (`components.agents.parts.make_env`).
        policy: the policy (default `Policy(action_space, hidden=config.hidden,
            value="separate", squash=False)`; a `Policy` given here takes those settings for
            the ones its constructor was not given). It needs `sample_action(obs, key)`,
            `greedy_action(obs)` and what the loss calls.
        preprocessor: a component applied to observations before the policy
            (`forward(obs)`, optionally `update(obs)` called during rollouts; see
            `components.agents.preprocessing`). `sample` returns the preprocessed
            observations, so the learner learns from what the policy saw; they keep the
            observations' shape (float32), which `trajectory_spaces` declares. Default: none.
        loss: a component with `loss(obs, action, reward, done, behaviour_log_prob, last_obs)
            -> (total, stats)`, or a function of the policy returning one (default
            `VTraceLoss(policy, ...)` from the config).
        optimizer: an optax `GradientTransformation` (default Adam at
            `config.learning_rate`, annealed linearly to 0 over the run's updates when
            `config.anneal_lr`); gradients are clipped to `config.max_grad_norm` first.
    """

    def __init__(self, env_id: str, config: ImpalaConfig = ImpalaConfig(),
                 total_steps: int = 1_000_000, name: str | None = None, *,
                 env: mg.Component | None = None,
                 policy: mg.Component | None = None,
                 preprocessor: mg.Component | None = None, loss: LossPart = None,
                 optimizer: optax.GradientTransformation | None = None):
        super().__init__(name)
        self.config = config
        self.rollout = Rollout(make_env("ImpalaAgent", env, env_id, config))
        self.preprocessor = check_preprocessor("ImpalaAgent", preprocessor)
        self.policy = make_policy(policy, self.rollout.env.action_space, "separate",
                                  hidden=config.hidden, squash=False)
        self.loss = make_loss("ImpalaAgent", loss, self.policy, policy is not None,
                              lambda p: VTraceLoss(
                                  p, gamma=config.gamma, value_coef=config.value_coef,
                                  entropy_coef=config.entropy_coef, clip_rho=config.clip_rho,
                                  clip_c=config.clip_c, clip_ratio=config.clip_ratio or None))
        updates = max(1, total_steps // (config.num_envs * config.num_steps))
        rate = learning_rate(config, updates)
        self.optimizer = make_optimizer("ImpalaAgent", optimizer, self.loss, self.policy,
                                        optax.adam(rate), config.max_grad_norm)

    def trajectory_spaces(self, num_envs: int | None = None) -> dict[str, mg.spaces.Space]:
        """The spaces of `learn`'s inputs for batches of `num_envs` environments."""
        t, n = self.config.num_steps, num_envs or self.config.num_envs
        observations = self.rollout.observation_space_of
        actions = self.rollout.env.action_space
        action = (Discrete(actions.n, shape=(t, n)) if isinstance(actions, Discrete)
                  else Box((t, n, *actions.shape)))
        return {"obs": observations(t, n), "action": action, "reward": Box((t, n)),
                "done": Bool((t, n)), "behaviour_log_prob": Box((t, n)),
                "last_obs": observations(n)}

    @staticmethod
    def batch_axes() -> dict[str, dict[str, int]]:
        """The batch (environment) axis of `learn`'s inputs, for a data-parallel learner
        (`backends.xla.DataParallel(batch_axes=...)`): time-major trajectories split along
        axis 1, the last observations along axis 0."""
        return {"learn": {"obs": 1, "action": 1, "reward": 1, "done": 1,
                          "behaviour_log_prob": 1, "last_obs": 0}}

    @mg.api
    def start(self, key):
        """Reset every environment (from `key`); returns the first observations."""
        return self.rollout.reset(key)

    @mg.api
    def sample(self, key):
        """`num_steps` steps of every environment, continuing their episodes: the trajectory
        for `learn` and the statistics of the episodes that finished in it."""
        def act(obs, step_key):
            seen = preprocess(self.preprocessor, obs, update=True)
            action, log_prob = self.policy.sample_action(seen, step_key)
            return action, (seen, log_prob)

        trajectory = self.rollout.run(act, key, self.config.num_steps)
        obs, log_prob = trajectory.extras
        learned = trajectory.rewards * self.config.reward_scale
        if self.config.bootstrap_truncated:  # a truncated episode's tail, by this policy
            learned = bootstrap_truncated(learned, truncated_values(
                trajectory, lambda o: self.policy.value(preprocess(self.preprocessor, o))),
                self.config.gamma)
        return {"obs": obs, "action": trajectory.actions, "reward": learned,
                "done": trajectory.done, "behaviour_log_prob": log_prob,
                "last_obs": preprocess(self.preprocessor, trajectory.last_observations),
                **trajectory.episode_statistics()}

    @mg.api
    def learn(self, obs, action, reward, done, behaviour_log_prob, last_obs):
        """One V-trace update; returns the loss, its terms and the gradient norm."""
        stats = self.optimizer.step(obs, action, reward, done, behaviour_log_prob, last_obs)
        return {"loss": stats["loss"], "grad_norm": stats["grad_norm"], **stats["aux"]}

    @mg.api
    def greedy(self, observation):
        """The policy's most likely actions for a batch of observations."""
        return self.policy.greedy_action(acting_view(self.rollout.env, self.preprocessor,
                                                     observation))

    @mg.api
    def act(self, observation, key):
        """Actions sampled from the policy for a batch of observations: `evaluate
        --stochastic`, `export --stochastic`."""
        return self.policy.sample_action(acting_view(self.rollout.env, self.preprocessor,
                                                     observation), key)[0]

