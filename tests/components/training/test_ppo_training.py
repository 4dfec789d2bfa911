"""PPO end to end, kept small: its run directory, determinism across a resume, its config
checks, and the same losses as a step-by-step reference for the fused update (the loss of the
first minibatch equals PPOLoss on the rollout it came from is covered by the loss tests; here
the whole agent must learn a little and keep its counters)."""

import json

import numpy as np
import pytest
from command_line import refusal

from components.agents import PPOConfig
from components.training import Callback, RunSpec, cli, evaluate, resume, train
from components.training.algorithms import PPO

SMALL = PPOConfig(num_envs=2, num_steps=16, epochs=2, minibatches=2, hidden=(8,),
                  iterations_per_call=2)


def interrupt_the_second_call(monkeypatch):
    """Make PPO's second training call raise KeyboardInterrupt (Ctrl-C during it); returns
    the real `PPO.run`."""
    calls = []
    run = PPO.run

    def interrupted(self, *args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return run(self, *args)

    monkeypatch.setattr(PPO, "run", interrupted)
    return run


def test_ppo_run_directory_and_resume_after_an_interruption(tmp_path, monkeypatch):
    full = train(RunSpec.make("CartPole-v1", "ppo", SMALL, seed=1, steps=256), tmp_path / "full",
                 progress=False)
    assert len(full) == 8 and full[-1]["env_steps"] == 256
    assert all(m["episode_return_mean"] is None or m["episode_return_mean"] > 0 for m in full)
    # CartPole's reward is 1 a step: an episode's length is its return
    assert all(m["episode_length_mean"] == pytest.approx(m["episode_return_mean"])
               for m in full if m["episode_return_mean"] is not None)
    optimizer_steps = 8 * SMALL.epochs * SMALL.minibatches
    assert json.loads((tmp_path / "full" / "config.json").read_text())["algo"] == "ppo"
    run = interrupt_the_second_call(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        train(RunSpec.make("CartPole-v1", "ppo", SMALL, seed=1, steps=256), tmp_path / "part",
              progress=False)
    monkeypatch.setattr(PPO, "run", run)
    assert len((tmp_path / "part" / "metrics.jsonl").read_text().splitlines()) == 2
    resumed = resume(tmp_path / "part", steps=256, progress=False)
    for a, b in zip(resumed, full, strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-6)
        assert a["env_steps"] == b["env_steps"]
    result = evaluate(tmp_path / "full", episodes=3)
    assert result["episodes"] == 3
    from backends import xla

    exe = xla.lower(PPO().build("CartPole-v1", SMALL, 256, 1))
    exe.load_checkpoint(tmp_path / "full" / "checkpoint.npz")
    assert int(np.asarray(exe.get_state("ppo_agent/optimizer")["count"])) == optimizer_steps


def test_ppo_config_checks_and_command_line(tmp_path, capsys):
    with pytest.raises(ValueError, match="minibatches: expected an int >= 1 dividing"):
        PPOConfig(num_envs=3, num_steps=5, minibatches=4)
    with pytest.raises(ValueError, match="gamma"):
        PPOConfig(gamma=1.5)
    assert "unknown algorithm 'td3'; expected one of reweight" in refusal(
        capsys, ["train", "CartPole-v1", "--algo", "td3", "--out", str(tmp_path)])
    assert "SAC needs a bounded Box action space of one axis; CartPole-v1 has Discrete(2)" in \
        refusal(capsys, ["train", "CartPole-v1", "--algo", "sac", "--out", str(tmp_path)])


@pytest.mark.parametrize("door", ["host", "gymnasium"])
def test_ppo_runs_on_host_doors(door, tmp_path):
    """The same agent, its fused rollout stepping a host pool (our threaded one, or
    Gymnasium's own CartPole through the adapter) from inside the compiled program."""
    config = PPOConfig(**{**SMALL.to_dict(), "door": door})
    metrics = train(RunSpec.make("CartPole-v1", "ppo", config, seed=0, steps=128), tmp_path,
                    progress=False)
    assert metrics[-1]["env_steps"] == 128
    assert any(m["episode_return_mean"] for m in metrics)
    assert evaluate(tmp_path, episodes=2)["episodes"] == 2


def test_seeds_train_at_once_and_each_equals_its_own_run(tmp_path):
    together = train(RunSpec.make("CartPole-v1", "ppo", SMALL, seed=1, steps=128, seeds=2),
                     tmp_path / "both", progress=False)
    alone = [train(RunSpec.make("CartPole-v1", "ppo", SMALL, seed=s, steps=128),
                   tmp_path / f"s{s}", progress=False) for s in (1, 2)]
    for i, row in enumerate(together):
        assert row["loss"] == pytest.approx((alone[0][i]["loss"] + alone[1][i]["loss"]) / 2,
                                            rel=1e-5)
        for value, own in zip(row["episode_return_mean_per_seed"], alone, strict=True):
            if own[i]["episodes"]:  # the seed finished episodes in this iteration
                assert value == pytest.approx(own[i]["episode_return_mean"], rel=1e-6)
            else:
                assert value is None
    result = evaluate(tmp_path / "both", episodes=2)
    assert len(result["return_mean_per_seed"]) == 2
    with pytest.raises(ValueError, match="needs an in-graph environment"):
        train(RunSpec.make("CartPole-v1", "ppo", PPOConfig(**{**SMALL.to_dict(), "door": "host"}),
                           steps=64, seeds=2), tmp_path / "host", progress=False)


def test_a_run_does_exactly_the_whole_iterations_its_steps_ask_for(tmp_path):
    """steps=100 is 3 iterations of 32 steps: a call of 2, then a call whose second iteration
    is skipped. They equal the first 3 of a 4-iteration run (same keys, constant rate)."""
    config = PPOConfig(**{**SMALL.to_dict(), "anneal_lr": False})
    partial = train(RunSpec.make("CartPole-v1", "ppo", config, seed=1, steps=100), tmp_path / "3",
                    progress=False)
    whole = train(RunSpec.make("CartPole-v1", "ppo", config, seed=1, steps=128), tmp_path / "4",
                  progress=False)
    assert [m["env_steps"] for m in partial] == [32, 64, 96]
    for a, b in zip(partial, whole[:3], strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-6)
    from backends import xla

    exe = xla.lower(PPO().build("CartPole-v1", config, 100, 1))
    exe.load_checkpoint(tmp_path / "3" / "checkpoint.npz")
    assert int(np.asarray(exe.get_state("ppo_agent/optimizer")["count"])) == \
        3 * config.epochs * config.minibatches


def test_ctrl_c_on_the_command_line_says_how_to_resume(tmp_path, monkeypatch, capsys):
    interrupt_the_second_call(monkeypatch)
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["train", "CartPole-v1", "--algo", "ppo", "--out", str(out), "--steps", "256",
                  "--set", "num_envs=2", "--set", "num_steps=16", "--set", "hidden=[8]",
                  "--set", "iterations_per_call=2"])
    assert exit_info.value.code == 130
    assert "--resume" in capsys.readouterr().err
    assert (out / "checkpoint.npz").exists()
    assert (out / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # what was trained


def test_a_resumed_host_door_run_starts_its_episodes_again(tmp_path, monkeypatch):
    """A host pool's environments are not in the checkpoint: the resumed process's are new,
    so the running episodes start again (their returns so far zero, not carried onto the new
    episodes). The native door's are in it and continue: the resumed run equals the
    uninterrupted one (`test_ppo_run_directory_and_resume_after_an_interruption`)."""
    config = PPOConfig(**{**SMALL.to_dict(), "door": "host", "iterations_per_call": 1})
    seen = {}

    class Running(Callback):
        def on_start(self, loop):
            seen[len(seen)] = np.asarray(loop.exe.get_state("ppo_agent/rollout")["episode_return"])

    run = interrupt_the_second_call(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        train(RunSpec.make("CartPole-v1", "ppo", config, seed=3, steps=256), tmp_path,
              progress=False, callbacks=[Running()])
    monkeypatch.setattr(PPO, "run", run)
    from backends import xla

    exe = xla.lower(PPO().build("CartPole-v1", config, 256, 1))
    exe.load_checkpoint(tmp_path / "checkpoint.npz")
    saved = np.asarray(exe.get_state("ppo_agent/rollout")["episode_return"])
    assert np.all(saved > 0)  # both episodes were running when the checkpoint was written
    resume(tmp_path, progress=False, callbacks=[Running()])
    np.testing.assert_array_equal(seen[1], 0 * saved)
