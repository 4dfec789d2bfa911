"""Training and evaluating the path-reweighting agent into a run directory (`RunDir`).

Iteration i uses the key fold_in(PRNGKey(seed), i), so a run resumed from its checkpoint
continues exactly as an uninterrupted one with the same seed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import jax
import numpy as np

import metagraph as mg
from backends import xla
from components.agents.reweight_agent import ReweightAgent
from components.agents.reweight_config import ReweightConfig
from components.agents.run_dir import RunDir
from components.envs import make, spec
from metagraph.errors import LoadError
from metagraph.spaces import Box, Discrete, PRNGKey

ALGO = "reweight"


def build(env_id: str, config: ReweightConfig, eval_envs: int = 1
          ) -> tuple[ReweightAgent, mg.MetaGraph]:
    """The agent's meta-graph: `rollout`, `fit` (on M resampled paths) and `greedy` (on a
    batch of `eval_envs` observations)."""
    agent = ReweightAgent(env_id, config)
    m, t = config.fit_paths, agent.horizon
    obs_shape = agent.env.observation_space.shape
    action_space = agent.env.action_space
    actions = (Discrete(action_space.n, shape=(m, t)) if isinstance(action_space, Discrete)
               else Box((m, t, *action_space.shape)))
    spaces = {"key": PRNGKey(), "obs": Box((m, t, *obs_shape)), "action": actions,
              "mask": Box((m, t)), "weight": Box((m,)),
              "observation": Box((eval_envs, *obs_shape))}
    return agent, mg.build(agent, spaces, apis=["rollout", "fit", "greedy"])


def train(env_id: str, out: str | Path, config: ReweightConfig, seed: int = 0,
          steps: int = 1_000_000, resume: bool = False, progress: bool = True
          ) -> list[dict[str, Any]]:
    run = RunDir(out)
    env_id = spec(env_id).env_id
    if resume:
        saved = run.read_config()
        if saved.get("algo") != ALGO:
            raise LoadError(f"{run.path}: the run there is {saved.get('algo')!r}, not {ALGO!r}")
        env_id, seed = saved["env_id"], saved["seed"]
        config = ReweightConfig.from_dict(saved["config"])
    run.write_config({"env_id": env_id, "algo": ALGO, "seed": seed, "steps": steps,
                      "config": config.to_dict()})
    agent, graph = build(env_id, config)
    graph.render(run.path / "graph.svg")
    exe = xla.lower(graph, seed=seed)
    iteration, env_steps, wall_offset = 0, 0, 0.0
    if resume and run.checkpoint_path.exists():
        meta = exe.load_checkpoint(run.checkpoint_path)
        iteration, env_steps, wall_offset = meta["iteration"], meta["env_steps"], meta["wall"]
    run.keep_metrics(iteration)
    root = jax.random.PRNGKey(seed)
    start = time.perf_counter()
    bar = _progress(steps, env_steps, progress)
    while env_steps < steps:
        out = exe.rollout(np.asarray(jax.random.fold_in(root, iteration)))
        for _ in range(config.fit_steps):
            fitted = exe.fit(out["obs"], out["action"], out["mask"], out["weight"])
        new_steps = int(out["steps"])
        env_steps += new_steps
        wall = wall_offset + time.perf_counter() - start
        row = {"iteration": iteration, "env_steps": env_steps, "wall_time": round(wall, 3),
               "episode_return_mean": float(out["return_mean"]),
               "episode_return_max": float(out["return_max"]), "bits": float(out["bits"]),
               "ess": float(out["ess"]), "loss": float(fitted["loss"])}
        run.append_metrics(row)
        iteration += 1
        exe.save_checkpoint(run.checkpoint_path, meta={"iteration": iteration,
                                                       "env_steps": env_steps, "wall": wall})
        if bar is not None:
            bar.update(new_steps)
            bar.set_postfix(ret=f"{row['episode_return_mean']:.1f}", bits=f"{row['bits']:.2f}",
                            ess=f"{row['ess']:.0f}")
    if bar is not None:
        bar.close()
    run.plot_curve(f"{ALGO} on {env_id}, seed {seed}")
    return run.metrics()


def _progress(total: int, done: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=min(done, total), unit="step", unit_scale=True,
                dynamic_ncols=True)


def evaluate(out: str | Path, episodes: int = 100, seed: int = 12345) -> dict[str, float]:
    """Mean and standard deviation of the return of the saved policy's greedy actions over
    `episodes` episodes of the host environment pool."""
    run = RunDir(out)
    saved = run.read_config()
    config = ReweightConfig.from_dict(saved["config"])
    if not run.checkpoint_path.exists():
        raise LoadError(f"{run.path}: no checkpoint to evaluate")
    _, graph = build(saved["env_id"], config, eval_envs=episodes)
    exe = xla.lower(graph, seed=saved["seed"])
    exe.load_checkpoint(run.checkpoint_path)
    env = make(saved["env_id"], episodes, seed=seed)
    obs, _ = env.reset(seed=seed)
    returns = np.zeros(episodes)
    running = np.ones(episodes, bool)
    while running.any():
        obs, reward, terminated, truncated, _ = env.step(np.asarray(exe.greedy(obs)))
        returns += reward * running
        running &= ~(terminated | truncated)
    return {"episodes": episodes, "return_mean": float(returns.mean()),
            "return_std": float(returns.std())}
