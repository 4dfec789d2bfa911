"""`train` from Python takes the algorithm's defaults for the environment when given no
config, or a dict of settings over them (as `metagraph train --set`); the run it writes
evaluates from the command line like any other (issue 35)."""

from __future__ import annotations

import json

from command_line import metagraph

from components.training import RunSpec, train

SMALL = {"num_envs": 2, "num_steps": 16, "epochs": 1, "minibatches": 1, "hidden": [8]}


def test_a_dict_of_settings_goes_over_the_defaults_and_the_run_evaluates(tmp_path):
    rows = train(RunSpec.make("CartPole-v1", "ppo", SMALL, steps=64), tmp_path / "run",
                 progress=False)
    assert rows[-1]["env_steps"] >= 64
    saved = json.loads((tmp_path / "run" / "config.json").read_text())["config"]
    assert saved["num_envs"] == 2 and saved["hidden"] == [8]
    done = metagraph(tmp_path, "evaluate", "run", "--episodes", "2")
    assert "return" in done.stdout


def test_no_config_is_the_algorithms_defaults_for_the_environment():
    from components.training import resolve

    ppo = resolve("ppo")
    mujoco = ppo.config("HalfCheetah-v5", {})
    for given in (None, {}):  # the spec's config, as train records and runs it
        assert RunSpec.make("HalfCheetah-v5", ppo, given, steps=1).config == mujoco
    assert mujoco.to_dict() != ppo.config_class().to_dict()  # MuJoCo's settings, not the class's
