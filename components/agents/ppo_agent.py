"""PPO (Schulman et al. 2017) as a meta-graph, in the style of PureJaxRL: one executable runs
`iterations_per_call` whole iterations, each a fused rollout of `num_steps` steps over
`num_envs` native environments (a `Rollout`: policy sampling and `env.step` in one
`lax.scan`), GAE, and `epochs` x `minibatches` clipped-surrogate updates (`mg.scan` over
optimizer steps).

APIs: `start(key)` resets the environments; `train(key, iterations)` runs the first
`iterations` of `iterations_per_call` iterations and returns their statistics;
`greedy(observation)` for evaluation. Its parts (the rollout, the policy, an observation
preprocessor, the loss, the optimizer) swap without subclassing (see `PPOAgent`).

The continuous-control details (CleanRL's `ppo_continuous_action.py`, rl-baselines3-zoo), each
a config switch, off by default and on in the MuJoCo tasks' shipped defaults: the environment
wrapped as PureJaxRL wraps it (`parts.wrapped`): actions clipped (`ClipAction`: log-probabilities
of the unclipped samples), observations normalised (`NormalizeObservation`), rewards scaled
(`NormalizeReward`: the reported returns stay the task's); a state-independent log std and
orthogonal initialisation (the default `Policy`). With `bootstrap_truncated`, an episode cut
by the time limit is bootstrapped with the value of its final observation, as SB3 does.

Games need no switch: on a two-player game (`components.envs.games`) the same code plays
itself. Its environments are the game's `Environment` (a step is one move by the player to
move, observed as that player's view with its legal moves, {"obs", "legal"}), so the default
policy, chosen from that space, is a `MaskedPolicy` (`parts.policy_for`); the advantages are
GAE with `turn_discounts`, the next position's value kept where the mover moves again and
negated where the opponent moves there (the negamax GAE), as the trajectory reports it
(`Trajectory.moves_again`: every step but an episode's last for a task of one player, where
this is GAE's own discount).
"""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jnp
import optax

import metagraph as mg
from components import losses
from components.agents.iterations import IterativeAgent
from components.agents.parts import (
    LossPart,
    cnn_input_shape,
    learning_rate,
    make_env,
    make_loss,
    make_optimizer,
    make_policy,
    stacked_images,
    wrapped,
)
from components.agents.ppo_config import PPOConfig
from components.agents.preprocessing import acting_view, check_preprocessor, preprocess
from components.agents.rollout import Rollout
from components.agents.self_play import check_playable, deprecated_self_play
from components.envs.wrappers import (
    ClipAction,
    NormalizeObservation,
    NormalizeReward,
    task_actions,
    wrapper_of,
)
from components.losses import PPOLoss, gae
from components.networks import CNN
from components.policy import Policy
from metagraph.spaces import Bool, Box, Dict, Discrete

ACTIVATIONS = {"tanh": jax.nn.tanh, "relu": jax.nn.relu}


def __getattr__(name: str) -> Any:  # the return helpers' old home (components.losses now)
    if name not in ("bootstrap_truncated", "truncated_values"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"components.agents.ppo_agent.{name} is now components.losses.{name}",
                  DeprecationWarning, stacklevel=2)
    return getattr(losses, name)


