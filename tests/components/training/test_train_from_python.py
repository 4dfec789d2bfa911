"""`train` from Python takes the algorithm's defaults for the environment when given no
config, or a dict of settings over them (as `metagraph train --set`); the run it writes
evaluates from the command line like any other (issue 35)."""

from __future__ import annotations

import json

from command_line import metagraph

from components.training import train

SMALL = {"num_envs": 2, "num_steps": 16, "epochs": 1, "minibatches": 1, "hidden": [8]}


def test_a_dict_of_settings_goes_over_the_defaults_and_the_run_evaluates(tmp_path):
    rows = train("CartPole-v1", tmp_path / "run", "ppo", SMALL, steps=64, progress=False)
    assert rows[-1]["env_steps"] >= 64
    saved = json.loads((tmp_path / "run" / "config.json").read_text())["config"]
    assert saved["num_envs"] == 2 and saved["hidden"] == [8]
    done = metagraph(tmp_path, "evaluate", "run", "--episodes", "2")
    assert "return" in done.stdout


def test_no_config_is_the_algorithms_defaults_for_the_environment(tmp_path, monkeypatch):
    from components.training import resolve, trainer

    taken = []
    monkeypatch.setattr(trainer, "_train", lambda run, reporter, alg, spec, env, config, *a:
                        taken.append(config))  # what would train, without compiling it
    monkeypatch.setattr(trainer.RunDir, "metrics", lambda self: [])
    ppo = resolve("ppo")
    for given in (None, {}):
        train("HalfCheetah-v5", tmp_path / "run", ppo, given, steps=1, progress=False)
    mujoco = ppo.config("HalfCheetah-v5", {})
    assert [c.to_dict() for c in taken] == [mujoco.to_dict()] * 2
    assert mujoco.to_dict() != ppo.config_class().to_dict()  # MuJoCo's settings, not the class's
