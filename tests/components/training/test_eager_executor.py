"""`metagraph train ... --executor eager`: the whole (short) training run op by op, without
jit, for stepping through it in pdb; equal to the XLA run, row by row and in its final
state, on CartPole for a few iterations."""

import jax
import numpy as np
import pytest

from components.agents import PPOConfig
from components.training import RunSpec, train
from components.training.cli import main
from components.training.run.run_dir import RunDir
from metagraph import checkpoint

SMALL = PPOConfig(num_envs=2, num_steps=8, epochs=1, minibatches=2, hidden=(8,),
                  iterations_per_call=2)
STEPS = 3 * SMALL.num_envs * SMALL.num_steps  # three iterations: two calls, one cut short


def test_an_eager_run_equals_the_xla_run(tmp_path):
    rows = {name: train(RunSpec.make("CartPole-v1", "ppo", SMALL, steps=STEPS, executor=name),
                        tmp_path / name, progress=False) for name in ("xla", "eager")}
    assert len(rows["eager"]) == len(rows["xla"]) == 3
    for eager, compiled in zip(rows["eager"], rows["xla"], strict=True):
        assert eager["env_steps"] == compiled["env_steps"]
        assert eager["episodes"] == compiled["episodes"]
        assert eager["loss"] == pytest.approx(compiled["loss"], rel=1e-4, abs=1e-6)
    states = [checkpoint.load(RunDir(tmp_path / name).checkpoint_path)[0]
              for name in ("xla", "eager")]
    for a, b in zip(jax.tree.leaves(states[0]), jax.tree.leaves(states[1]), strict=True):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                   rtol=1e-4, atol=1e-5)


def test_the_command_line_takes_the_executor(tmp_path, capsys):
    main(["train", "CartPole-v1", "--algo", "ppo", "--out", str(tmp_path), "--steps", "16",
          "--executor", "eager", "--set", "num_envs=2", "--set", "num_steps=8",
          "--set", "hidden=[8]", "--set", "iterations_per_call=1", "--set", "epochs=1",
          "--set", "minibatches=2"])  # SMALL's shapes: the eager ops compiled above serve
    assert "1 iterations" in capsys.readouterr().out
    with pytest.raises(ValueError, match="the eager executor runs one seed"):
        train(RunSpec.make("CartPole-v1", "ppo", SMALL, steps=STEPS, seeds=2, executor="eager"),
              tmp_path / "seeds", progress=False)


def test_samplers_run_on_the_executor_they_are_given(tmp_path, monkeypatch):
    """A distributed run's samplers (here in-process) take the run's executor, as the learner
    does: eager all through, equal to the XLA run."""
    from components.agents import ImpalaConfig
    from components.training.distributed import sampler

    used = []
    lower = sampler.lower
    monkeypatch.setattr(sampler, "lower", lambda graph, executor, **kw: used.append(executor)
                        or lower(graph, executor, **kw))
    config = ImpalaConfig(num_envs=2, num_steps=4, hidden=(8,))
    rows = {name: train(RunSpec.make("CartPole-v1", "impala", config, steps=16, num_samplers=1,
                                     executor=name), tmp_path / name, progress=False)
            for name in ("xla", "eager")}
    assert used == ["xla", "eager"]
    assert [r["env_steps"] for r in rows["eager"]] == [r["env_steps"] for r in rows["xla"]]
    for eager, compiled in zip(rows["eager"], rows["xla"], strict=True):
        assert eager["loss"] == pytest.approx(compiled["loss"], rel=1e-4, abs=1e-6)
