"""What a training run survives (issue 18): Ctrl-C inside an executable call and during the
save (item 4), a kill during the rewrite of metrics.jsonl, a cut last row, the mean return and
the TensorBoard events across a resume, an orphan temporary checkpoint (item 5), a diverging
run (item 9)."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import gymnasium
import jax
import numpy as np
import pytest
from tensorboard_events import scalars

import metagraph as mg
from components.agents import PPOConfig
from components.training import RunSpec, resume, train
from components.training.algorithms import PPO
from components.training.run import callbacks, loop
from components.training.run.interrupts import deferred_interrupts
from components.training.run.run_dir import RunDir
from metagraph import checkpoint

SMALL = PPOConfig(num_envs=2, num_steps=8, epochs=1, minibatches=1, hidden=(8,),
                  iterations_per_call=1)
STEPS_PER_CALL = SMALL.num_envs * SMALL.num_steps


# ---- item 4: Ctrl-C ----------------------------------------------------------------------------
@pytest.fixture
def ctrl_c_reaches_python():
    """Python's own SIGINT handler for the test, as in an interactive run: a shell's
    background job (CI launched with `&`) starts with Ctrl-C ignored."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_is_held_back_until_the_block_ends_then_raised_once(ctrl_c_reaches_python):
    done = []
    with pytest.raises(KeyboardInterrupt), deferred_interrupts() as interrupts:
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
        done.append(True)
    assert done == [True] and interrupts.received == 2


def test_an_ignored_ctrl_c_stays_ignored():
    """A job a shell started with `&` (no job control) has SIGINT ignored, so that the
    terminal's Ctrl-C for the job in front does not reach it: the trainer keeps it so, as
    Python does, instead of taking SIGINT over once training begins."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with deferred_interrupts() as interrupts:
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
        assert interrupts.received == 0
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


class InterruptingCartPole(gymnasium.Wrapper):
    """CartPole that sends this process SIGINT on its 20th step: Ctrl-C landing inside the
    executable call, in the gymnasium door's host callback, after the state was donated."""

    steps = 0

    def __init__(self):
        super().__init__(gymnasium.make("CartPole-v1"))

    def step(self, action):
        InterruptingCartPole.steps += 1
        if InterruptingCartPole.steps == 20:
            os.kill(os.getpid(), signal.SIGINT)
        return super().step(action)


gymnasium.register("test/InterruptingCartPole-v0", entry_point=InterruptingCartPole,
                   max_episode_steps=500)


def test_ctrl_c_inside_the_call_and_again_during_the_save_keeps_the_last_whole_call(
        tmp_path, monkeypatch, ctrl_c_reaches_python):
    saves = []
    save = checkpoint.save

    def interrupted_save(*args, **kwargs):  # the second Ctrl-C, in the middle of the save
        saves.append(1)
        os.kill(os.getpid(), signal.SIGINT)
        return save(*args, **kwargs)

    monkeypatch.setattr(checkpoint, "save", interrupted_save)
    config = PPOConfig(**{**SMALL.to_dict(), "door": "gymnasium"})
    with pytest.raises(KeyboardInterrupt):
        train(RunSpec.make("test/InterruptingCartPole-v0", "ppo", config,
                           steps=10 * STEPS_PER_CALL), tmp_path, progress=False)
    rows = RunDir(tmp_path).metrics()
    # step 20 is in the second call (16 environment steps a call): it finished, then stopped
    assert len(rows) == 2 and saves == [1]
    _, meta = checkpoint.load(tmp_path / "checkpoint.npz")
    assert (meta["call"], meta["env_steps"]) == (2, rows[-1]["env_steps"])


# ---- item 5: the run directory --------------------------------------------------------------
def rows(n, start=0):
    return [{"iteration": i, "env_steps": 10 * (i + 1), "wall_time": 0.1 * i,
             "episode_return_mean": float(i), "loss": 1.0 / (i + 1)}
            for i in range(start, start + n)]


