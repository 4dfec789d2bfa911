"""Bad input found by trying (issue 23, part 8), each refused in one line: metrics rows that
cannot be counted (steps 0, negative, missing, a string, infinite or NaN; a return value that
is not a list), `sys.exit()` inside `run()`, `--batches-per-request` and `--num-samplers`
beyond what a sampler or this machine holds, SAC's `batch_size` above its `buffer_size`, a
diverging SAC run (blamed on the run, not on the environment that refused its actions), and
`--set` sizes whose state cannot be allocated (refused before anything is, naming the key or
the array and its size)."""

import dataclasses
import math
import re
from pathlib import Path

import jax.numpy as jnp
import pytest

import metagraph as mg
from components.agents import AgentConfig, PPOConfig, SACConfig
from components.training import MetricsError, Row, RunSpec, resume, train
from components.training.algorithm import Algorithm
from components.training.cli import main
from components.training.run.loop import NonFiniteError, RunExitedError
from components.training.run.memory import StateTooLargeError, check_state_fits
from components.training.run.run_dir import RunDir
from metagraph.spaces import Box


@dataclasses.dataclass(frozen=True)
class RowsConfig(AgentConfig):
    door: str = "native"


class Still(mg.Component):
    @mg.api
    def greedy(self, observation):
        return jnp.zeros(observation.shape[:1], jnp.int32)


class Returning(Algorithm):
    """An algorithm whose `run` returns `Returning.value` (a class attribute, set by each
    test), or calls `sys.exit(0)` when it is "exit"."""

    config_class = RowsConfig
    value = None

    def build(self, env_id, config, total_steps, eval_envs):
        return mg.build(Still(), {"observation": Box((eval_envs, 4))})

    def run(self, exe, config, key, iterations):
        if Returning.value == "exit":
            raise SystemExit(0)
        return Returning.value


GOOD = {"steps": 16, "episode_return_mean": None, "loss": 0.5}


def train_returning(tmp_path, value, steps=64):
    Returning.value = value
    return train(RunSpec.make("CartPole-v1", Returning(), RowsConfig(), steps=steps), tmp_path,
                 progress=False)


@pytest.mark.parametrize("steps, problem", [
    (0, "steps must be an int >= 1"),
    (-5, "steps must be an int >= 1"),
    ("16", "steps must be an int >= 1, got '16'"),
    (math.inf, "steps must be an int >= 1, got inf"),
    (math.nan, "steps must be an int >= 1, got nan"),
    (True, "steps must be an int >= 1, got True"),
])
def test_a_row_whose_steps_cannot_be_counted_stops_the_run_in_one_line(tmp_path, steps,
                                                                       problem):
    with pytest.raises(MetricsError) as caught:
        train_returning(tmp_path, [{**GOOD, "steps": steps}])
    message = str(caught.value)
    assert "\n" not in message and problem in message
    assert message.startswith("test_training_bad_input:Returning: run() returned a bad "
                              "metrics row 0")
    # nothing recorded: no metrics, and no checkpoint beside them
    assert RunDir(tmp_path).metrics() == []
    assert not RunDir(tmp_path).checkpoint_path.exists()


@pytest.mark.parametrize("value, problem", [
    ([{"episode_return_mean": None}], "it has no steps"),
    ([{**GOOD, "loss": "low"}], "'loss' must be a number, a list of numbers or None"),
    ([{**GOOD, "episode_return_mean": math.nan}], "episode_return_mean must be a number"),
    ([7], "a row must be a components.training.Row (or a dict), got int"),
    ({"steps": 16}, "run() must return a list of metrics rows (one per iteration done), "
                    "got dict"),
    (None, "run() must return a list of metrics rows"),
    ([], "run() returned no metrics rows"),
])
def test_rows_are_checked_at_the_door(tmp_path, value, problem):
    with pytest.raises(MetricsError, match="^test_training_bad_input:Returning: ") as caught:
        train_returning(tmp_path, value)
    assert "\n" not in str(caught.value) and problem in str(caught.value)
    assert RunDir(tmp_path).metrics() == []


