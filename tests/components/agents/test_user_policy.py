"""A `Policy` a user builds before the agent exists (its action space from an
`Environment`) and passes as `policy=` keeps the config's settings it was not given:
PPO with a user's `Policy(space)` starts from the very parameters of PPO's default policy
(hidden widths, activation, orthogonal initialisation, state-independent log std), a custom
torso keeps the rest of them, and a setting the user gave is kept. `set_defaults` refuses
unknown settings and a policy already built."""

import jax
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

import metagraph as mg
from components.agents import ImpalaAgent, ImpalaConfig, PPOAgent, PPOConfig
from components.envs import Environment
from components.networks import MLP
from components.policy import Policy
from metagraph.spaces import Box, Discrete, PRNGKey

# every policy setting of the config away from Policy's own defaults
CONTINUOUS = PPOConfig(num_envs=2, num_steps=8, minibatches=2, hidden=(8,), activation="relu",
                       orthogonal_init=True, log_std="parameter", log_std_init=-0.7,
                       iterations_per_call=1)


def action_space(env_id: str):
    """One environment's action space, as an agent's policy sees it."""
    return Environment(env_id, 1).action_space


def policy_state(agent: mg.Component, env_id: str) -> dict:
    """The initial states of `agent`'s policy and everything inside it, by scope."""
    obs = Environment(env_id, 1).observation_space.shape
    graph = mg.build(agent, {"key": PRNGKey(), "iterations": Discrete(2),
                             "observation": Box((1, *obs))})
    states = graph.init_state()
    return {scope: state for scope, state in states.items() if "/policy" in scope}


def assert_same_state(got: dict, expected: dict) -> None:
    assert got.keys() == expected.keys()
    for scope in expected:
        np.testing.assert_array_equal(ravel_pytree(got[scope])[0],
                                      ravel_pytree(expected[scope])[0], err_msg=scope)


def test_a_users_policy_takes_the_configs_settings():
    space = action_space("Pendulum-v1")  # before any agent exists
    default = policy_state(PPOAgent("Pendulum-v1", CONTINUOUS), "Pendulum-v1")
    given = PPOAgent("Pendulum-v1", CONTINUOUS, policy=Policy(space))
    assert_same_state(policy_state(given, "Pendulum-v1"), default)
    log_std = default["ppo_agent/policy"]["log_std"]
    np.testing.assert_array_equal(log_std, np.full(1, -0.7, np.float32))
    assert not given.policy.distribution.squash  # PPO's Gaussian, not Policy's tanh default
    assert given.policy.torso.activation is jax.nn.relu  # the config's activation


def test_a_custom_torso_keeps_the_rest_of_the_configs_settings():
    space = action_space("Pendulum-v1")
    default = policy_state(PPOAgent("Pendulum-v1", CONTINUOUS), "Pendulum-v1")
    torso = MLP([8], activate_final=True, name="torso")
    agent = PPOAgent("Pendulum-v1", CONTINUOUS, policy=Policy(space, torso=torso))
    assert agent.policy.torso is torso
    got = policy_state(agent, "Pendulum-v1")
    assert "ppo_agent/policy/torso" in got
    for scope in ("ppo_agent/policy", "ppo_agent/policy/value_network"):
        assert_same_state({scope: got[scope]}, {scope: default[scope]})
    assert agent.policy.value_network.activation is jax.nn.relu  # the config's, not tanh


def test_a_setting_the_user_gives_is_kept():
    space = action_space("Pendulum-v1")
    agent = PPOAgent("Pendulum-v1", CONTINUOUS, policy=Policy(space, log_std="network",
                                                              hidden=(4, 4)))
    state = policy_state(agent, "Pendulum-v1")
    assert "log_std" not in state.get("ppo_agent/policy", {})
    assert agent.policy.settings["hidden"] == (4, 4)
    assert agent.policy.settings["orthogonal"] is True  # the config's, not given


def test_impala_takes_its_config_hidden_widths_too():
    config = ImpalaConfig(num_envs=2, num_steps=4, hidden=(8,))
    space = action_space("CartPole-v1")
    agent = ImpalaAgent("CartPole-v1", config, policy=Policy(space))
    assert agent.policy.settings["hidden"] == (8,)
    assert agent.policy.torso.sizes == (8,)


def test_set_defaults_refuses_unknown_settings_and_a_built_policy():
    policy = Policy(Discrete(2), hidden=(4,))
    with pytest.raises(TypeError, match=r"unknown settings \['hiden'\]"):
        policy.set_defaults(hiden=(8,))
    mg.build(policy, {"obs": Box((3,), batch=True)}, apis=["greedy_action"])
    with pytest.raises(mg.MetaGraphError, match="set_defaults after the policy was built"):
        policy.set_defaults(hidden=(8,))