def test_a_kill_during_the_rewrite_of_metrics_leaves_it_whole(tmp_path):
    run = RunDir(tmp_path)
    run.append_metrics(rows(3000))
    before = run.metrics_path.read_bytes()
    # the child is killed (SIGXFSZ) once it writes past 4 KiB: a kill in mid-write
    script = textwrap.dedent(f"""
        import resource, signal
        from components.training.run.run_dir import RunDir
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        RunDir({str(tmp_path)!r}).keep_metrics(2000)
    """)
    child = subprocess.run([sys.executable, "-c", script], timeout=120)
    assert child.returncode == -signal.SIGXFSZ
    assert run.metrics_path.read_bytes() == before
    assert len(run.keep_metrics(2000)) == 2000  # and the orphan temporary file goes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.jsonl"]


def test_a_cut_last_row_is_dropped_with_a_warning_any_other_bad_row_is_named(tmp_path):
    run = RunDir(tmp_path)
    good = rows(3)
    run.metrics_path.write_text("".join(json.dumps(r) + "\n" for r in good)
                                + json.dumps(rows(1, 3)[0])[:25])
    with pytest.warns(UserWarning, match=r"metrics.jsonl:4: dropped a partial last row"):
        assert run.keep_metrics(10) == good
    assert run.metrics() == good  # rewritten without it
    run.metrics_path.write_text(json.dumps(good[0]) + "\n{\"iteration\": 1,\n"
                                + json.dumps(good[2]) + "\n")
    with pytest.raises(mg.LoadError, match=r"metrics.jsonl:2: not a metrics row"):
        run.metrics()


def test_resume_keeps_the_mean_return_and_rebuilds_the_tensorboard_events(tmp_path,
                                                                          monkeypatch):
    train(RunSpec.make("CartPole-v1", "ppo", SMALL, steps=3 * STEPS_PER_CALL), tmp_path,
          progress=False)
    for events in (tmp_path / "tensorboard").iterdir():  # points a killed run never flushed
        events.write_bytes(b"")
    kept = RunDir(tmp_path).metrics()
    run = PPO.run

    def no_episode_ends(self, *args):
        return [{**row, "episode_return_mean": None} for row in run(self, *args)]

    monkeypatch.setattr(PPO, "run", no_episode_ends)
    resumed = resume(tmp_path, steps=5 * STEPS_PER_CALL, progress=False)
    assert [r["episode_return_mean"] for r in resumed[3:]] == \
        [kept[-1]["episode_return_mean"]] * 2
    assert scalars(tmp_path / "tensorboard")["loss"] == \
        [(r["env_steps"], pytest.approx(r["loss"])) for r in resumed]


def test_a_stale_temporary_checkpoint_is_removed_by_the_next_save_and_load(tmp_path):
    state = {"a": {"w": np.arange(3, dtype=np.float32)}}
    orphan = tmp_path / ".c.npz.abc123.tmp"  # what a kill in mid-save leaves
    orphan.write_bytes(b"half a checkpoint")
    checkpoint.save(tmp_path / "c.npz", state)
    assert not orphan.exists()
    orphan.write_bytes(b"half a checkpoint")
    checkpoint.load(tmp_path / "c.npz", like=state)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.npz"]


# ---- item 9: a diverging run ----------------------------------------------------------------
def test_a_non_finite_loss_stops_the_run_and_keeps_the_last_good_checkpoint(tmp_path,
                                                                            monkeypatch):
    monkeypatch.setattr(callbacks, "CHECKPOINT_SECONDS", 0.0)  # a checkpoint after every call
    run = PPO.run
    calls = []

    def diverging(self, *args):
        out = run(self, *args)
        calls.append(1)
        return [{**row, "loss": float("nan")} for row in out] if len(calls) == 3 else out

    monkeypatch.setattr(PPO, "run", diverging)
    with pytest.raises(loop.NonFiniteError, match=r"iteration 2 has loss nan; the state of "
                                                     r"call 3 is not saved, .* after call 2"):
        train(RunSpec.make("CartPole-v1", "ppo", SMALL, steps=5 * STEPS_PER_CALL), tmp_path,
              progress=False)
    _, meta = checkpoint.load(tmp_path / "checkpoint.npz")
    assert meta["call"] == 2 and len(RunDir(tmp_path).metrics()) == 2


