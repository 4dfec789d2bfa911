"""A run directory is written by one run at a time: a second `train` (or `--resume`) into it
while the first still writes is refused naming the first, before either touches a file; a
train refused at once leaves no empty directory behind (issue 35)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest
from command_line import refusal

from components.training import RunDir, RunDirLocked, RunSpec, train

HOLD = textwrap.dedent("""
    import sys, time
    from components.training import RunDir
    lock = RunDir(sys.argv[1]).lock()
    print("held", flush=True)
    time.sleep(120)
""")


@pytest.fixture
def held(tmp_path):
    """`tmp_path / "run"`, locked by another process as a training run holds it."""
    out = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield out, holder.pid
    finally:
        holder.kill()
        holder.wait()


def test_a_second_run_into_a_directory_being_written_is_refused_naming_the_first(held,
                                                                                    capsys):
    out, pid = held
    (out / "metrics.jsonl").write_text('{"iteration": 0}\n')  # the first run's rows
    message = refusal(capsys, ["train", "CartPole-v1", "--steps", "10", "--out", str(out)])
    assert f"{out} is being written by another run (process {pid}:" in message
    assert "choose another --out" in message
    assert (out / "metrics.jsonl").read_text() == '{"iteration": 0}\n'  # untouched
    assert not (out / "config.json").exists()
    message = refusal(capsys, ["train", "CartPole-v1", "--resume", "--out", str(out)])
    assert "is being written by another run" in message


def test_the_lock_goes_with_the_process_that_held_it(held):
    out, pid = held
    with pytest.raises(RunDirLocked):
        RunDir(out).lock()
    subprocess.run(["kill", "-9", str(pid)], check=True)
    deadline = time.monotonic() + 30
    while True:  # the kernel drops a killed process's flock
        try:
            RunDir(out).lock().release()
            break
        except RunDirLocked:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_a_lock_released_in_process_lets_the_next_run_in(tmp_path):
    run = RunDir(tmp_path / "run")
    lock = run.lock()
    with pytest.raises(RunDirLocked, match=f"process .*{sys.argv[0].split('/')[-1]}"):
        RunDir(tmp_path / "run").lock()  # another open of the file: another holder
    lock.release()
    RunDir(tmp_path / "run").lock().release()


def test_a_train_refused_at_once_leaves_no_directory(tmp_path, capsys):
    out = tmp_path / "new" / "run"
    refusal(capsys, ["train", "CartPole-v1", "--steps", "0", "--out", str(out)])
    assert not out.exists()
    with pytest.raises(ValueError, match="steps must be"):  # refused before any directory
        RunSpec.make("CartPole-v1", "ppo", steps=-5)
    with pytest.raises(ValueError, match="this run has none"):  # refused by train
        train(RunSpec.make("CartPole-v1", "ppo", steps=5), out, actor_device="cpu")
    assert not out.exists()
    existing = tmp_path / "kept"
    existing.mkdir()
    refusal(capsys, ["train", "CartPole-v1", "--steps", "0", "--out", str(existing)])
    assert existing.is_dir()  # a directory the user made stays


@pytest.mark.parametrize("name", [".lock", "graph.svg", "curve.png", "metrics.jsonl"])
def test_a_resume_never_writes_through_a_link_out_of_the_run(tmp_path, capsys, name):
    """Issue 55, serious 1: a received run directory whose `.lock`, `graph.svg`, ... links to
    a file elsewhere had that file overwritten by `train --resume`. Now refused, naming the
    link; the target is untouched."""
    from components.training.cli import main

    run = tmp_path / "run"
    main(["train", "CartPole-v1", "--algo", "ppo", "--steps", "32", "--set", "num_envs=2",
          "--set", "num_steps=16", "--set", "hidden=[8]", "--out", str(run)])
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious")
    (run / name).unlink(missing_ok=True)
    (run / name).symlink_to(target)
    said = refusal(capsys, ["train", "CartPole-v1", "--resume", "--out", str(run), "--steps",
                            "64"])
    assert f"{name} -> {target} is a symbolic link; a run writes its files inside its " \
           f"directory, never through links" in said
    assert target.read_text() == "precious"
