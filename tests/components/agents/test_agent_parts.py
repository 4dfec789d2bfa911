"""A user swaps an agent's parts without subclassing: components written here, outside the
package, as a user writes them. A stateful running-mean normaliser in front of PPO's policy
builds, shows in the graph, and trains with its statistics changing (checked against NumPy);
PPO and path reweighting step the user's environments (a reward-shaping component around
`Environment`, and a wrapper of the user's, `EnvironmentWrapper`); DQN takes a network of the
user's and the normalising wrappers; IMPALA takes the user's optax transformation; the
documented errors name what was expected."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.flatten_util import ravel_pytree

import metagraph as mg
from backends import xla
from components.agents import DQNAgent, PPOAgent, ReweightAgent
from components.agents.alphazero_agent import AlphaZeroAgent
from components.agents.dqn_config import DQNConfig
from components.agents.impala_agent import ImpalaAgent
from components.agents.impala_config import ImpalaConfig
from components.agents.ppo_config import PPOConfig
from components.agents.reweight_config import ReweightConfig
from components.envs import Environment
from components.envs.wrappers import EnvironmentWrapper, NormalizeObservation, NormalizeReward
from components.losses import PPOLoss
from components.networks import HaikuNetwork
from components.reweighting import quality
from metagraph.spaces import Box, Discrete, PRNGKey
from metagraph.testing import ComponentTest


class RunningNormaliser(mg.Component):
    """Observations minus their running mean, over their running standard deviation. The
    statistics change in `update` (called during rollouts); `forward` only reads them. Both
    see several batch sizes inside an agent: polymorphic."""

    @mg.api(polymorphic=True)
    def update(self, obs):
        count, mean, var = self._stats(obs)
        batch = obs.reshape(-1, obs.shape[-1])
        n = batch.shape[0]
        total = count + n
        delta = batch.mean(0) - mean
        new_mean = mean + delta * n / total
        m2 = var * count + batch.var(0) * n + delta**2 * count * n / total
        self.set_state("count", total)
        self.set_state("mean", new_mean)
        self.set_state("var", m2 / total)

    @mg.api(polymorphic=True)
    def forward(self, obs):
        _, mean, var = self._stats(obs)
        return (obs - mean) / jnp.sqrt(var + 1e-8)

    def _stats(self, obs):
        dim = obs.shape[-1]
        return (self.get_state("count", jnp.zeros((), jnp.float32)),
                self.get_state("mean", jnp.zeros((dim,), jnp.float32)),
                self.get_state("var", jnp.ones((dim,), jnp.float32)))


PPO_SMALL = PPOConfig(num_envs=4, num_steps=16, epochs=2, minibatches=2, hidden=(16,),
                      iterations_per_call=2)
PPO_SPACES = {"key": PRNGKey(), "iterations": Discrete(3), "observation": Box((3, 4))}


def test_a_running_mean_normaliser_in_front_of_ppo_trains_and_updates():
    agent = PPOAgent("CartPole-v1", PPO_SMALL, 1000, preprocessor=RunningNormaliser())
    graph = mg.build(agent, PPO_SPACES)
    for api in ("update", "forward"):
        assert ("ppo_agent.train", f"ppo_agent/preprocessor.{api}") in graph.nx.edges
    assert ("ppo_agent.greedy", "ppo_agent/preprocessor.forward") in graph.nx.edges
    assert "ppo_agent/preprocessor.update" in graph.summary()
    exe = xla.lower(graph)
    first = exe.start(np.asarray(jax.random.PRNGKey(0)))
    params = ravel_pytree(exe.get_states("ppo_agent/policy"))[0]
    stats = exe.train(np.asarray(jax.random.PRNGKey(1)), np.int32(2))
    assert np.isfinite(stats["loss"]).all() and (stats["steps"] == 64).all()
    state = exe.get_state("ppo_agent/preprocessor")
    assert state["count"] == 2 * 16 * 4  # two iterations of 16 steps of 4 environments
    assert not np.allclose(state["mean"], 0.0) and (state["var"] > 0).all()
    assert not np.array_equal(params, ravel_pytree(exe.get_states("ppo_agent/policy"))[0])
    # greedy reads the statistics without changing them
    exe.greedy(np.repeat(first[:1], 3, 0))
    assert exe.get_state("ppo_agent/preprocessor")["count"] == state["count"]


class ScaledRewards(mg.Component):
    """The user's environments: an `Environment`'s, every reward times `scale` (shaping)."""

    def __init__(self, env: Environment, scale: float):
        super().__init__()
        self.env, self.scale = env, scale
        self.num_envs, self.env_spec = env.num_envs, env.env_spec
        self.observation_space, self.action_space = env.observation_space, env.action_space

    @mg.api
    def reset(self, key):
        return self.env.reset(key)

    @mg.api
    def step(self, action):
        out = self.env.step(action)
        return out._replace(reward=out.reward * self.scale)


def test_agents_step_a_users_environments():
    """`env=`: PPO's episodes are the user's (CartPole's returns, at least 8 a episode,
    scaled by 0.01), and the user's component is a node between the rollout and the
    environments; path reweighting takes one too."""
    env = ScaledRewards(Environment("CartPole-v1", 4), 0.01)
    agent = PPOAgent("CartPole-v1", PPO_SMALL, 1000, env=env)
    assert agent.rollout.env is env
    graph = mg.build(agent, PPO_SPACES)
    assert graph.nx.nodes["ppo_agent/rollout/env"]["cls"] == "ScaledRewards"
    assert ("ppo_agent/rollout/env.step", "ppo_agent/rollout/env/env.step") in graph.nx.edges
    exe = xla.lower(graph)
    exe.start(np.asarray(jax.random.PRNGKey(0)))
    stats = exe.train(np.asarray(jax.random.PRNGKey(1)), np.int32(2))
    episodes = stats["episodes"].sum()
    assert episodes > 0
    assert 0.08 <= stats["episode_return_sum"].sum() / episodes <= 5.0
    config = ReweightConfig(num_envs=4, fit_paths=2, hidden=(8,))
    reweight = ReweightAgent("CartPole-v1", config, env=ScaledRewards(
        Environment("CartPole-v1", 4), 0.5))
    assert reweight.rollout.env.scale == 0.5


class ClippedObservation(EnvironmentWrapper):
    """The user's wrapper: observations clipped to [-1, 1], its space saying so."""

    @property
    def observation_space(self):
        return Box(self.env.observation_space.shape, np.float32, -1.0, 1.0)

    def observation(self, obs):
        return jnp.clip(obs, -1.0, 1.0)


