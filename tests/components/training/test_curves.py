"""Curves people read (issue 24 part 5): the rolling mean over episodes against a NumPy
reference, evaluation rows in their own colour, and `metagraph plot RUN...` (seeds as a mean
with a band), each from a fresh process."""

from __future__ import annotations

import json

import matplotlib
import numpy as np
import pytest
from command_line import metagraph

from components.training.reporting.learning_curve import (
    EVALUATION,
    draw_returns,
    rolling_mean,
    seed_rows,
)

matplotlib.use("Agg")


def reference(rows, window):
    """Every episode spelled out (each row's mean repeated once per episode it ended), then
    the mean of the last `window` of them after each row."""
    episodes: list[float] = []
    found = []
    for row in rows:
        episodes += [row["episode_return_mean"]] * row["episodes"]
        found.append(float(np.mean(episodes[-window:])) if episodes else None)
    return found


@pytest.mark.parametrize("window", [1, 3, 10, 100])
def test_the_rolling_mean_counts_episodes_as_a_numpy_reference_does(window):
    rng = np.random.default_rng(0)
    rows = [{"episode_return_mean": float(rng.normal(100, 30)), "episodes": int(n)}
            for n in rng.integers(0, 6, 40)]
    for row in rows[:3]:
        row["episodes"] = 0  # nothing ended yet: no point
    got = rolling_mean(rows, window)
    want = reference(rows, window)
    assert got[:3] == [None] * 3
    np.testing.assert_allclose(np.array(got[3:], float), np.array(want[3:], float))


def test_rows_without_an_episode_count_count_one_each_and_seeds_split_theirs():
    rows = [{"episode_return_mean": float(v)} for v in range(10)]
    assert rolling_mean(rows, 4)[-1] == np.mean([6, 7, 8, 9])
    two = [{"episode_return_mean": 1.5, "episodes": 4, "episode_return_mean_per_seed": [1, 2]}]
    assert seed_rows(two) == [[{"episode_return_mean": 1, "episodes": 2.0}],
                              [{"episode_return_mean": 2, "episodes": 2.0}]]


def test_evaluation_rows_are_drawn_in_their_own_colour():
    import matplotlib.pyplot as plt

    rows = [{"env_steps": 100 * i, "episode_return_mean": float(i), "episodes": 2}
            for i in range(1, 6)]
    rows[2].update(eval_return_mean=7.0, eval_return_std=1.0)
    fig, ax = plt.subplots()
    draw_returns(ax, rows)
    evaluation = [bars for bars in ax.containers
                  if bars.get_label() == "evaluation (deterministic)"]
    assert len(evaluation) == 1
    line = evaluation[0].lines[0]
    assert list(line.get_ydata()) == [7.0] and list(line.get_xdata()) == [300]
    assert matplotlib.colors.to_hex(line.get_color()) == EVALUATION
    plt.close(fig)


SMALL = ["--steps", "256", "--set", "num_envs=2", "--set", "num_steps=16", "--set", "hidden=[8]",
         "--set", "iterations_per_call=2"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A directory holding `plain`, a small PPO run (seed 0), and `pair`, the same with
    `--seeds 2`."""
    directory = tmp_path_factory.mktemp("curves")
    metagraph(directory, "train", "CartPole-v1", "--algo", "ppo", "--out", "plain", *SMALL)
    metagraph(directory, "train", "CartPole-v1", "--algo", "ppo", "--out", "pair", "--seeds",
              "2", *SMALL)
    return directory


def test_plot_draws_several_runs_seeds_as_a_band(runs):
    # that a --seeds run's seed k is the run of seed + k is tested in test_ppo_training.py
    done = metagraph(runs, "plot", "plain", "pair", "-o", "all.png", "--window", "10")
    assert "wrote all.png" in done.stdout and (runs / "all.png").stat().st_size > 10_000
    from components.training.reporting.plots import seed_curves

    label, curves = seed_curves(runs / "pair", 10)
    assert label == "ppo on CartPole-v1" and len(curves) == 2
    solo = seed_curves(runs / "plain", 10)[1][0][1]
    np.testing.assert_allclose(curves[0][1], solo)  # seed 0 of the pair is the run of seed 0
    assert not np.array_equal(curves[1][1], solo)
    done = metagraph(runs, "plot", "nowhere", "-o", "x.png", check=False)
    assert done.returncode == 2 and "no readable config.json" in done.stderr


def test_train_evaluates_while_training_and_keeps_the_best(runs):
    metagraph(runs, "train", "CartPole-v1", "--algo", "ppo", "--out", "run", "--eval-every",
              "100", "--eval-episodes", "3", "--save-best", *SMALL)
    rows = [json.loads(line) for line in (runs / "run" / "metrics.jsonl").open()]
    evaluated = [r["env_steps"] for r in rows if "eval_return_mean" in r]
    assert evaluated == [128, 256]  # after the calls (64 steps each) that passed 100 and 200
    assert all(r["eval_return_mean"] >= 8 and r["eval_return_std"] >= 0 for r in rows
               if "eval_return_mean" in r)
    plain = [json.loads(line) for line in (runs / "plain" / "metrics.jsonl").open()]
    assert [r["loss"] for r in rows] == [r["loss"] for r in plain]  # it trains the same
    assert (runs / "run" / "best.npz").is_file()
    metagraph(runs, "train", "CartPole-v1", "--out", "run", "--resume", "--steps", "320")
    resumed = [json.loads(line) for line in (runs / "run" / "metrics.jsonl").open()]
    assert [r["env_steps"] for r in resumed if "eval_return_mean" in r] == [128, 256, 320]
    done = metagraph(runs, "evaluate", "run", "--best", "--episodes", "2")
    assert done.stdout.startswith("2 episodes: return")
    done = metagraph(runs, "train", "CartPole-v1", "--out", "x", "--save-best",
                     check=False)
    assert done.returncode == 2 and "--save-best needs --eval-every" in done.stderr