class PPOAgent(IterativeAgent):
    """PPO over `config.num_envs` environments of `env_id` (see the module docstring).

    Args:
        env_id: the environment (`config.door` says which door steps it).
        config: the hyperparameters (`PPOConfig`).
        total_steps: the training's length, for the learning-rate annealing of the default
            optimizer.
        name: the scope name (default "ppo_agent").
        env: the environments (default `Environment(env_id, config.num_envs, door=config.door,
            **config.env_kwargs)`): any component with its `reset`/`step` APIs, `num_envs`
            and spaces (`components.agents.parts.make_env`); the config's switches wrap it
            further (`components.agents.parts.wrapped`).
        policy: the policy (default `Policy(action_space, hidden=config.hidden,
            value=config.value, squash=False)` with the config's `activation`, `log_std`,
            `log_std_init` and `orthogonal_init`, its torso a `CNN` over the observation's
            planes where `config.cnn_channels` has convolutions; a `Policy` given here takes
            those settings for the ones its constructor was not given). It needs the APIs
            `sample_action(obs, key)`, `value(obs)`, `greedy_action(obs)` and what the loss
            calls (the default loss: `evaluate(obs, action)`).
        preprocessor: a component applied to observations before the policy
            (`forward(obs)`, optionally `update(obs)` called during rollouts; see
            `components.agents.preprocessing`). Default: none (`normalise_observations`
            wraps the environment in `NormalizeObservation`).
        loss: a component with `loss(obs, action, old_log_prob, advantage, target_value,
            old_value) -> (total, stats)`, or a function of the policy returning one
            (default `PPOLoss(policy, clip, value_coef, entropy_coef)` from the config).
        optimizer: an optax `GradientTransformation` (default Adam with eps 1e-5, its rate
            `config.learning_rate`, annealed linearly to 0 when `config.anneal_lr`); gradients
            are clipped to `config.max_grad_norm` first.

    Raises:
        ValueError: `config.clip_actions` for an action space that is not a bounded Box;
            `config.normalise_observations` for observations that are no float Box (a
            game's).
    """

    def __init__(self, env_id: str, config: PPOConfig = PPOConfig(),
                 total_steps: int = 500_000, name: str | None = None, *,
                 env: mg.Component | None = None,
                 policy: mg.Component | None = None, preprocessor: mg.Component | None = None,
                 loss: LossPart = None, optimizer: optax.GradientTransformation | None = None):
        super().__init__(name)
        self.config = config
        check_playable("PPOAgent", env_id, config.env_kwargs)
        # a CNN reads the task's images; an MLP vectors
        env = wrapped(make_env("PPOAgent", env, env_id, config, vectors=not config.cnn_channels),
                      config)
        if config.cnn_channels and isinstance(env.observation_space, Dict):
            raise ValueError(f"PPOAgent: cnn_channels reads images; {env_id}'s observations "
                             f"are {env.observation_space!r}")
        self.rollout = Rollout(env)
        self.preprocessor = check_preprocessor("PPOAgent", preprocessor)
        policy_given = policy is not None
        if config.cnn_channels and not policy_given:
            policy = Policy(env.action_space, value=config.value,
                            observation_rank=len(env.observation_space.shape), torso=CNN(
                config.cnn_channels, config.cnn_kernel, config.cnn_stride, hidden=config.hidden,
                input_shape=cnn_input_shape("PPOAgent", env_id, env), padding=config.cnn_padding,
                channels_first=env.env_spec.channels_first, stacked=stacked_images(env)))
        self.policy = make_policy(
            policy, env.action_space, config.value, env.observation_space, hidden=config.hidden,
            squash=False, activation=ACTIVATIONS[config.activation], log_std=config.log_std,
            log_std_init=config.log_std_init, orthogonal=config.orthogonal_init)
        self.loss = make_loss("PPOAgent", loss, self.policy, policy_given, lambda p: PPOLoss(
            p, clip=config.clip, value_coef=config.value_coef, entropy_coef=config.entropy_coef))
        updates = max(1, total_steps // self.steps_per_iteration(config)) \
            * config.epochs * config.minibatches
        rate = learning_rate(config, updates)
        self.optimizer = make_optimizer("PPOAgent", optimizer, self.loss, self.policy,
                                        optax.adam(rate, eps=1e-5), config.max_grad_norm)

    @property
    def action_bounds(self):
        """Deprecated: the `ClipAction` wrapper's (low, high), or None."""
        env = self._deprecated("action_bounds", ClipAction)
        return None if env is None else (env.low, env.high)

    @property
    def reward_normaliser(self):
        """Deprecated: the `NormalizeReward` wrapper's normaliser, or None."""
        env = self._deprecated("reward_normaliser", NormalizeReward)
        return None if env is None else env.reward_normaliser

    @property
    def self_play(self) -> bool:
        """Deprecated: whether the task is a two-player game (`rollout.num_players > 1`)."""
        return deprecated_self_play(self)

    def _deprecated(self, name: str, kind: type) -> Any:
        warnings.warn(f"PPOAgent.{name} is deprecated: it is the {kind.__name__} wrapper's, "
                      f"wrapper_of(agent.rollout.env, {kind.__name__})", DeprecationWarning,
                      stacklevel=3)
        return wrapper_of(self.rollout.env, kind)

    def _acting_view(self, observation):
        """What the policy sees of the task's observations when acting (`acting_view`)."""
        return acting_view(self.rollout.env, self.preprocessor, observation)

    def _to_env(self, action):
        """The actions the task is stepped with (`task_actions`): what `greedy` and `act` give."""
        return task_actions(self.rollout.env, action)

    @staticmethod
    def steps_per_iteration(config: PPOConfig) -> int:
        """Environment steps per iteration: num_envs * num_steps."""
        return config.num_envs * config.num_steps

    def _iteration(self, key):
        cfg = self.config
        rollout_key, shuffle_key = jax.random.split(key)

        def act(obs, step_key):  # the policy's sample; the environment gets it clipped
            seen = preprocess(self.preprocessor, obs, update=True)
            action, log_prob = self.policy.sample_action(seen, step_key)
            return action, (seen, action, log_prob, self.policy.value(seen))

        trajectory = self.rollout.run(act, rollout_key, cfg.num_steps)
        obs, action, log_prob, value = trajectory.extras
        cut_value = (losses.truncated_values(trajectory, self._value_of) if cfg.bootstrap_truncated
                     else None)
        learned = self._learn_from(obs, action, log_prob, value, trajectory.rewards,
                                   trajectory.done, trajectory.moves_again, cut_value,
                                   self._value_of(trajectory.last_observations), shuffle_key)
        return {**trajectory.episode_statistics(), **learned,
                "steps": jnp.asarray(cfg.num_envs * cfg.num_steps, jnp.int32)}

    def _value_of(self, observations):
        """V of raw observations (preprocessed with the current statistics, not updated)."""
        return self.policy.value(preprocess(self.preprocessor, observations))

    def _learn_from(self, seen, action, log_prob, value, reward, done, moves_again, cut_value,
                    last_value, key):
        """The learning half of an iteration, from a time-major trajectory [T, N] of the
        observations the policy saw, its actions, their log-probabilities and values, the
        rewards and episode ends, whether each step's mover moves again
        (`Trajectory.moves_again`), V(final observation) where a step truncated an episode
        (None without `bootstrap_truncated`) and V(last observations) [N]: rewards times
        `reward_scale`, GAE, `epochs` x `minibatches` clipped-surrogate updates. Returns the
        mean loss, and the policy's mean entropy over the updates where the loss reports one
        (`entropy` in its stats, as `PPOLoss` does): a policy that stops exploring shows
        there."""
        cfg = self.config
        learned = reward * cfg.reward_scale  # (scaled by `NormalizeReward` where wrapped)
        if cut_value is not None:
            learned = losses.bootstrap_truncated(learned, cut_value, cfg.gamma)
        values = jnp.concatenate([value, last_value[None]])
        # each step from its mover's view: the next position's value kept where the mover
        # moves again (every step of a task of one player), negated where the opponent does
        # (negamax), 0 where the episode ended
        discounts = cfg.gamma * losses.turn_discounts(done, moves_again, "PPOAgent")
        advantage = gae(learned, discounts, values, cfg.gae_lambda)
        batch = jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])),
                             (seen, action, log_prob, advantage, advantage + value, value))
        size = reward.size
        minibatch = size // cfg.minibatches

        def epoch(_, epoch_key):
            order = jax.random.permutation(epoch_key, size)
            shuffled = jax.tree.map(
                lambda x: x[order].reshape((cfg.minibatches, minibatch, *x.shape[1:])), batch)

            def update(_, mb):
                obs_mb, action_mb, logp_mb, adv_mb, target_mb, value_mb = mb
                adv_mb = (adv_mb - adv_mb.mean()) / (adv_mb.std() + 1e-8)
                stats = self.optimizer.step(obs_mb, action_mb, logp_mb, adv_mb, target_mb,
                                            value_mb)
                aux = stats.get("aux")
                reported = {"loss": stats["loss"]}
                if isinstance(aux, dict) and "entropy" in aux:
                    reported["entropy"] = aux["entropy"]
                return None, reported

            return mg.scan(update, None, shuffled)

        _, reported = mg.scan(epoch, None, jax.random.split(key, cfg.epochs))
        return {name: values.mean() for name, values in reported.items()}

    # ---- the distributed form (`components.training.algorithms.iterative.PPOSamplers`) ----
    def trajectory_spaces(self) -> dict[str, mg.spaces.Space]:
        """The spaces of `learn`'s inputs: what `sample` returns for one batch."""
        t, n = self.config.num_steps, self.config.num_envs
        observations = self.rollout.observation_space_of
        actions = self.rollout.env.action_space
        action = (Discrete(actions.n, shape=(t, n)) if isinstance(actions, Discrete)
                  else Box((t, n, *actions.shape)))
        return {"obs": observations(t, n), "action": action, "log_prob": Box((t, n)),
                "value": Box((t, n)), "reward": Box((t, n)), "done": Bool((t, n)),
                "cut": Bool((t, n)), "final_obs": observations(t, n),
                "last_obs": observations(n), "moves_again": Bool((t, n))}

    @mg.api(on_request=True)
    def sample(self, key):
        """A sampler's rollout of `num_steps` steps, continuing the episodes, with the
        policy (and a preprocessor's statistics) the learner published: the observations as
        the environment gave them (normalised by the sampler's own `NormalizeObservation`,
        whose moments it sends as `observation_mean`, `_var` and `_count`), the actions,
        their log-probabilities and values, rewards, episode ends, truncations (`cut`), final
        and last observations, whether each step's mover moves again
        (`Trajectory.moves_again`) for `learn`, and the statistics of the episodes that
        finished."""
        def act(obs, step_key):
            seen = preprocess(self.preprocessor, obs)
            action, log_prob = self.policy.sample_action(seen, step_key)
            return action, (obs, action, log_prob, self.policy.value(seen))

        trajectory = self.rollout.run(act, key, self.config.num_steps)
        obs, action, log_prob, value = trajectory.extras
        return {"obs": obs, "action": action, "log_prob": log_prob, "value": value,
                "reward": trajectory.rewards, "done": trajectory.done,
                "cut": trajectory.truncated & ~trajectory.terminated,
                "final_obs": trajectory.final_observations,
                "last_obs": trajectory.last_observations,
                "moves_again": trajectory.moves_again,
                **({} if self.observation_normaliser is None else {
                    f"observation_{name}": value for name, value in
                    self.observation_normaliser.moments(trajectory.last_observations).items()}),
                **trajectory.episode_statistics()}

    @property
    def observation_normaliser(self) -> mg.Component | None:
        """The `NormalizeObservation` wrapper's normaliser, or None (`PPOSamplers`)."""
        found = wrapper_of(self.rollout.env, NormalizeObservation)
        return None if found is None else found.observation_normaliser

    @mg.api(on_request=True)
    def learn(self, obs, action, log_prob, value, reward, done, cut, final_obs, last_obs,
              moves_again, key):
        """The learner's half of an iteration on a sampled batch (`sample`'s outputs): a
        preprocessor's statistics updated with the batch's observations, then the batch
        learned as `train` learns its own rollout. Returns the mean loss (and entropy, see
        `_learn_from`)."""
        seen = preprocess(self.preprocessor, obs, update=True)
        cut_value = (jnp.where(cut, self._value_of(final_obs), 0.0)
                     if self.config.bootstrap_truncated else None)
        return self._learn_from(seen, action, log_prob, value, reward, done, moves_again,
                                cut_value, self._value_of(last_obs), key)

    @mg.api
    def greedy(self, observation):
        """The policy's most likely actions for a batch of observations (clipped to the action
        space when `config.clip_actions`)."""
        return self._to_env(self.policy.greedy_action(self._acting_view(observation)))

    @mg.api
    def act(self, observation, key):
        """Actions sampled from the policy for a batch of observations (as `greedy`,
        clipped when `config.clip_actions`): `evaluate --stochastic`, `export --stochastic`."""
        return self._to_env(self.policy.sample_action(self._acting_view(observation), key)[0])
