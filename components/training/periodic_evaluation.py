"""Evaluation while training (Stable-Baselines3's `EvalCallback`):

    metagraph train CartPole-v1 --algo ppo --out runs/x --eval-every 10000 --eval-episodes 10
                    [--save-best]

Each time the run passes a multiple of `every` environment steps, the deterministic policy
(`greedy`, as the state stands after that call) plays `episodes` whole episodes on
environments of its own (never the training ones, seeded apart from them, the same at every
evaluation), and the last metrics row of the call gets `eval_return_mean` and
`eval_return_std` (per seed too with `--seeds`): in `metrics.jsonl`, in TensorBoard, and on
`curve.png` in their own colour. With `save_best`, a new best mean is saved to
`DIR/best.npz` beside the last checkpoint (`load(DIR, checkpoint="best.npz")`,
`metagraph evaluate DIR --best`). Evaluation reads the state and never changes it: a run
trains the same with or without it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import jax
import numpy as np

from backends.xla.export import needed_state
from components.training.evaluation import episode_returns, vector_env
from metagraph.checks import positive_int
from metagraph.graph import MetaGraph

EVAL_SEED_OFFSET = 1_000_003  # evaluation environments' seeds, apart from training's
BEST = "best.npz"


@dataclasses.dataclass(frozen=True)
class EvaluationSettings:
    """`--eval-every`, `--eval-episodes`, `--save-best`; recorded in config.json so that a
    resumed run goes on evaluating the same way."""

    every: int
    episodes: int = 10
    save_best: bool = False

    def __post_init__(self) -> None:
        positive_int(self.every, "--eval-every")
        positive_int(self.episodes, "--eval-episodes")

    def record(self) -> dict[str, Any]:
        """The entries config.json records."""
        return {"evaluation": dataclasses.asdict(self)}

    @classmethod
    def from_saved(cls, saved: dict[str, Any]) -> EvaluationSettings | None:
        """The settings a run's config.json recorded, or None."""
        values = saved.get("evaluation")
        return None if values is None else cls(**values)


class Evaluator:
    """Evaluates a training run's executor after the calls that pass a multiple of
    `settings.every` steps (see the module docstring)."""

    def __init__(self, run_path: Path, graph: MetaGraph, env_id: str, door: str,
                 settings: EvaluationSettings, seed: int, kept: list[dict[str, Any]]):
        self.path, self.settings, self.seed = Path(run_path), settings, seed
        program, self.select, _ = needed_state(graph, "greedy")
        self.act = jax.jit(lambda needed, obs: program(needed, obs)[1])
        self.env = vector_env(env_id, door, settings.episodes, seed + EVAL_SEED_OFFSET)
        done = kept[-1]["env_steps"] if kept else 0
        self.next_at = (done // settings.every + 1) * settings.every
        scores = [r["eval_return_mean"] for r in kept if r.get("eval_return_mean") is not None]
        self.best = max(scores, default=-np.inf)

    def after_call(self, exe: Any, rows: list[dict[str, Any]]) -> None:
        """Evaluate when `rows` (the call's, about to be written) pass the next multiple of
        `every` steps: add the evaluation to the last row, save a new best."""
        steps = rows[-1]["env_steps"]
        if steps < self.next_at:
            return
        self.next_at = (steps // self.settings.every + 1) * self.settings.every
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
