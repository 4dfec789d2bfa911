"""Configs and command lines that used to train on nonsense (issue 18, items 9 and 14): a
non-finite number, a bool where a number goes, a string where a bool goes, no steps, a seed
JAX cannot take. Each is one line naming the setting and what was expected (exit status 2)."""

import dataclasses
import json
import re

import pytest
from command_line import refusal

from components.agents import DQNConfig, ImpalaConfig, PPOConfig, ReweightConfig
from components.agents.alphazero_config import AlphaZeroConfig
from components.agents.config_checks import POSITIVE_INT, UNIT, AgentConfig


@pytest.mark.parametrize("config, values, message", [
    (PPOConfig, {"learning_rate": float("inf")}, "PPOConfig.learning_rate: expected a finite "
                                                 "number, got inf"),
    (PPOConfig, {"reward_scale": float("inf")}, "PPOConfig.reward_scale: expected a finite"),
    (PPOConfig, {"entropy_coef": float("nan")}, "PPOConfig.entropy_coef: expected a finite"),
    (ImpalaConfig, {"learning_rate": float("-inf")}, "ImpalaConfig.learning_rate: expected a "
                                                     "finite"),
    (PPOConfig, {"hidden": [64, True]}, "PPOConfig.hidden: expected a list of ints, got "
                                        "(64, True)"),
    (ReweightConfig, {"num_envs": True}, "ReweightConfig.num_envs: expected an int, got True"),
    (PPOConfig, {"anneal_lr": "False"}, "PPOConfig.anneal_lr: expected true or false"),
    (DQNConfig, {"double": 0}, "DQNConfig.double: expected true or false"),
    (PPOConfig, {"gamma": True}, "PPOConfig.gamma: expected a finite number, got True"),
    (PPOConfig, {"env_kwargs": {"rows": [5]}}, "PPOConfig.env_kwargs: expected a table of "
                                               "keyword arguments"),
    (DQNConfig, {"env_kwargs": {"x": float("nan")}}, "DQNConfig.env_kwargs: expected a table"),
    (ImpalaConfig, {"env_kwargs": "rows=5"}, "ImpalaConfig.env_kwargs: expected a table"),
])
def test_configs_refuse_non_finite_numbers_and_mixed_up_types(config, values, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        config.from_dict(values)


def test_configs_still_take_ints_for_floats_and_lists_for_tuples():
    config = PPOConfig.from_dict({"learning_rate": 1, "hidden": [32, 16], "anneal_lr": False})
    assert (config.learning_rate, config.hidden, config.anneal_lr) == (1, (32, 16), False)


@pytest.mark.parametrize("flags, message", [
    (["--steps", "0"], "steps must be a positive int, got 0"),
    (["--steps", "-1"], "steps must be a positive int, got -1"),
    (["--seed", str(2**64)], "seed must be an int in [0, 4294967295], got 18446744073709551616"),
    (["--seed", "-1"], "seed must be an int in [0, 4294967295], got -1"),
    (["--set", "anneal_lr=False", "--algo", "ppo"], "PPOConfig.anneal_lr: expected true or "
                                                    "false"),
    (["--set", "learning_rate=Infinity", "--algo", "ppo"], "PPOConfig.learning_rate: expected a "
                                                           "finite number, got inf"),
    (["--env-kwargs", "gravity=1"], "env_kwargs {'gravity': 1}: CartPole-v1"),
    (["--env-kwargs", "=1"], "--env-kwargs expects KEY=VALUE, got '=1'"),
])
def test_the_command_line_refuses_in_one_line(capsys, tmp_path, flags, message):
    err = refusal(capsys, ["train", "CartPole-v1", "--out", str(tmp_path / "run"), *flags])
    assert message in err, err


def test_a_fractional_seed_in_a_run_directory_is_refused_naming_the_file(capsys, tmp_path):
    (tmp_path / "checkpoint.npz").write_bytes(b"")
    (tmp_path / "config.json").write_text(json.dumps({
        "algo": "ppo", "env_id": "CartPole-v1", "seed": 0.5, "steps": 1000,
        "config": PPOConfig().to_dict()}))
    err = refusal(capsys, ["train", "CartPole-v1", "--out", str(tmp_path), "--resume"])
    assert err.endswith("config.json: seed must be an int in [0, 4294967295], got 0.5"), err


def test_a_users_config_is_checked_without_writing_a_check():
    """A config dataclass deriving from `AgentConfig`, as a user's algorithm has one: its
    fields' types are checked when it is made, from Python and from a dict, and its own
    `rules()` after them."""
    @dataclasses.dataclass(frozen=True)
    class MyConfig(AgentConfig):
        num_envs: int = 4
        gamma: float = 0.99
        hidden: tuple[int, ...] = (16,)
        door: str = "native"

        def rules(self):
            return {"num_envs": POSITIVE_INT, "gamma": UNIT}

    assert MyConfig.from_dict({"hidden": [8, 8]}).hidden == (8, 8)
    for values, message in [({"num_envs": 2.5}, "MyConfig.num_envs: expected an int, got 2.5"),
                            ({"gamma": "0.9"}, "MyConfig.gamma: expected a finite number"),
                            ({"hidden": [8, "8"]}, "MyConfig.hidden: expected a list of ints"),
                            ({"num_envs": 0}, "MyConfig.num_envs: expected an int >= 1, got 0"),
                            ({"gamma": 1.5}, "MyConfig.gamma: expected a number in [0, 1]")]:
        with pytest.raises(ValueError, match=re.escape(message)):
            MyConfig.from_dict(values)
    with pytest.raises(ValueError, match=re.escape("MyConfig.door: expected a string")):
        MyConfig(door=None)


ALL_CONFIGS = ("AlphaZeroConfig", "DQNConfig", "ImpalaConfig", "PPOConfig", "ReweightConfig",
               "SACConfig")


@pytest.mark.parametrize("name", ALL_CONFIGS)
def test_every_config_shares_the_agent_settings_checked_alike(name):
    import components.agents.alphazero_config
    from components.agents import AgentSettings

    config = getattr(components.agents, name, None) or getattr(
        components.agents.alphazero_config, name)
    assert issubclass(config, AgentSettings)
    shared = {f.name for f in dataclasses.fields(AgentSettings)}
    assert shared <= {f.name for f in dataclasses.fields(config)}
    for field, value, expected in (("learning_rate", 0, "a number > 0"),
                                   ("max_grad_norm", -1.0, "a number >= 0"),
                                   ("hidden", [], "positive ints"),
                                   ("num_envs", 0, "an int in [")):
        with pytest.raises(ValueError, match=re.escape(f"{name}.{field}: expected {expected}")):
            config.from_dict({field: value})
    # a field named as another agent's has that field's rule (NAMED_RULES), declared once
    from components.agents.agent_settings import NAMED_RULES

    bad = {"num_steps": 0, "rollout": 0, "gamma": 1.5, "batch_size": 0,
           "updates_per_iteration": 0, "iterations_per_call": 0, "entropy_coef": -1.0,
           "value_coef": -1.0, "reward_scale": 0.0}
    assert set(bad) == set(NAMED_RULES)
    named = [f.name for f in dataclasses.fields(config) if f.name in NAMED_RULES]
    assert named or name == "ReweightConfig"
    for field in named:
        with pytest.raises(ValueError, match=re.escape(f"{name}.{field}: expected")):
            config.from_dict({field: bad[field]})


@pytest.mark.parametrize("max_grad_norm, clipped", [(0.0, False), (0.5, True)])
def test_max_grad_norm_zero_leaves_the_gradients_unclipped(max_grad_norm, clipped):
    from components.agents import PPOAgent

    agent = PPOAgent("CartPole-v1", PPOConfig(num_envs=2, num_steps=8, minibatches=2,
                                              max_grad_norm=max_grad_norm))
    assert (agent.optimizer.max_grad_norm is not None) == clipped


@pytest.mark.parametrize("config, old", [(ReweightConfig, "num_paths"),
                                         (AlphaZeroConfig, "num_games")])
def test_a_renamed_field_is_read_under_its_old_name_with_a_warning(config, old, tmp_path,
                                                                   capsys):
    """The batch is `num_envs` in every agent; path reweighting's `num_paths` and AlphaZero's
    `num_games` are still read one release, from Python, a dict (a run directory's
    config.json, --config), --set and the attribute, each with a DeprecationWarning."""
    with pytest.warns(DeprecationWarning, match=f"'{old}' is now 'num_envs'"):
        made = config(**{old: 64})
    assert made.num_envs == 64 and old not in made.to_dict()
    with pytest.warns(DeprecationWarning, match=f"'{old}' is now 'num_envs'"):
        assert config.from_dict({old: 32}) == config(num_envs=32)
    with pytest.warns(DeprecationWarning, match=f"'{old}' is now 'num_envs'"):
        assert config.for_env("ConnectFour-v0", {old: 64}).num_envs == 64
    with pytest.warns(DeprecationWarning, match=f"{old} is now .*num_envs"):
        assert getattr(made, old) == 64
    with pytest.raises(ValueError, match=f"'{old}' is the old name of 'num_envs'"):
        config.from_dict({old: 8, "num_envs": 8})
    assert dataclasses.replace(made, num_envs=32).num_envs == 32


def test_a_users_config_renames_a_field_with_the_public_decorator():
    """A user's own config (here, outside the package) keeps an old name one release with
    `renamed_fields`, as the built-in configs do."""
    from components.agents.agent_settings import AgentSettings
    from components.agents.renamed_fields import renamed_fields

    @renamed_fields({"width": "hidden"})
    @dataclasses.dataclass(frozen=True)
    class MyConfig(AgentSettings):
        horizon: int = 8

    with pytest.warns(DeprecationWarning, match="'width' is now 'hidden'"):
        assert MyConfig.from_dict({"width": [16]}).hidden == (16,)
    with pytest.raises(ValueError, match="MyConfig.hidden: expected"), \
            pytest.warns(DeprecationWarning):
        MyConfig(width=())