def test_a_users_wrapper_is_stepped_by_the_agent_and_its_space_is_seen():
    """A wrapper of the user's (`EnvironmentWrapper`, `observation` overridden): the agent's
    rollout steps it, the graph checks its space, and its observations are the wrapped
    environment's clipped, from the same key."""
    env = ClippedObservation(Environment("CartPole-v1", 4))
    agent = PPOAgent("CartPole-v1", PPO_SMALL, 1000, env=env)
    assert agent.rollout.env is env
    graph = mg.build(agent, PPO_SPACES)
    assert graph.nx.nodes["ppo_agent/rollout/env"]["cls"] == "ClippedObservation"
    assert ("ppo_agent/rollout/env.step", "ppo_agent/rollout/env/env.step") in graph.nx.edges
    spaces = {"key": PRNGKey(), "action": env.batch_action_space()}
    clipped = ComponentTest(ClippedObservation(Environment("CartPole-v1", 4)), spaces)
    plain = ComponentTest(Environment("CartPole-v1", 4), spaces)
    key = np.asarray(jax.random.PRNGKey(3))
    np.testing.assert_array_equal(clipped.test(("reset", key)),
                                  np.clip(plain.test(("reset", key)), -1, 1))
    for _ in range(30):
        action = np.ones(4, np.int32)
        out, reference = clipped.test(("step", action)), plain.test(("step", action))
        np.testing.assert_array_equal(out.obs, np.clip(reference.obs, -1, 1))
        np.testing.assert_array_equal(out.terminated, reference.terminated)


