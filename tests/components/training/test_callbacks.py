"""A user's callbacks on the training loop (`components.training.Callback`, SB3's model): they
see the start, every call's rows (after the evaluation added its numbers, before the
reporting) and the end; a number added to a row reaches metrics.jsonl and TensorBoard; False
ends the run after that call, finished (saved, reported); a callback's own exception keeps its
type and the last good checkpoint; anything that is not a Callback is refused at once."""

from __future__ import annotations

import json

import pytest

from components.agents import PPOConfig
from components.training import Callback, RunSpec, load, train
from components.training.run.evaluation_settings import EvaluationSettings
from metagraph import checkpoint

SMALL = PPOConfig(num_envs=2, num_steps=8, epochs=1, minibatches=1, hidden=(8,),
                  iterations_per_call=1)
STEPS_PER_CALL = SMALL.num_envs * SMALL.num_steps


class Watcher(Callback):
    """Records what it is shown; adds a number to each call's last row; stops after `calls`."""

    def __init__(self, calls: int):
        self.calls, self.seen, self.ends, self.starts = calls, [], [], 0

    def on_start(self, loop):
        self.starts += 1

    def on_rows(self, loop, rows):
        self.seen.append(dict(rows[-1]))
        rows[-1]["my_number"] = float(len(self.seen))
        return len(self.seen) < self.calls

    def on_end(self, loop, outcome):
        self.ends.append((outcome, loop.counters.call))


class Failing(Callback):
    class Mine(Exception):
        pass

    def on_rows(self, loop, rows):
        if loop.counters.call == 3:
            raise Failing.Mine("my own error")


def test_a_users_callback_sees_the_rows_adds_to_them_and_stops_the_run(tmp_path):
    watcher = Watcher(calls=3)
    spec = RunSpec.make("CartPole-v1", "ppo", SMALL, steps=10 * STEPS_PER_CALL,
                        evaluation=EvaluationSettings(every=2 * STEPS_PER_CALL, episodes=2))
    rows = train(spec, tmp_path, callbacks=[watcher], progress=False)
    assert watcher.starts == 1 and watcher.ends == [("finished", 3)]
    assert len(rows) == 3 and [row["my_number"] for row in rows] == [1.0, 2.0, 3.0]
    assert "eval_return_mean" in watcher.seen[1]  # the evaluation's numbers come first
    written = (tmp_path / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["my_number"] for line in written] == [1.0, 2.0, 3.0]
    assert (tmp_path / "curve.png").is_file()  # a stopped run is finished: reported
    assert load(tmp_path).state is not None  # and saved after its last call


def test_a_callbacks_own_error_keeps_its_type_and_the_last_good_checkpoint(tmp_path):
    from components.training.run import callbacks

    watcher = Watcher(calls=100)
    spec = RunSpec.make("CartPole-v1", "ppo", SMALL, steps=10 * STEPS_PER_CALL)
    old = callbacks.CHECKPOINT_SECONDS
    callbacks.CHECKPOINT_SECONDS = 0.0  # a checkpoint after every call
    try:
        with pytest.raises(Failing.Mine, match="my own error"):
            train(spec, tmp_path, callbacks=[watcher, Failing()], progress=False)
    finally:
        callbacks.CHECKPOINT_SECONDS = old
    assert watcher.ends == [("failed", 3)]
    _, meta = checkpoint.load(tmp_path / "checkpoint.npz")
    assert meta["call"] == 2  # call 3's rows were never written: its state is not saved
    assert len((tmp_path / "metrics.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize("given", [print, "Watcher", Watcher])
def test_anything_but_a_callback_is_refused_before_the_run(tmp_path, given):
    spec = RunSpec.make("CartPole-v1", "ppo", SMALL, steps=STEPS_PER_CALL)
    with pytest.raises(TypeError, match="callbacks must be components.training.Callback "
                                        "instances"):
        train(spec, tmp_path / "run", callbacks=[given], progress=False)
    assert not (tmp_path / "run").exists()
