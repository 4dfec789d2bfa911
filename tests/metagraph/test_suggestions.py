"""`did_you_mean`: close matches of a misspelt name, case ignored, and what the refusals of an
unknown environment id and config key say with it (issue 55's "did you mean")."""

import pytest

from components.agents import DQNConfig
from components.envs import make
from metagraph.suggestions import did_you_mean


def test_close_names_are_suggested_and_far_ones_are_not():
    assert did_you_mean("Cartpole-v1", ["CartPole-v1", "Acrobot-v1"]) == \
        " (did you mean 'CartPole-v1'?)"
    assert did_you_mean("cartpole-v1", ["CartPole-v1"]) == " (did you mean 'CartPole-v1'?)"
    assert did_you_mean("num_env", ["num_envs", "num_steps", "gamma"]) == \
        " (did you mean 'num_envs' or 'num_steps'?)"
    assert did_you_mean("zzz", ["CartPole-v1"]) == ""
    assert did_you_mean("x", []) == ""


def test_an_unknown_id_and_an_unknown_key_say_what_was_meant():
    with pytest.raises(ValueError, match=r"unknown environment 'Cartpole-v1' \(did you mean "
                                         r"'CartPole-v1'\?\); environments: \['CartPole-v1'"):
        make("Cartpole-v1")
    with pytest.raises(ValueError, match=r"DQNConfig: unknown keys \['learning_rat'\] \(did "
                                         r"you mean 'learning_rate'"):
        DQNConfig.from_dict({"learning_rat": 1e-3})
