"""`evaluate`: the policy of a run directory's checkpoint, acting through the algorithm's
`evaluation_api` (`greedy` for the built-in ones), over whole episodes of the environment it
trained on (the native host pool, or Gymnasium's for the "gymnasium" door)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import jax
import numpy as np
from gymnasium.vector import AutoresetMode

from components.envs import make
from components.training.algorithm import Algorithm
from components.training.executors import lower
from components.training.memory import check_state_fits
from components.training.registry import resolve
from components.training.run_dir import RunDir
from components.training.trainer import evaluation_api
from metagraph import checkpoint
from metagraph.errors import LoadError


def evaluate(out: str | Path, episodes: int = 100, seed: int = 12345,
             algo: Algorithm | None = None, executor: str = "xla") -> dict[str, Any]:
    """Mean and standard deviation of the return of the saved policy's actions (through its
    algorithm's `evaluation_api`) over `episodes` episodes; with several seeds, also each
    seed's mean. `algo`: the run's algorithm, when the one its config.json names cannot be
    imported (a class defined in a script or a notebook); by default it is found again from
    that name. `executor`: "xla", or "eager" (op by op, `executors.py`). Raises LoadError
    when `out` is not a run directory with a checkpoint, AlgorithmError when its algorithm
    cannot be found again."""
    run = RunDir(out, create=False)
    saved = run.read_config()
    alg = resolve(saved["algo"]) if algo is None else algo
    config = alg.config_class.from_dict(saved["config"])
    if not run.checkpoint_path.is_file():
        raise LoadError(f"{run.path}: no checkpoint to evaluate")
    graph = alg.build(saved["env_id"], config, saved["steps"], episodes)
    act = evaluation_api(alg, saved["algo"], graph)
    check_state_fits(graph, saved["algo"], saved.get("seeds") or 1)
    exe = lower(graph, executor, seed=saved["seed"])
    seeds = saved.get("seeds")
    if seeds is None:
        exe.load_checkpoint(run.checkpoint_path)
        states = [exe.state]
    else:  # one policy per seed, each evaluated on its own
        like = jax.tree.map(lambda x: np.zeros((seeds, *x.shape), x.dtype), exe.state)
        stacked, _ = checkpoint.load(run.checkpoint_path, like=like)
        states = [jax.tree.map(lambda x, k=k: x[k], stacked) for k in range(seeds)]
    env = (make(saved["env_id"], episodes, seed=seed) if alg.door(config) != "gymnasium" else
           gymnasium.make_vec(saved["env_id"], episodes, vectorization_mode="sync",
                              vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}))
    per_seed = []
    for state in states:
        exe.set_state(state)
        per_seed.append(episode_returns(getattr(exe, act), env, episodes, seed))
    returns = np.concatenate(per_seed)
    result: dict[str, Any] = {"episodes": episodes, "return_mean": float(returns.mean()),
                              "return_std": float(returns.std())}
    if seeds is not None:
        result["return_mean_per_seed"] = [float(r.mean()) for r in per_seed]
    return result


def episode_returns(act: Any, env: Any, episodes: int, seed: int) -> np.ndarray:
    """The return of one episode in each of `env`'s `episodes` environments, acting with
    `act(observations) -> actions`."""
    obs, _ = env.reset(seed=seed)
    returns = np.zeros(episodes)
    running = np.ones(episodes, bool)
    while running.any():
        obs, reward, terminated, truncated, _ = env.step(np.asarray(act(
            np.asarray(obs, np.float32))))
        returns += reward * running
        running &= ~(terminated | truncated)
    return returns