def test_make_env_takes_its_old_arguments_one_release_with_a_warning():
    from components.agents.parts import make_env

    with pytest.warns(DeprecationWarning, match="pass the config"):
        env = make_env("PPOAgent", None, "CartPole-v1", ("num_envs", 3), "native", {})
    assert isinstance(env, Environment) and env.num_envs == 3 and env.door == "native"


def test_an_environment_that_is_not_the_agents_is_refused_saying_why():
    with pytest.raises(ValueError, match="PPOAgent: env steps 3 environments; the config's "
                                         "num_envs is 4"):
        PPOAgent("CartPole-v1", PPO_SMALL, env=Environment("CartPole-v1", 3))
    with pytest.raises(ValueError, match="ReweightAgent: env steps Acrobot-v1; the agent is "
                                         "for CartPole-v1"):
        ReweightAgent("CartPole-v1", ReweightConfig(num_envs=4, fit_paths=2),
                      env=Environment("Acrobot-v1", 4))
    with pytest.raises(TypeError, match="DQNAgent: env must be a Component"):
        DQNAgent("CartPole-v1", DQNConfig(num_envs=2), env="CartPole-v1")
    with pytest.raises(TypeError, match="AlphaZeroAgent: env ScaledRewards has no "
                                        "env_state\\(\\)"):
        AlphaZeroAgent("ConnectFour-v0", env=ScaledRewards(Environment("ConnectFour-v0", 64),
                                                           1.0))


def sampled_paths(agent: ReweightAgent, seed: int = 0) -> dict:
    """One call of the agent's `sample_paths` (N paths, their qualities and returns)."""
    exe = xla.lower(mg.build(agent, {"key": PRNGKey()}, apis=["sample_paths"]))
    return exe.sample_paths(np.asarray(jax.random.PRNGKey(seed)))


def test_path_reweighting_takes_a_users_quality():
    """`quality=`: MountainCar's highest position as the user writes it scores every path as
    the config's `max_height` does by name; in a game the function sees each path's outcome
    for the learner and the learner's side; a function that does not give one number per
    path is refused saying so."""
    config = ReweightConfig(num_envs=4, fit_paths=2, hidden=(8,), quality="max_height")
    by_name = sampled_paths(ReweightAgent("MountainCar-v0", config))
    mine = sampled_paths(ReweightAgent(
        "MountainCar-v0", dataclasses.replace(config, quality="return"),
        quality=lambda paths: quality.max_over_path(paths["obs"][..., 0], paths["mask"])))
    np.testing.assert_array_equal(mine["quality"], by_name["quality"])
    assert len(set(np.asarray(mine["quality"]).tolist())) > 1

    games = ReweightConfig(num_envs=4, fit_paths=2, hidden=(8,), explore=1.0)
    out = sampled_paths(ReweightAgent("ConnectFour-v0", games,
                                      quality=lambda paths: paths["outcome"] + 10 * paths["side"]))
    side = np.arange(4) % 2
    np.testing.assert_array_equal(np.asarray(out["quality"]) - 10 * side, out["return"])

    with pytest.raises(ValueError, match=r"ReweightAgent: quality\(paths\) must give one number "
                                         r"per path, float\[4\], got float32\[4, 200\]"):
        sampled_paths(ReweightAgent("MountainCar-v0", dataclasses.replace(config, quality="return"),
                                    quality=lambda paths: paths["reward"]))
    with pytest.raises(TypeError, match="ReweightAgent: quality must be a function"):
        ReweightAgent("MountainCar-v0", config, quality="max_height")