def test_typed_rows_and_the_previous_protocols_dicts_both_train(tmp_path):
    rows = train_returning(tmp_path / "typed", [Row(16, 2.0, {"loss": 0.5})] * 2)
    assert [r["env_steps"] for r in rows] == [16, 32, 48, 64]  # two calls of two rows
    assert rows[-1]["episode_return_mean"] == 2.0 and rows[-1]["loss"] == 0.5
    rows = train_returning(tmp_path / "dicts", [{**GOOD, "episode_return_mean": 1.0}])
    assert [r["env_steps"] for r in rows] == [16, 32, 48, 64]
    row = Row(16, None, {"loss": 0.5})
    assert row["steps"] == 16 and set(row) == {"steps", "episode_return_mean", "loss"}


def test_a_row_where_no_episode_ended_repeats_the_last_episode_means_over_a_resume(tmp_path):
    ended = Row(16, 2.0, {"episode_length_mean": 5.0})
    none = Row(16, None, {"episode_length_mean": None})
    rows = train_returning(tmp_path, [none, ended, none], steps=48)
    assert [(r["episode_return_mean"], r["episode_length_mean"]) for r in rows] == [
        (None, None), (2.0, 5.0), (2.0, 5.0)]
    Returning.value = [none, none, Row(16, 3.0, {"episode_length_mean": 6.0})]
    rows = resume(tmp_path, steps=96, algo=Returning(), progress=False)
    assert [(r["episode_return_mean"], r["episode_length_mean"]) for r in rows[3:]] == [
        (2.0, 5.0), (2.0, 5.0), (3.0, 6.0)]


def test_sys_exit_inside_run_is_an_error_not_a_finished_run(tmp_path, capsys):
    with pytest.raises(RunExitedError, match=r"run\(\) called sys.exit\(0\) during call 1"):
        train_returning(tmp_path / "api", "exit")
    Returning.value = "exit"
    with pytest.raises(SystemExit) as exited:
        main(["train", "CartPole-v1", "--algo", f"{Path(__file__)}:Returning",
              "--out", str(tmp_path / "cli"), "--steps", "64"])
    assert exited.value.code == 2
    err = [line for line in capsys.readouterr().err.splitlines()
           if line.strip() and "step/s" not in line]  # the progress bar's lines aside
    assert len(err) == 1 and "called sys.exit(0)" in err[0] and "not finished" in err[0]


def test_batches_per_request_is_bounded_by_what_a_sampler_holds(tmp_path):
    with pytest.raises(ValueError, match=r"batches_per_request=1000000000: at most 1024"):
        train(RunSpec.make("CartPole-v1", "impala", runner="ray",
                           batches_per_request=1_000_000_000), tmp_path, progress=False)


def test_num_samplers_is_bounded_by_this_machines_cores(tmp_path):
    with pytest.raises(ValueError, match=r"num_samplers=1000: this machine has \d+ cores; "
                                         r"run at most \d+ samplers here"):
        train(RunSpec.make("CartPole-v1", "impala", num_samplers=1000), tmp_path, progress=False)


def test_sac_batch_size_above_buffer_size_is_refused():
    with pytest.raises(ValueError, match=r"SACConfig.batch_size: expected an int in "
                                         r"\[1, buffer_size\]"):
        SACConfig.from_dict({"buffer_size": 512, "batch_size": 513})


