"""The reporting process: TensorBoard events of the rows it is sent and the learning curve,
read back with tensorboardX's protobuf classes; a failure inside it is an error naming it,
with its own traceback."""

import json

import pytest
from tensorboard_events import scalars

from components.training.reporting.reporter import Reporter

ROWS = [{"iteration": i, "env_steps": 100 * (i + 1), "wall_time": 0.1 * i,
         "episode_return_mean": 10.0 + i, "loss": 0.5 / (i + 1), "episodes": 3,
         "episode_return_mean_per_seed": [9.0 + i, 11.0 + i]} for i in range(5)]


def test_events_and_curve_of_the_rows_sent(tmp_path):
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    reporter = Reporter(tmp_path)
    reporter.add(ROWS[:2])
    reporter.add(ROWS[2:])
    reporter.finish(metrics, tmp_path / "curve.png", "test")
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    logged = scalars(tmp_path / "tensorboard")
    assert set(logged) == {"wall_time", "episode_return_mean", "loss", "episodes"}
    assert logged["loss"] == [(row["env_steps"], pytest.approx(row["loss"])) for row in ROWS]


def test_a_failure_in_the_reporting_process_is_a_clear_error(tmp_path):
    (tmp_path / "tensorboard").write_text("a file where the event directory goes")
    reporter = Reporter(tmp_path)
    with pytest.raises(RuntimeError, match="(?s)reporting process .* failed.*FileExistsError"):
        reporter.add(ROWS)
        reporter.finish(tmp_path / "metrics.jsonl", tmp_path / "curve.png", "test")


def test_close_without_drawing_keeps_the_events(tmp_path):
    reporter = Reporter(tmp_path)
    reporter.add(ROWS)
    reporter.close()
    assert len(scalars(tmp_path / "tensorboard")["loss"]) == len(ROWS)
    assert not (tmp_path / "curve.png").exists()
