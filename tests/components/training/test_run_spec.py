"""`RunSpec`: a run worked out once (issue 33, part 5). The canonical id, the algorithm and its
config are resolved in `RunSpec.make`, every setting checked there; the spec is frozen;
`record()` is what config.json holds and `RunSpec.read` gives the same spec back, refusing a
recorded setting that cannot run with the file's name."""

from __future__ import annotations

import dataclasses
import json

import pytest

from components.agents import PPOConfig
from components.training import RunDir, RunSpec
from components.training.run.evaluation_settings import EvaluationSettings


def test_the_spec_is_worked_out_once_and_read_back_the_same(tmp_path):
    spec = RunSpec.make("metagraph/CartPole-v1", "ppo", {"num_envs": 4}, steps=1000, seed=7,
                        seeds=2, evaluation=EvaluationSettings(every=500, episodes=3),
                        executor="eager")
    assert spec.env_id == "CartPole-v1" and spec.algo == "ppo" and spec.door == "native"
    assert spec.config == dataclasses.replace(spec.algorithm.config("CartPole-v1", {}),
                                              num_envs=4)
    assert not spec.distributed
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.steps = 5
    RunDir(tmp_path).write_config(spec.record())
    read = RunSpec.read(tmp_path)
    assert read.record() == spec.record()
    assert (read.config, read.evaluation, read.seeds, read.executor) == \
        (spec.config, spec.evaluation, 2, "eager")


def test_a_games_openspiel_name_and_the_samplers_are_resolved_in_the_spec():
    game = RunSpec.make("connect_four", "reweight", steps=100)
    assert game.env_id == "ConnectFour-v0"
    pipelined = RunSpec.make("CartPole-v1", "ppo", steps=100, runner="pipeline")
    assert pipelined.distributed and pipelined.num_samplers == 2


@pytest.mark.parametrize("change, words", [
    ({"steps": 0}, "steps must be a positive int, got 0"),
    ({"runner": "spark"}, "unknown runner 'spark'"),
    ({"executor": "gpu"}, "unknown executor 'gpu'"),
    ({"seed": -1}, "seed"),
])
def test_a_recorded_setting_that_cannot_run_is_refused_naming_the_file(tmp_path, change, words):
    spec = RunSpec.make("CartPole-v1", "ppo", PPOConfig(), steps=100)
    RunDir(tmp_path).write_config({**spec.record(), **change})
    with pytest.raises(ValueError, match=words) as error:
        RunSpec.read(tmp_path)
    assert str(error.value).startswith(f"{tmp_path / 'config.json'}: ")
    with pytest.raises(ValueError, match=words):  # and again when changed from Python
        spec.replace(**change)


def test_a_run_recorded_before_the_spec_had_its_tracking_and_executor_reads(tmp_path):
    spec = RunSpec.make("CartPole-v1", "ppo", steps=100)
    old = {k: v for k, v in spec.record().items() if k not in ("track", "executor")}
    (tmp_path / "config.json").write_text(json.dumps(old))
    assert RunSpec.read(tmp_path).record() == spec.record()


@pytest.mark.parametrize("steps", [0, -5, 1.5, "100"])
def test_resume_refuses_steps_that_are_no_count(tmp_path, steps):
    from components.training import resume

    spec = RunSpec.make("CartPole-v1", "ppo", steps=100)
    RunDir(tmp_path).write_config(spec.record())
    (tmp_path / "checkpoint.npz").write_bytes(b"")  # refused before it is read
    with pytest.raises(ValueError, match="resume: steps must be a positive int"):
        resume(tmp_path, steps=steps, progress=False)