@pytest.mark.parametrize("setting, message", [
    ("hidden=[100000000]", "PPOConfig.hidden: expected positive ints up to 65536"),
    ("num_envs=100000000", "PPOConfig.num_envs: expected an int in [1, 1048576]"),
    ("buffer_size=99999999999999", "DQNConfig.buffer_size: expected an int in [1, 268435456]"),
])
def test_huge_sizes_on_the_command_line_are_refused_in_one_line(tmp_path, capsys, setting,
                                                                message):
    algo = "dqn" if "buffer" in setting else "ppo"
    with pytest.raises(SystemExit) as exited:
        main(["train", "CartPole-v1", "--algo", algo, "--out", str(tmp_path), "--set", setting])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_a_state_larger_than_memory_is_refused_before_it_is_allocated(tmp_path):
    """Sizes the configs accept can still make a state this machine cannot hold: estimated
    from the built graph's spaces, refused before the executor allocates anything."""
    from components.training import resolve

    sac = resolve("sac")
    config = sac.config("Pendulum-v1", {"buffer_size": 2**28})
    graph = sac.build("Pendulum-v1", config, 1000, 1)
    with pytest.raises(StateTooLargeError) as caught:
        check_state_fits(graph, "sac", available=2**30)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("sac: the state would take ")
    assert "more than the 1.0 GiB of memory available" in message
    assert "its largest array is sac_agent/replay storage/" in message
    assert "float32[268435456,3] (3.0 GiB)" in message
    assert check_state_fits(graph, "sac", available=graph.state_bytes()) == graph.state_bytes()


def test_the_trainer_checks_the_state_size_before_lowering(tmp_path, monkeypatch):
    from components.training.run import memory

    monkeypatch.setattr(memory, "available_bytes", lambda: 1024)
    with pytest.raises(StateTooLargeError, match=r"^ppo: the state would take .* more than "
                                                 r"the 1.0 KiB of memory available"):
        train(RunSpec.make("CartPole-v1", "ppo", PPOConfig()), tmp_path, progress=False)
    assert not RunDir(tmp_path).checkpoint_path.exists()


def test_a_diverging_sac_run_says_it_diverged(tmp_path):
    """A learning rate of 1e308: the actor's parameters overflow, its actions are NaN and the
    environment refuses them; the run stops saying it diverged, and saves nothing."""
    config = SACConfig(hidden=(8,), batch_size=16, buffer_size=512, learning_starts=32,
                       rollout=32, updates_per_iteration=4, iterations_per_call=4,
                       learning_rate=1e308)
    with pytest.raises(NonFiniteError) as caught:
        train(RunSpec.make("Pendulum-v1", "sac", config, steps=2048), tmp_path, progress=False)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("sac: training diverged: ")
    assert "action at index 0 is not finite" in message  # what the environment saw, after
    assert not RunDir(tmp_path).checkpoint_path.exists()


HANGING = f'''
import signal, sys, threading
signal.signal(signal.SIGINT, signal.default_int_handler)  # as a terminal starts it
sys.path.insert(0, {str(Path(__file__).parent)!r})
from components.training.run import callbacks
from components.training.cli import main
from test_training_bad_input import Returning


class Hanging(Returning):
    """Two good calls, then a call that never returns."""
    calls = 0

    def run(self, exe, config, key, iterations):
        if Hanging.calls == 2:
            print("hanging", flush=True)
            threading.Event().wait()
        Hanging.calls += 1
        return [{{"steps": 16, "episode_return_mean": 1.0}}]


callbacks.CHECKPOINT_SECONDS = 0.0  # a checkpoint after every call
if __name__ == "__main__":
    main(["train", "CartPole-v1", "--algo", f"{{__file__}}:Hanging", "--out", sys.argv[1],
          "--steps", "1000"])
'''


