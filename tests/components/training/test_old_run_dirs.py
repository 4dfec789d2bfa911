"""Run directories written before the observation kept its shape (commit a38869b, the code of
2026-11-29: MinAtar's planes then reached every agent as float32 vectors, and no wrapper
flattened them) still load, act as they did and resume (`old_runs/`, written by that code:
DQN and PPO with a CNN, path reweighting with an MLP, each a few hundred steps with tiny
networks); and one written before PPO's normalisers were wrappers of its environment (commit
3de8c8b: PPO on Pendulum, `old_runs/ppo-pendulum`)."""

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


# PPO on Pendulum with both normalisers and clipped actions, written at commit 3de8c8b (the code
# of 2026-11-30, before the normalisers were wrappers: their statistics then sat beside the
# policy, at ppo_agent/preprocessor and ppo_agent/reward_normaliser): what it gave for 16
# observations (after 20 steps of 0.5 from seed 3), greedy and sampled with key [0, 7], and
# its statistics
PENDULUM_THEN = {
    "greedy": [-0.43114662, -0.65902907, -0.50804669, -0.34233233, -0.71762997, -0.50244397,
               -0.54827040, 0.48326129, -0.47548607, -0.39612943, 0.48276502, 0.72590494,
               -0.64902633, -0.99768460, 0.05707991, -0.54762143],
    "sampled": [-0.06003826, 1.11320925, -0.79312027, -0.42181301, -0.10735229, -0.20088951,
                -0.61305141, 0.03922929, -1.33946383, -1.19678020, -0.17086613, 2.0,
                -0.08931864, -2.0, 2.0, -0.57455283],
    "observation_mean": [-0.0343339, 0.01500578, 1.0166788],
    "return": [-378.64587, -516.3102, -368.36615, -462.23163],
}


def test_an_old_ppo_run_with_normalisers_acts_as_it_did_and_resumes(tmp_path):
    run = tmp_path / "ppo"
    shutil.copytree(OLD_RUNS / "ppo-pendulum", run)
    env = make("Pendulum-v1", 16, seed=3)
    obs, _ = env.reset(seed=3)
    for _ in range(20):
        obs, *_ = env.step(np.full((16, 1), 0.5, np.float32))
    agent = load(run)
    wrapped = "ppo_agent/rollout/env"  # NormalizeReward, NormalizeObservation, ClipAction
    assert "ppo_agent/preprocessor" not in agent.state
    np.testing.assert_allclose(agent.state[f"{wrapped}/env/observation_normaliser"]["mean"],
                               PENDULUM_THEN["observation_mean"], rtol=1e-6)
    np.testing.assert_allclose(agent.state[f"{wrapped}/reward_normaliser"]["return"],
                               PENDULUM_THEN["return"], rtol=1e-6)
    np.testing.assert_allclose(agent.predict(obs).ravel(), PENDULUM_THEN["greedy"], rtol=1e-5,
                               atol=1e-6)
    key = np.asarray([0, 7], np.uint32)
    np.testing.assert_allclose(agent.predict(obs, deterministic=False, key=key).ravel(),
                               PENDULUM_THEN["sampled"], rtol=1e-5, atol=1e-6)
    resume(run, steps=1024, progress=False)
    lines = (run / "metrics.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["env_steps"] == 1024
    counted = load(run).state[f"{wrapped}/env/observation_normaliser"]["count"]
    assert float(counted) == pytest.approx(1024 + 1e-4)  # every observation stepped, once
