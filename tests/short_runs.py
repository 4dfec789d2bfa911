"""A few PPO iterations through `train` and `evaluate`, as `metagraph train ENV --algo ppo`
runs them: the checks every family's short run shares."""

import numpy as np

from components.training import RunSpec, evaluate, train
from components.training.algorithms.iterative import PPO


def ppo_trains_and_evaluates(env_id, overrides, steps, out, actions):
    """Train PPO on `env_id` (its shipped defaults under `overrides`) for `steps`, then
    evaluate 2 episodes: 4 rows of finite losses, the policy's entropy in (0, log actions]
    (PPOLoss reports it), a finite evaluated return."""
    config = PPO().config(env_id, overrides)
    rows = train(RunSpec.make(env_id, "ppo", config, steps=steps), out, progress=False)
    assert len(rows) == 4 and all(np.isfinite(row["loss"]) for row in rows)
    assert all(0 < row["entropy"] <= np.log(actions) + 1e-5 for row in rows)
    result = evaluate(out, episodes=2)
    assert result["episodes"] == 2 and np.isfinite(result["return_mean"])