def test_a_second_ctrl_c_ends_a_call_that_never_returns(tmp_path):
    import json
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "hanging.py"
    script.write_text(HANGING)
    child = subprocess.Popen([sys.executable, str(script), str(tmp_path / "run")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "hanging"
        child.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert child.poll() is None  # the first Ctrl-C waits for the call
        child.send_signal(signal.SIGINT)
        child.wait(timeout=30)
    finally:
        child.kill()
    assert child.returncode == 130
    assert "interrupted twice during a call" in child.stderr.read()
    # the checkpoint on disk is the one of the last whole call
    header = json.loads((tmp_path / "run" / "config.json").read_text())
    assert header["algo"].endswith("hanging.py:Hanging")
    assert len(RunDir(tmp_path / "run").metrics()) == 2
    assert RunDir(tmp_path / "run").checkpoint_path.exists()


def test_the_ctrl_c_handler_is_restored_when_the_previous_wakeup_fd_closed_meanwhile():
    """An event loop (Ray's) may own the wakeup fd when a run starts and close it before the
    run ends: the block still restores Python's SIGINT handler."""
    import os
    import signal

    from components.training.run.interrupts import deferred_interrupts

    before = signal.getsignal(signal.SIGINT)
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd)
    try:
        with deferred_interrupts():
            os.close(write_fd)
            os.close(read_fd)
        assert signal.getsignal(signal.SIGINT) is before
    finally:
        signal.set_wakeup_fd(-1)


def test_a_checkpoint_holding_a_forged_environment_state_is_refused_in_one_line(tmp_path,
                                                                               capsys):
    """`--resume` from a checkpoint whose environment state no reset or step made (a step
    count past the time limit, written by hand): refused when the checkpoint is loaded, one
    line naming the environment, before any call (nothing donated, the checkpoint intact)."""
    from metagraph import archive, checkpoint

    args = ["train", "CartPole-v1", "--algo", "ppo", "--out", str(tmp_path), "--set",
            "num_envs=2", "--set", "num_steps=8", "--set", "hidden=[8]", "--set",
            "iterations_per_call=1"]
    main([*args, "--steps", "16"])
    capsys.readouterr()
    path = RunDir(tmp_path).checkpoint_path
    header, arrays = archive.read(path, checkpoint.FORMAT, str(path), "checkpoint")
    index, where = next((i, leaf["path"]) for i, leaf in enumerate(header["leaves"])
                        if "env_state" in leaf["path"])
    scope = where.split("'")[1]
    words = arrays[f"leaf_{index}"].copy()  # uint32[W, n, 2]: the last row counts steps
    words[-1, 1] = [10**6, 0]
    with open(path, "wb") as f:
        archive.write(f, header, {**arrays, f"leaf_{index}": words})
    saved = path.read_bytes()
    with pytest.raises(SystemExit) as exited:
        main([*args, "--steps", "32", "--resume"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"{scope}.set_state: CartPole-v1 step: environment 1 has step count 1000000" in err[0]
    assert "Traceback" not in err[0] and "donated" not in err[0]
    assert path.read_bytes() == saved


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A short PPO run's directory and its config.json as written."""
    import json

    out = tmp_path_factory.mktemp("recorded")
    main(["train", "CartPole-v1", "--algo", "ppo", "--steps", "64", "--set", "num_envs=2",
          "--set", "num_steps=16", "--set", "hidden=[8]", "--out", str(out)])
    return out, json.loads((out / "config.json").read_text())


@pytest.mark.parametrize("change, message", [
    (lambda saved: [1, 2], r"corrupt \(a JSON object of the run's settings expected, got list"),
    (lambda saved: {k: v for k, v in saved.items() if k != "env_id"},
     r"corrupt \('env_id' must be a string, got None\)"),
    (lambda saved: {**saved, "seed": "x"}, r"seed must be an int in \[0, 4294967295\], got 'x'"),
    (lambda saved: {**saved, "steps": True}, r"steps must be a positive int, got True"),
    (lambda saved: {**saved, "config": [1]}, r"corrupt \('config' must be an object"),
    (lambda saved: {**saved, "seeds": "abc"}, r"seeds must be a positive int, got 'abc'"),
    (lambda saved: {**saved, "config": {**saved["config"], "hidden": "x"}},
     r"PPOConfig.hidden: expected a list of ints, got 'x'"),
    (lambda saved: "[" * 100_000 + "]" * 100_000, r"corrupt \(nested too deeply to read\)"),
])
def test_a_config_json_of_the_wrong_shape_is_one_line_naming_the_file(recorded, tmp_path,
                                                                       capsys, change,
                                                                       message):
    """Issue 55, moderate 2: KeyError, TypeError and RecursionError tracebacks before."""
    import json
    import shutil

    from command_line import refusal

    run, saved = recorded
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    changed = change(saved)
    (copy / "config.json").write_text(changed if isinstance(changed, str)
                                      else json.dumps(changed))
    said = refusal(capsys, ["evaluate", str(copy), "--episodes", "1"])
    assert str(copy / "config.json") in said
    assert re.search(message, said), said