def test_the_normaliser_matches_numpy():
    class Harness(mg.Component):
        def __init__(self):
            self.norm = RunningNormaliser()

        @mg.api
        def observe(self, obs):
            self.norm.update(obs)
            return self.norm.forward(obs)

    exe = xla.lower(mg.build(Harness(), {"obs": Box((5, 3))}))
    batches = np.random.default_rng(0).normal(2.0, 3.0, (4, 5, 3)).astype(np.float32)
    for batch in batches:
        out = exe.observe(batch)
    seen = batches.reshape(-1, 3)
    np.testing.assert_allclose(out, (batches[-1] - seen.mean(0)) / seen.std(0), rtol=1e-4,
                               atol=1e-5)


def test_a_normaliser_without_polymorphic_names_the_fix():
    class Fixed(RunningNormaliser):
        @mg.api
        def forward(self, obs):
            return obs * 2.0

    with pytest.raises(mg.SpaceError, match=r"polymorphic=True"):
        mg.build(PPOAgent("CartPole-v1", PPO_SMALL, 1000, preprocessor=Fixed()), PPO_SPACES)


class Duelling(HaikuNetwork):
    """A user's Q-network: a duelling head over a small torso (Wang et al. 2016)."""

    def __init__(self, actions):
        self.actions = actions

    def network(self, x):
        import haiku as hk

        h = jax.nn.relu(hk.Linear(16)(x))
        advantage = hk.Linear(self.actions)(h)
        return hk.Linear(1)(h) + advantage - advantage.mean(-1, keepdims=True)


def test_dqn_takes_a_users_network_and_normalising_wrappers():
    """DQN with the user's Q-network, stepping CartPole through the normalising wrappers (as
    PPO's continuous-control settings do): the observations it stepped are counted, and it
    acts on the task's own observations through them."""
    config = DQNConfig(num_envs=2, rollout=4, buffer_size=64, batch_size=8,
                       updates_per_iteration=2, iterations_per_call=2)
    env = NormalizeReward(NormalizeObservation(Environment("CartPole-v1", 2)))
    agent = DQNAgent("CartPole-v1", config, 1000, q_network=Duelling(2), env=env)
    graph = mg.build(agent, PPO_SPACES)
    assert graph.nx.nodes["dqn_agent/q_network"]["cls"] == "Duelling"
    assert ("dqn_agent/loss.loss", "dqn_agent/q_network.forward") in graph.nx.edges
    assert graph.nx.nodes["dqn_agent/rollout/env"]["cls"] == "NormalizeReward"
    exe = xla.lower(graph)
    exe.start(np.asarray(jax.random.PRNGKey(0)))
    before = exe.get_state("dqn_agent/q_network")
    stats = exe.train(np.asarray(jax.random.PRNGKey(1)), np.int32(2))
    assert np.isfinite(stats["loss"]).all()
    after = exe.get_state("dqn_agent/q_network")
    assert not np.array_equal(ravel_pytree(before)[0], ravel_pytree(after)[0])
    counted = exe.get_state("dqn_agent/rollout/env/env/observation_normaliser")["count"]
    assert float(counted) == pytest.approx(2 * (1 + 2 * 4) + 1e-4)  # the resets, 8 steps
    assert exe.greedy(np.zeros((3, 4), np.float32)).shape == (3,)


def test_impala_takes_a_users_optimizer():
    """With optax.sgd(lr) and no clipping, one update moves the parameters by lr times the
    gradient's norm (Adam, the default, would move every parameter by about lr)."""
    lr = 1e-2
    config = ImpalaConfig(num_envs=4, num_steps=8, hidden=(16,), max_grad_norm=1e9)
    agent = ImpalaAgent("CartPole-v1", config, optimizer=optax.sgd(lr))
    graph = mg.build(agent, {"key": PRNGKey(), **agent.trajectory_spaces()},
                     apis=["start", "sample", "learn"])
    exe = xla.lower(graph)
    exe.start(np.asarray(jax.random.PRNGKey(0)))
    batch = exe.sample(np.asarray(jax.random.PRNGKey(1)))
    before = ravel_pytree(exe.get_states("impala_agent/policy"))[0]
    stats = exe.learn(**{name: batch[name] for name in agent.trajectory_spaces()})
    moved = ravel_pytree(exe.get_states("impala_agent/policy"))[0] - before
    np.testing.assert_allclose(np.linalg.norm(moved), lr * stats["grad_norm"], rtol=1e-3)


