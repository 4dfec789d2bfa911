"""DQN end to end, kept small: it trains, keeps its replay and target network in its state,
evaluates, and refuses continuous actions and bad configs."""

import numpy as np
import pytest

from backends import xla
from components.agents import DQNConfig
from components.training import RunSpec, evaluate, train
from components.training.algorithms import DQN

SMALL = DQNConfig(num_envs=2, rollout=4, n_step=2, buffer_size=256, batch_size=8,
                  updates_per_iteration=2, target_every=4, hidden=(8,), iterations_per_call=4)


def test_dqn_trains_and_keeps_replay_and_target(tmp_path):
    metrics = train(RunSpec.make("CartPole-v1", "dqn", SMALL, seed=0, steps=128), tmp_path,
                    progress=False)
    assert len(metrics) == 16 and metrics[-1]["env_steps"] == 128
    assert all(np.isfinite(m["loss"]) for m in metrics)
    exe = xla.lower(DQN().build("CartPole-v1", SMALL, 128, 1))
    exe.load_checkpoint(tmp_path / "checkpoint.npz")
    assert int(np.asarray(exe.get_state("dqn_agent/replay")["size"])) == 128
    state = exe.get_state("dqn_agent")
    assert int(state["iteration"]) == 16  # the target was copied at iterations 4, 8, 12, 16
    online = exe.get_state("dqn_agent/q_network")["params"]
    for a, b in zip(np.asarray(state["target_params"]["mlp/~/linear_0"]["w"]).ravel(),
                    np.asarray(online["mlp/~/linear_0"]["w"]).ravel(), strict=True):
        assert a == b
    assert evaluate(tmp_path, episodes=2)["episodes"] == 2


def test_dqn_refuses_continuous_actions_and_bad_configs():
    with pytest.raises(ValueError, match="DQN needs discrete actions"):
        DQN().build("Pendulum-v1", SMALL, 100, 1)
    with pytest.raises(ValueError, match="epsilon_fraction"):
        DQNConfig(epsilon_fraction=0.0)
