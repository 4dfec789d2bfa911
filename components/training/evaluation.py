"""`evaluate`: the policy of a run directory's checkpoint (`load`) over whole episodes of the
environment it trained on (the native host pool, or Gymnasium's for the "gymnasium" door)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode

from components.envs import make
from components.training.algorithm import Algorithm
from components.training.loading import TrainedAgent, load


def evaluate(out: str | Path | TrainedAgent, episodes: int = 100, seed: int = 12345,
             algo: str | Algorithm | None = None, trust_code: bool = False,
             deterministic: bool = True) -> dict[str, Any]:
    """Mean and standard deviation of the return of the saved policy over `episodes`
    episodes: its greedy actions, or sampled ones with `deterministic=False`; with several
    seeds, also each seed's mean. `algo`, `trust_code`: as for `load` (a run naming a user's
    algorithm file imports it only when named again or trusted). Raises LoadError when `out`
    is not a run directory with a checkpoint, AlgorithmError when its algorithm cannot be
    found again, UntrustedCodeError when its code is not named again or changed. `out` may
    also be an agent `load` gave."""
    agent = out if isinstance(out, TrainedAgent) else load(out, algo, trust_code)
    env = vector_env(agent.env_id, agent.algorithm.door(agent.config), episodes, seed)
    per_seed = [episode_returns(lambda obs, a=policy: a.predict(obs, deterministic), env,
                                episodes, seed) for policy in agent.per_seed]
    returns = np.concatenate(per_seed)
    result: dict[str, Any] = {"episodes": episodes, "return_mean": float(returns.mean()),
                              "return_std": float(returns.std())}
    if len(per_seed) > 1:
        result["return_mean_per_seed"] = [float(r.mean()) for r in per_seed]
    return result


def vector_env(env_id: str, door: str, num_envs: int, seed: int = 0) -> Any:
    """`num_envs` environments of task `env_id` behind `door`: the native host pool, or
    Gymnasium's own for the "gymnasium" door."""
    if door != "gymnasium":
        return make(env_id, num_envs, seed=seed)
    return gymnasium.make_vec(env_id, num_envs, vectorization_mode="sync",
                              vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP})


def episode_returns(act: Callable[[np.ndarray], Any], env: Any, episodes: int,
                    seed: int) -> np.ndarray:
    """The return of one episode in each of `env`'s `episodes` environments, acting with
    `act(observations)`."""
    obs, _ = env.reset(seed=seed)
    returns = np.zeros(episodes)
    running = np.ones(episodes, bool)
    while running.any():
        obs, reward, terminated, truncated, _ = env.step(np.asarray(act(
            np.asarray(obs, np.float32))))
        returns += reward * running
        running &= ~(terminated | truncated)
    return returns
