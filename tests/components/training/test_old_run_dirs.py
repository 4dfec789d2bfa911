"""Run directories written before the observation kept its shape (commit a38869b, the code of
2026-11-29: MinAtar's planes then reached every agent as float32 vectors, and no wrapper
flattened them) still load, act as they did and resume (`old_runs/`, written by that code:
DQN and PPO with a CNN, path reweighting with an MLP, each a few hundred steps with tiny
networks)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from components.envs import make
from components.training import load, resume

OLD_RUNS = Path(__file__).parent / "old_runs"

# what that code's `predict` gave for the observations below: greedy, then sampled with key
# [0, 7] (DQN's greedy only: its sampled actions are epsilon's)
THEN = {
    "dqn": ([1] * 16, None),
    "ppo": ([2] * 16, [1, 1, 0, 2, 2, 2, 1, 2, 2, 1, 0, 2, 2, 2, 2, 0]),
    "reweight": ([5, 5, 5, 1, 1, 5, 5, 5, 5, 5, 5, 5, 1, 5, 5, 5],
                 [1, 5, 2, 1, 2, 5, 5, 5, 5, 1, 1, 5, 5, 5, 5, 2]),
}


@pytest.fixture(scope="module")
def observations() -> np.ndarray:
    """16 of Breakout's bool planes [10, 10, 4] after 20 steps of one action."""
    env = make("MinAtar-Breakout-v0", 16, seed=3, minimal_action_set=True)
    obs, _ = env.reset(seed=3)
    for _ in range(20):
        obs, *_ = env.step(np.ones(16, np.int64))
    return obs


@pytest.mark.parametrize("algo", sorted(THEN))
def test_an_old_run_acts_as_it_did(algo, observations):
    if algo == "reweight":  # its config.json names the batch num_paths (now num_envs)
        with pytest.warns(DeprecationWarning, match="'num_paths' is now 'num_envs'"):
            agent = load(OLD_RUNS / f"{algo}-minatar")
    else:
        agent = load(OLD_RUNS / f"{algo}-minatar")
    greedy, sampled = THEN[algo]
    assert agent.predict(observations).tolist() == greedy
    assert agent.predict(observations.reshape(16, -1).astype(np.float32)).tolist() == greedy
    if sampled is not None:
        key = np.asarray([0, 7], np.uint32)
        assert agent.predict(observations, deterministic=False, key=key).tolist() == sampled


def test_an_old_dqn_run_keeps_its_replay_and_resumes(tmp_path):
    run = tmp_path / "dqn"
    shutil.copytree(OLD_RUNS / "dqn-minatar", run)
    with np.load(run / "checkpoint.npz") as stored:
        header = json.loads(bytes(stored["meta"]).decode())
        index = [d["path"] for d in header["leaves"]].index(
            "['dqn_agent/replay']['storage']['obs']")
        then = stored[f"leaf_{index}"]  # float32 vectors [64, 400] of 0.0 and 1.0
    replay = load(run).state["dqn_agent/replay"]["storage"]["obs"]
    assert replay.dtype == np.bool_ and replay.shape == (64, 10, 10, 4)
    np.testing.assert_array_equal(np.asarray(replay).reshape(64, -1), then)
    resume(run, steps=480, progress=False)
    lines = (run / "metrics.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["env_steps"] == 480
