"""DQN (Mnih et al. 2015) with double Q-learning (van Hasselt et al. 2016), n-step returns, a
target network and prioritised replay (Schaul et al. 2016), as a meta-graph. One executable
runs `iterations_per_call` iterations, each: an ε-greedy fused rollout of `rollout` steps over
`num_envs` native environments, its n-step transitions into the replay, and
`updates_per_iteration` prioritised updates (Huber loss, importance weights, new priorities;
with `alpha` 0 a uniform replay and no priorities; with `replay_frames`, stacked frames kept
once each: `FrameStackReplay`) once `learning_starts` environment steps are in the replay;
the target network is copied every `target_every` iterations.

Its parts can be swapped without subclassing (keyword arguments, see `DQNAgent`): the
Q-network, an observation preprocessor, the loss and the optimizer.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

import metagraph as mg
from components.agents.dqn_config import DQNConfig
from components.agents.iterations import IterativeAgent
from components.agents.parts import (
    LossPart,
    cnn_input_shape,
    learning_rate,
    make_env,
    make_loss,
    make_optimizer,
    stacked_images,
)
from components.agents.preprocessing import acting_view, check_preprocessor, preprocess
from components.agents.rollout import Rollout, Trajectory
from components.losses import DQNLoss, n_step_terms
from components.networks import CNN, MLP
from components.replay import FrameStackReplay, PrioritizedReplay, ReplayBuffer
from metagraph.spaces import Box, Dict, Discrete, Space


class DQNAgent(IterativeAgent):
    """DQN over `config.num_envs` environments of `env_id` (see the module docstring).

    Args:
        env_id: the environment, with discrete actions (`config.door` says which door steps
            it).
        config: the hyperparameters (`DQNConfig`).
        total_steps: the training's length, over whose `epsilon_fraction` ε decays.
        name: the scope name (default "dqn_agent").
        env: the environments (default `Environment(env_id, config.num_envs, door=config.door,
            **config.env_kwargs)`): any component with its `reset`/`step` APIs, `num_envs`
            and spaces (`components.agents.parts.make_env`).
        q_network: the online Q-network, a component with `forward(obs) -> q [B, actions]`
            and, for the target network, `current_params(obs)` and `forward_with(params, obs)`
            (every `HaikuNetwork` has them). Default `MLP([*config.hidden, actions], relu)`,
            or with `config.cnn_channels` a `CNN` of those convolutions and `hidden` over the
            observation's planes, its last layer linear to the actions' values.
        preprocessor: a component applied to observations before the Q-network
            (`forward(obs)`, optionally `update(obs)` called during rollouts; see
            `components.agents.preprocessing`). The replay keeps the raw observations; a
            sampled batch is preprocessed when it is learnt from. Default: none.
        loss: a component with `loss(obs, action, reward, discount, next_obs, target_q_next,
            weight) -> (total, {"td_error", ...})`, or a function of the Q-network returning
            one (default `DQNLoss(q_network, double=config.double)`).
        optimizer: an optax `GradientTransformation` (default Adam at
            `config.learning_rate`, annealed linearly to 0 over the run's updates when
            `config.anneal_lr`); gradients are clipped to `config.max_grad_norm` first.
    """

    def __init__(self, env_id: str, config: DQNConfig = DQNConfig(),
                 total_steps: int = 500_000, name: str | None = None, *,
                 env: mg.Component | None = None,
                 q_network: mg.Component | None = None,
                 preprocessor: mg.Component | None = None, loss: LossPart = None,
                 optimizer: optax.GradientTransformation | None = None):
        super().__init__(name)
        self.config = config
        # a CNN reads the task's images; any other network vectors
        env = make_env("DQNAgent", env, env_id, config, vectors=not config.cnn_channels)
        self.rollout = Rollout(env)
        self.preprocessor = check_preprocessor("DQNAgent", preprocessor)
        actions = self.rollout.env.action_space
        if not isinstance(actions, Discrete):
            raise ValueError(f"DQN needs discrete actions; {env_id} has {actions}")
        self.num_actions = int(actions.n)
        q_given = q_network is not None
        if not q_given and config.cnn_channels:
            q_network = CNN(config.cnn_channels, config.cnn_kernel, config.cnn_stride,
                            hidden=config.hidden, outputs=self.num_actions,
                            input_shape=cnn_input_shape("DQNAgent", env_id, env),
                            padding=config.cnn_padding,
                            channels_first=self.rollout.env.env_spec.channels_first,
                            stacked=stacked_images(env))
        elif not q_given:
            q_network = MLP([*config.hidden, self.num_actions], activation=jax.nn.relu)
        self.q_network = q_network
        self.replay = self._replay(config, env_id, self.rollout.observation_space_of())
        self.loss = make_loss("DQNAgent", loss, self.q_network, q_given,
                              lambda q: DQNLoss(q, double=config.double, huber_delta=(
                                  1.0 if config.td_loss == "huber" else None)))
        updates = max(1, (total_steps - config.learning_starts)
                      // self.steps_per_iteration(config)) * config.updates_per_iteration
        rate = learning_rate(config, updates)
        # a CNN's parameters per array, not flat: in DQN's update (a cond inside the
        # iteration's cond) XLA's CPU backend took 42 ms an iteration to concatenate MinAtar's
        # CNN (206,165 parameters) into one vector, against 4.3 ms for the whole iteration per
        # array. An MLP stays flat: as fast either way (CartPole: 0.23 / 0.22 ms), and its
        # measured seeds are the flat form's (docs/benchmarks-log.md, "DQN's optimizer per
        # array")
        self.optimizer = make_optimizer("DQNAgent", optimizer, self.loss, self.q_network,
                                        optax.adam(rate), config.max_grad_norm,
                                        flat=not (config.cnn_channels and not q_given))
        self.decay_steps = max(1.0, config.epsilon_fraction * total_steps)

    def _replay(self, config: DQNConfig, env_id: str, obs: Space) -> mg.Component:
        """The replay: frames shared between transitions (`replay_frames`), uniform (alpha
        0: no priorities' sum tree) or prioritised."""
        step = Dict(action=Discrete(self.num_actions), reward=Box(()), discount=Box(()))
        if config.replay_frames:
            if not (isinstance(obs, Box) and len(obs.shape) >= 2 and obs.shape[0] >= 2):
                raise ValueError(f"DQNAgent: replay_frames needs observations that stack "
                                 f"frames along their first axis (Atari's (4, 84, 84)); "
                                 f"{env_id} gives {obs}")
            return FrameStackReplay(config.buffer_size, config.num_envs, obs, step)
        record = Dict(obs=obs, **step.spaces, next_obs=obs)
        return (ReplayBuffer(config.buffer_size, record) if config.alpha == 0
                else PrioritizedReplay(config.buffer_size, record, alpha=config.alpha))

    @staticmethod
    def steps_per_iteration(config: DQNConfig) -> int:
        """Environment steps per iteration: num_envs * rollout."""
        return config.num_envs * config.rollout

    def _counters(self):
        """Environment steps taken and iterations done (state)."""
        return (self.get_state("env_steps", jnp.zeros((), jnp.float32)),
                self.get_state("iteration", jnp.zeros((), jnp.int32)))

    def _target_params(self, obs):
        online = self.q_network.current_params(obs)
        return self.get_state("target_params", lambda key: online)

    def _rollout(self, key):
        cfg = self.config
        env_steps = self._counters()[0]
        epsilon = jnp.maximum(cfg.epsilon_end, cfg.epsilon_start - (
            cfg.epsilon_start - cfg.epsilon_end) * env_steps / self.decay_steps)

        def act(obs, step_key):  # ε-greedy
            explore_key, action_key = jax.random.split(step_key)
            seen = preprocess(self.preprocessor, obs, update=True)
            greedy = jnp.argmax(self.q_network.forward(seen), -1).astype(jnp.int32)
            random = jax.random.randint(action_key, greedy.shape, 0, self.num_actions)
            explore = jax.random.uniform(explore_key, greedy.shape) < epsilon
            return jnp.where(explore, random, greedy).astype(jnp.int32), ()

        trajectory = self.rollout.run(act, key, cfg.rollout)
        self.set_state("env_steps", env_steps + cfg.rollout * cfg.num_envs)
        return trajectory

    def _transitions(self, trajectory: Trajectory):
        """n-step transitions (truncated at the rollout's end) for every step [T, N], from
        `losses.n_step_terms`; with `bootstrap_truncated`, a window cut by a time limit
        bootstraps from the final observation (discount gamma) instead of ending as a
        terminal step does (discount 0)."""
        cfg = self.config
        obs = trajectory.observations
        if cfg.bootstrap_truncated:
            discounts = cfg.gamma * (1.0 - trajectory.terminated.astype(jnp.float32))
            reward_sum, discount, last = n_step_terms(trajectory.rewards, discounts,
                                                      cfg.n_step, stops=trajectory.done)
            columns = jnp.arange(last.shape[1])[None, :]
            next_obs = jax.tree.map(lambda x: x[last, columns], trajectory.final_observations)
        else:
            discounts = cfg.gamma * (1.0 - trajectory.done.astype(jnp.float32))
            following = jnp.concatenate([obs[1:], trajectory.last_observations[None]], 0)
            reward_sum, discount, last = n_step_terms(trajectory.rewards, discounts, cfg.n_step)
            next_obs = following[last]
        records = {"obs": obs, "action": trajectory.actions, "reward": reward_sum,
                   "discount": discount, "next_obs": next_obs}
        return jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])), records)

    def _insert(self, trajectory: Trajectory) -> None:
        """The rollout's transitions into the replay: whole, or as the steps whose frames
        `FrameStackReplay` shares (the next observation `last + 1 - t` steps on)."""
        if not self.config.replay_frames:
            self.replay.insert(self._transitions(trajectory))
            return
        cfg = self.config
        discounts = cfg.gamma * (1.0 - trajectory.done.astype(jnp.float32))
        reward_sum, discount, last = n_step_terms(trajectory.rewards, discounts, cfg.n_step)
        # (last: [T], or [T, N] where windows stop early)
        next_steps = jnp.broadcast_to(last.reshape(last.shape[0], -1) + 1
                                      - jnp.arange(last.shape[0])[:, None], discount.shape)
        self.replay.insert(trajectory.observations, {
            "action": trajectory.actions, "reward": reward_sum, "discount": discount},
            next_steps, trajectory.last_observations)

    def _iteration(self, key):
        cfg = self.config
        rollout_key, update_key = jax.random.split(key)
        trajectory = self._rollout(rollout_key)
        self._insert(trajectory)
        # the shape the Q-network's parameters see
        last_obs = preprocess(self.preprocessor, trajectory.last_observations)
        target = self._target_params(last_obs)

        def update(_, sample_key):
            if cfg.alpha == 0:  # uniform, stratified as PER draws: every importance weight 1
                batch, _ = self.replay.sample(sample_key, cfg.batch_size, stratified=True)
                weights = jnp.ones((cfg.batch_size,), jnp.float32)
            else:
                batch, indices, weights = self.replay.sample(sample_key, cfg.beta,
                                                             cfg.batch_size)
            obs, next_obs = (preprocess(self.preprocessor, batch[name])
                             for name in ("obs", "next_obs"))
            target_q = self.q_network.forward_with(target, next_obs)
            stats = self.optimizer.step(obs, batch["action"], batch["reward"],
                                        batch["discount"], next_obs, target_q,
                                        weights / weights.max())
            if cfg.alpha != 0:
                self.replay.update_priorities(indices,
                                              stats["aux"]["td_error"] + cfg.priority_eps)
            return None, stats["loss"]

        def updates(update_key):
            keys = jax.random.split(update_key, cfg.updates_per_iteration)
            return mg.scan(update, None, keys)[1].mean()

        # no update before `learning_starts` environment steps (the replay fills first)
        learning = self._counters()[0] > cfg.learning_starts
        loss = mg.cond(learning, updates, None, update_key)
        iteration = self._counters()[1] + 1
        online = self.q_network.current_params(last_obs)
        copy = iteration % cfg.target_every == 0
        self.set_state("target_params", jax.tree.map(lambda o, t: jnp.where(copy, o, t),
                                                     online, self._target_params(last_obs)))
        self.set_state("iteration", iteration)
        return {**trajectory.episode_statistics(), "loss": loss,
                "steps": jnp.asarray(cfg.rollout * cfg.num_envs, jnp.int32)}

    @mg.api
    def greedy(self, observation):
        """The Q-network's best actions for a batch of observations."""
        seen = acting_view(self.rollout.env, self.preprocessor, observation)
        return jnp.argmax(self.q_network.forward(seen), -1).astype(jnp.int32)
