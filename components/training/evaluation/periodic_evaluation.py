"""Evaluation while training (Stable-Baselines3's `EvalCallback`):

    metagraph train CartPole-v1 --algo ppo --out runs/x --eval-every 10000 --eval-episodes 10
                    [--save-best]

Each time the run passes a multiple of `every` environment steps, the deterministic policy
(the algorithm's `evaluation_api`, `greedy` for the built-in ones, as the state stands after
that call) plays `episodes` whole episodes on environments of its own (never the training
ones, seeded apart from them, the same at every evaluation), and the last metrics row of the
call gets `eval_return_mean` and `eval_return_std` (per seed too with `--seeds`): in
`metrics.jsonl`, in TensorBoard, and on `curve.png` in their own colour. With `save_best`, a
new best mean is saved to `DIR/best.npz` beside the last checkpoint (`load(DIR,
checkpoint="best.npz")`, `metagraph evaluate DIR --best`). Evaluation reads the state and
never changes it: a run trains the same with or without it. (`--video-every N` is
`periodic_video.py`'s.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import numpy as np

from backends.xla.export import needed_state
from components.envs.wrappers import host_environment, outermost_wrapper
from components.training.evaluation.episodes import episode_returns, vector_env
from components.training.run.evaluation_settings import EvaluationSettings
from metagraph.graph import MetaGraph

EVAL_SEED_OFFSET = 1_000_003  # evaluation environments' seeds, apart from training's
BEST = "best.npz"


class Evaluator:
    """Evaluates a training run's executor after the calls that pass a multiple of
    `settings.every` steps (see the module docstring), acting with the root API `api` (the
    algorithm's `evaluation_api`)."""

    def __init__(self, run_path: Path, graph: MetaGraph, env_id: str, door: str,
                 settings: EvaluationSettings, seed: int, kept: list[dict[str, Any]],
                 api: str = "greedy", env_kwargs: dict[str, Any] | None = None):
        self.path, self.settings, self.seed = Path(run_path), settings, seed
        program, self.select, _ = needed_state(graph, api)
        self.act = jax.jit(lambda needed, obs: program(needed, obs)[1])
        self.env = host_environment(outermost_wrapper(graph.root), vector_env(
            env_id, door, settings.episodes, seed + EVAL_SEED_OFFSET, dict(env_kwargs or {})))
        done = kept[-1]["env_steps"] if kept else 0
        self.next_at = next_multiple(done, settings.every)
        scores = [r["eval_return_mean"] for r in kept if r.get("eval_return_mean") is not None]
        self.best = max(scores, default=-np.inf)

    def after_call(self, exe: Any, rows: list[dict[str, Any]]) -> None:
        """After a call whose `rows` (about to be written) pass the next multiple of `every`
        steps: evaluate, add the evaluation to the last row, save a new best."""
        steps = rows[-1]["env_steps"]
        if steps < self.next_at:
            return
        self.next_at = next_multiple(steps, self.settings.every)
        states = [exe.state] if exe.seeds is None else \
            [jax.tree.map(lambda x, k=k: x[k], exe.state) for k in range(exe.seeds)]
        per_seed = []
        for state in states:
            needed = self.select(state)
            per_seed.append(episode_returns(lambda obs, n=needed: self.act(n, obs), self.env,
                                            self.settings.episodes, self.seed + EVAL_SEED_OFFSET))
        returns = np.concatenate(per_seed)
        mean = float(returns.mean())
        rows[-1].update(eval_return_mean=mean, eval_return_std=float(returns.std()))
        if len(per_seed) > 1:
            rows[-1]["eval_return_mean_per_seed"] = [float(r.mean()) for r in per_seed]
        if self.settings.save_best and mean > self.best:
            exe.save_checkpoint(self.path / BEST, meta={"env_steps": steps,
                                                        "eval_return_mean": mean})
        self.best = max(self.best, mean)

    def close(self) -> None:
        """Release the evaluation environments."""
        self.env.close()


def next_multiple(done: int, every: int | None) -> float:
    """The first multiple of `every` after `done` steps (never, without `every`)."""
    return np.inf if every is None else (done // every + 1) * every