def test_loss_factories_and_clear_errors():
    agent = PPOAgent("CartPole-v1", PPO_SMALL, 1000, loss=lambda p: PPOLoss(p, clip=0.1))
    assert agent.loss.clip == 0.1 and agent.loss.policy is agent.policy
    with pytest.raises(TypeError, match="pass the model too, or the loss as a function"):
        PPOAgent("CartPole-v1", PPO_SMALL, loss=PPOLoss(agent.policy))
    with pytest.raises(TypeError, match="optax GradientTransformation"):
        PPOAgent("CartPole-v1", PPO_SMALL, optimizer="adam")
    with pytest.raises(TypeError, match=r"Component with an API forward\(obs\)"):
        PPOAgent("CartPole-v1", PPO_SMALL, preprocessor=lambda obs: obs)
    # the positional arguments keep working
    assert PPOAgent("CartPole-v1", PPO_SMALL, 1000).config is PPO_SMALL


def test_configs_refuse_the_old_key_backend_naming_door():
    with pytest.raises(ValueError, match=r"'backend' is now 'door'"):
        PPOConfig.from_dict({"backend": "host"})
    assert PPOConfig.from_dict({"door": "host"}).door == "host"
    with pytest.raises(ValueError, match="door: expected one of"):
        PPOConfig(door="gpu")


def test_an_agents_parts_follow_from_its_task_not_from_a_switch():
    """No agent asks "is this a game": PPO's default policy is the one its observations call
    for (`policy_for`: a game's {"obs", "legal"} gets a `MaskedPolicy`, with the config's
    value mode), path reweighting's paths come from the task's path source (`paths_of`: a
    game's whole games against a pool of earlier policies, a task of one player's episodes),
    and what only a game has is refused by name elsewhere."""
    from components.agents.parts import policy_for
    from components.agents.reweight_games import GamePaths
    from components.agents.reweight_paths import EpisodePaths
    from components.agents.rollout import Rollout
    from components.agents.self_play_rollout import SelfPlayRollout
    from components.policy import MaskedPolicy, Policy

    game = PPOAgent("ConnectFour-v0", PPOConfig(num_envs=2, value="shared"))
    assert type(game.policy) is MaskedPolicy and game.policy.value_mode == "shared"
    assert type(PPOAgent("CartPole-v1", PPO_SMALL).policy) is Policy
    assert policy_for(game.rollout.env.observation_space) is MaskedPolicy
    assert policy_for(Box((4,))) is Policy and policy_for(None) is Policy

    small = ReweightConfig(num_envs=4, fit_paths=2, hidden=(8,), pool_size=3)
    played = ReweightAgent("ConnectFour-v0", small)
    assert isinstance(played.path_source, GamePaths) and len(played.pool) == 3
    assert isinstance(played.rollout, SelfPlayRollout)
    assert type(played.policy) is MaskedPolicy and all(type(p) is MaskedPolicy
                                                       for p in played.pool)
    alone = ReweightAgent("CartPole-v1", small)
    assert isinstance(alone.path_source, EpisodePaths) and alone.pool == []
    assert type(alone.rollout) is Rollout and type(alone.policy) is Policy
    with pytest.raises(ValueError, match="ReweightAgent: search_simulations searches a "
                                         "game's moves; CartPole-v1 is not a game"):
        ReweightAgent("CartPole-v1", dataclasses.replace(small, search_simulations=4))
    with pytest.raises(ValueError, match="ReweightAgent: quality='margin' is not one for "
                                         "CartPole-v1 \\(not a game\\)"):
        ReweightAgent("CartPole-v1", dataclasses.replace(small, quality="margin"))
    with pytest.warns(DeprecationWarning, match="ReweightAgent.self_play is deprecated"):
        assert played.self_play and not alone.self_play
    with pytest.warns(DeprecationWarning, match="PPOAgent.self_play is deprecated"):
        assert game.self_play