def test_nan_in_the_state_is_never_saved(tmp_path, monkeypatch):
    monkeypatch.setattr(callbacks, "CHECKPOINT_SECONDS", 0.0)
    run = PPO.run
    calls = []

    def poisoned(self, exe, *args):
        out = run(self, exe, *args)
        calls.append(1)
        if len(calls) == 2:
            scope = "ppo_agent/policy/torso"  # parameters gone NaN
            exe.set_state(jax.tree.map(lambda x: np.full_like(x, np.nan),
                                       exe.get_state(scope)), scope)
        return out

    monkeypatch.setattr(PPO, "run", poisoned)
    with pytest.raises(loop.NonFiniteError, match=r"NaN in the state"):
        train(RunSpec.make("CartPole-v1", "ppo", SMALL, steps=5 * STEPS_PER_CALL), tmp_path,
              progress=False)
    _, meta = checkpoint.load(tmp_path / "checkpoint.npz")
    assert meta["call"] == 1


def test_a_slow_checkpoint_is_written_less_often(tmp_path, monkeypatch):
    """A checkpoint that takes longer to write than CHECKPOINT_SHARE of the interval (a big
    replay buffer) stretches the interval, so writing keeps to that share of the run."""
    from backends.xla import XlaExecutor

    monkeypatch.setattr(callbacks, "CHECKPOINT_SECONDS", 1e-6)  # else: after every call
    monkeypatch.setattr(callbacks, "CHECKPOINT_SHARE", 1e-6)    # one slow save: none again
    saves = []
    save = XlaExecutor.save_checkpoint

    def slow_save(self, *args, **kwargs):
        saves.append(time.sleep(0.05))
        return save(self, *args, **kwargs)

    monkeypatch.setattr(XlaExecutor, "save_checkpoint", slow_save)
    train(RunSpec.make("CartPole-v1", "ppo", SMALL, steps=4 * STEPS_PER_CALL), tmp_path,
          progress=False)
    _, meta = checkpoint.load(tmp_path / "checkpoint.npz")
    assert len(saves) == 2 and meta["call"] == 4  # after call 1, then when training stopped


def test_ctrl_c_while_the_run_starts_stops_it_between_phases(tmp_path, ctrl_c_reaches_python):
    """Python's own handler raises KeyboardInterrupt at whatever line runs, and one raised
    inside a garbage-collection callback is printed as "Exception ignored" and lost (the run
    trained on). While a run starts, SIGINT is held back and the run stops after the phase
    under way: the build below finishes, and no call runs."""
    from components.training import Algorithm

    phases = []

    class InterruptedWhileBuilding(Algorithm):
        config_class = PPOConfig

        def build(self, env_id, config, total_steps, eval_envs):
            os.kill(os.getpid(), signal.SIGINT)
            phases.append("built")  # (Python's own handler would have raised above)
            return PPO().build(env_id, config, total_steps, eval_envs)

        def run(self, exe, config, key, iterations):
            phases.append("ran")
            return PPO().run(exe, config, key, iterations)

    with pytest.raises(KeyboardInterrupt):
        train(RunSpec.make("CartPole-v1", InterruptedWhileBuilding(), SMALL, steps=256),
              tmp_path, progress=False)
    assert phases == ["built"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_ctrl_c_while_the_command_imports_stops_it_once_they_are_done(ctrl_c_reaches_python,
                                                                      capsys):
    from types import SimpleNamespace

    from components import console

    def importing():  # a Ctrl-C in the middle of the imports, which go on to their end
        os.kill(os.getpid(), signal.SIGINT)
        return SimpleNamespace(main=lambda argv: pytest.fail("the command ran"))

    with pytest.raises(SystemExit) as stop:
        console.main(["train", "CartPole-v1"], load=importing)
    assert stop.value.code == 130
    assert "interrupted while starting" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ran = []
    console.main(["x"], load=lambda: SimpleNamespace(main=ran.append))
    assert ran == [["x"]]


def test_a_ctrl_c_held_back_by_an_outer_block_stops_the_inner_one(ctrl_c_reaches_python):
    """A Ctrl-C between the start-up's last check and the training loop's own block is
    handed on to the loop's block, which stops at once (it used to wait for the whole run)."""
    with pytest.raises(KeyboardInterrupt), deferred_interrupts() as startup:
        os.kill(os.getpid(), signal.SIGINT)
        assert startup.received == 1
        with deferred_interrupts() as inner:
            assert inner.received == 1 and startup.received == 0
            inner.stop_if_received()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
