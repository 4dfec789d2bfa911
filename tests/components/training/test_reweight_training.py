"""The path-reweighting agent end to end, kept small: the run directory it writes, a resumed
run equal to an uninterrupted one, clear errors for bad configs and corrupt checkpoints, and
the command line. (Solving CartPole is measured by the README's main command, see
docs/benchmarks.md, not here.)"""

import json

import numpy as np
import pytest
from command_line import refusal

import metagraph as mg
from components.agents import ReweightConfig
from components.training import RunSpec, cli, evaluate, resume, train

SMALL = ReweightConfig(num_envs=8, fit_paths=4, fit_steps=2, hidden=(8,))
STEPS = 600  # a few iterations of 8 short CartPole episodes


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("full")
    metrics = train(RunSpec.make("CartPole-v1", "reweight", SMALL, seed=3, steps=STEPS), out,
                    progress=False)
    return out, metrics


def test_run_directory_holds_everything(full_run):
    out, metrics = full_run
    assert len(metrics) >= 2
    for row in metrics:
        assert {"env_steps", "wall_time", "episode_return_mean", "bits", "ess"} <= set(row)
        assert 0 <= row["bits"] <= np.log2(SMALL.num_envs) + 1e-6
        assert 1 <= row["ess"] <= SMALL.num_envs + 1e-3
    assert [r["env_steps"] for r in metrics] == sorted(r["env_steps"] for r in metrics)
    config = json.loads((out / "config.json").read_text())
    assert config["env_id"] == "CartPole-v1" and config["config"]["num_envs"] == 8
    assert (out / "curve.png").read_bytes()[:4] == b"\x89PNG"
    from tensorboard_events import scalars

    logged = scalars(out / "tensorboard")
    assert [step for step, _ in logged["bits"]] == [r["env_steps"] for r in metrics]
    np.testing.assert_allclose([v for _, v in logged["episode_return_mean"]],
                               [r["episode_return_mean"] for r in metrics], rtol=1e-6)
    assert "<svg" in (out / "graph.svg").read_text()
    assert "reweight_agent" in (out / "graph.html").read_text()
    result = evaluate(out, episodes=5)
    assert result["episodes"] == 5 and 8 <= result["return_mean"] <= 500


def test_resumed_run_equals_uninterrupted_run(full_run, tmp_path):
    _, metrics = full_run
    first = train(RunSpec.make("CartPole-v1", "reweight", SMALL, seed=3,
                               steps=metrics[0]["env_steps"]), tmp_path, progress=False)
    assert len(first) == 1
    resumed = resume(tmp_path, steps=STEPS, progress=False)  # the saved run wins
    for a, b in zip(resumed, metrics, strict=True):
        assert {k: v for k, v in a.items() if k != "wall_time"} == \
            {k: v for k, v in b.items() if k != "wall_time"}


def test_bad_configs_and_corrupt_checkpoints_are_clear_errors(full_run, tmp_path):
    with pytest.raises(ValueError, match="learning_rate: expected a number > 0"):
        ReweightConfig(learning_rate=-1.0)
    with pytest.raises(ValueError, match=r"unknown keys \['lr'\]"):
        ReweightConfig.from_dict({"lr": 0.1})
    with pytest.raises(ValueError, match="fit_paths"):
        ReweightConfig(num_envs=4, fit_paths=8)
    out, _ = full_run
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text((out / "config.json").read_text())
    (broken / "checkpoint.npz").write_bytes((out / "checkpoint.npz").read_bytes()[:500])
    with pytest.raises(mg.LoadError, match="corrupt checkpoint"):
        evaluate(broken, episodes=2)
    with pytest.raises(mg.LoadError, match="no such run directory"):
        evaluate(tmp_path / "nothing", episodes=2)
    assert not (tmp_path / "nothing").exists()  # evaluating creates nothing
    (tmp_path / "empty").mkdir()
    with pytest.raises(mg.LoadError, match="no config.json"):
        evaluate(tmp_path / "empty", episodes=2)


def test_command_line_train_and_evaluate(tmp_path, capsys):
    out = tmp_path / "run"
    cli.main(["train", "CartPole-v1", "--algo", "reweight", "--out", str(out), "--steps", "100",
              "--set", "num_envs=8", "--set", "fit_paths=4", "--set", "fit_steps=1",
              "--set", "hidden=[8]"])
    assert "iterations" in capsys.readouterr().out
    cli.main(["evaluate", str(out), "--episodes", "3", "--json"])
    assert json.loads(capsys.readouterr().out)["episodes"] == 3
    assert "unknown keys" in refusal(capsys, ["train", "CartPole-v1", "--out", str(out),
                                              "--set", "speed=3"])
    config = tmp_path / "agent.toml"
    config.write_text("num_envs = -1\n")
    assert "num_envs" in refusal(capsys, ["train", "CartPole-v1", "--out", str(out),
                                           "--config", str(config)])


def test_episodes_too_long_to_hold_whole_are_refused_by_name(monkeypatch):
    """Path reweighting keeps every path whole ([num_envs, T]): a time limit above
    MAX_HORIZON is refused naming it (issue 55: "Unable to allocate 128 TiB" before)."""
    from components.agents import reweight_agent

    monkeypatch.setattr(reweight_agent, "MAX_HORIZON", 100)
    with pytest.raises(ValueError, match=r"ReweightAgent: CartPole-v1's episodes last up to "
                                         r"500 steps .* T at most 100"):
        reweight_agent.ReweightAgent("CartPole-v1")
