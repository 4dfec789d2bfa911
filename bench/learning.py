"""The learning table: each algorithm x task trained by metagraph and by its reference
implementation on this machine, the same steps, several seeds, each run in a fresh process
(start-up and compilation count). Ours: `metagraph train` with the shipped defaults, then
`metagraph evaluate` (100 greedy episodes, or games against an opponent); the reference: its
own script in its own environment (bench/references/), scored the same way.

    python bench/learning.py --reference-python /tmp/reference/bin/python \\
        [--rows dqn-cartpole dqn-breakout] [--seeds 0 1 2] [--json results.jsonl]

The reference environment (not metagraph's packages):
`python -m venv /tmp/reference && /tmp/reference/bin/pip install jax flax optax chex gymnax
flashbax six` (gymnax 1.0.1 imports six without requiring it). Without `--reference-python`
only our column is run. Rows (`--rows`; default: the
CartPole and MinAtar rows):

- dqn-cartpole: DQN, CartPole-v1, 5e5 steps, against PureJaxRL's dqn.py.
- ppo-cartpole: PPO, CartPole-v1, 5e5 steps, against PureJaxRL's ppo.py.
- dqn-breakout, dqn-asterix: DQN, MinAtar Breakout and Asterix (gymnax's rules: no sticky
  actions, the minimal action set), 1e6 steps, against PureJaxRL's dqn.py with the MinAtar
  network (bench/references/purejaxrl_dqn.py).
- az-connect-four, reweight-connect-four: AlphaZero's network alone after 30 M moves of
  Connect Four (about 30 minutes, at most 31) and path reweighting's policy after 30
  minutes, 100 games against OpenSpiel's MCTS-100 (the reference is the opponent; one seed a
  run: 30 minutes each).
- ppo-pong: PPO, Atari Pong (the `atari` extra), 2.5 M steps = 10 M frames, CleanRL's
  `ppo_atari_envpool.py` recipe, scored on the raw game (hours on 2 cores; CleanRL's
  published score beside it, no reference run).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclasses.dataclass(frozen=True)
class Row:
    """One algorithm x task: how ours trains and is scored, and the reference's command."""
    algo: str
    env_id: str
    steps: int
    env_kwargs: tuple[str, ...] = ()
    reference: tuple[str, ...] = ()    # the reference script and its task, under references/
    reference_name: str = ""
    minutes: float = 0.0               # a training budget in wall time (games), else steps
    opponent: str = ""                 # scored by games against it, else by greedy episodes
    overrides: tuple[str, ...] = ()    # `metagraph evaluate --set` (the network alone)

    @property
    def label(self) -> str:
        budget = f"{self.minutes:g} min" if self.minutes else f"{self.steps:.3g} steps"
        return f"{self.algo}, {self.env_id}, {budget}"


GYMNAX_MINATAR = ("sticky_action_prob=0", "minimal_action_set=true")
ROWS = {
    "dqn-cartpole": Row("dqn", "CartPole-v1", 500_000,
                        reference=("purejaxrl_dqn.py", "CartPole-v1"),
                        reference_name="PureJaxRL dqn.py"),
    "ppo-cartpole": Row("ppo", "CartPole-v1", 500_000,
                        reference=("purejaxrl_ppo.py", "CartPole-v1"),
                        reference_name="PureJaxRL ppo.py"),
    "dqn-breakout": Row("dqn", "MinAtar-Breakout-v0", 1_000_000, GYMNAX_MINATAR,
                        reference=("purejaxrl_dqn.py", "Breakout-MinAtar"),
                        reference_name="PureJaxRL dqn.py, MinAtar network"),
    "dqn-asterix": Row("dqn", "MinAtar-Asterix-v0", 1_000_000, GYMNAX_MINATAR,
                       reference=("purejaxrl_dqn.py", "Asterix-MinAtar"),
                       reference_name="PureJaxRL dqn.py, MinAtar network"),
    # 30 M moves, about 30 minutes on 2 cores (the rate anneals over the run's steps), the
    # timeout a bound
    "az-connect-four": Row("alphazero", "ConnectFour-v0", 30_000_000, minutes=31,
                           opponent="mcts:100", overrides=("eval_simulations=0",),
                           reference_name="OpenSpiel MCTS-100 (the opponent)"),
    "reweight-connect-four": Row("reweight", "ConnectFour-v0", 10**10, minutes=30,
                                 opponent="mcts:100",
                                 reference_name="OpenSpiel MCTS-100 (the opponent)"),
    # 10M frames: hours on 2 cores; no reference runs here (CleanRL's is PyTorch on a GPU)
    "ppo-pong": Row("ppo", "ALE/Pong-v5", 2_500_000,
                    reference_name="CleanRL ppo_atari_envpool.py, published: 20.45 ± 0.09"),
}
DEFAULT_ROWS = ("dqn-cartpole", "ppo-cartpole", "dqn-breakout", "dqn-asterix")


def run_ours(row: Row, seed: int) -> dict:
    """Train with `metagraph train` in a fresh process, then score the run; the wall time of
    the training command (start-up, compilation and writing the run directory included)."""
    with tempfile.TemporaryDirectory() as out:
        command = ["metagraph", "train", row.env_id, "--algo", row.algo,
                   "--steps", str(row.steps), "--seed", str(seed), "--out", out]
        for value in row.env_kwargs:
            command += ["--env-kwargs", value]
        if row.minutes:
            command = ["timeout", "-s", "INT", str(int(row.minutes * 60)), *command]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)  # (its progress bar)
        if done.returncode != 0 and not row.minutes:  # a budget in minutes ends by SIGINT
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n"
                               f"{done.stderr[-3000:]}")
        train_s = time.perf_counter() - start
        evaluate = ["metagraph", "evaluate", out, "--json"]
        if row.opponent:
            evaluate += ["--opponent", row.opponent, "--games", "100", "--seed", str(seed)]
        else:
            evaluate += ["--episodes", "100"]
        for value in row.overrides:
            evaluate += ["--set", value]
        result = json.loads(subprocess.run(evaluate, check=True, capture_output=True,
                                           text=True).stdout.strip().splitlines()[-1])
    return {"seed": seed, "train_s": round(train_s, 2), "score": score(row, result)}


def score(row: Row, result: dict) -> float:
    """The greedy return over the episodes, or the share of games won (draws half)."""
    if not row.opponent:
        return float(result["return_mean"])
    return (result["wins"] + 0.5 * result["draws"]) / result["games"]


def run_reference(row: Row, seed: int, python: str) -> dict:
    """The reference's script for one seed in a fresh process of its own environment."""
    script, task = row.reference
    start = time.perf_counter()
    done = subprocess.run([python, str(HERE / "references" / script), task,
                           "--steps", str(row.steps), "--seeds", str(seed)],
                          check=True, capture_output=True, text=True,
                          env={**os.environ, "JAX_PLATFORMS": "cpu"})
    wall = time.perf_counter() - start
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {"seed": seed, "train_s": round(wall, 2), "score": result["greedy_return"]}


def summary(results: list[dict]) -> str:
    """mean ± standard deviation over the seeds, then each seed's score."""
    scores = [r["score"] for r in results]
    spread = statistics.stdev(scores) if len(scores) > 1 else 0.0
    return (f"{statistics.mean(scores):.2f} ± {spread:.2f} "
            f"({', '.join(f'{s:.2f}' for s in scores)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", nargs="+", default=list(DEFAULT_ROWS), choices=sorted(ROWS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--reference-python", default=None,
                        help="the reference environment's python (see the module docstring)")
    parser.add_argument("--json", default=None, help="also append each run to this file")
    parser.add_argument("--who", choices=("both", "ours", "reference"), default="both",
                        help="run ours, the reference or both (a table row needs both)")
    args = parser.parse_args()
    lines = ["| algorithm, task, budget | ours: mean ± sd (seeds) | reference | ours / reference "
             "| wall ours / reference (s, per run) |", "|---|---|---|---|---|"]
    for name in args.rows:
        row = ROWS[name]
        ours = [run_ours(row, seed) for seed in args.seeds] if args.who != "reference" else []
        theirs = ([run_reference(row, seed, args.reference_python) for seed in args.seeds]
                  if row.reference and args.reference_python and args.who != "ours" else [])
        if args.json:
            with open(args.json, "a") as file:
                for who, results in (("ours", ours), ("reference", theirs)):
                    for result in results:
                        file.write(json.dumps({"row": name, "who": who, **result}) + "\n")
        if not ours:  # the reference alone: its figures
            print(f"| {row.label} | - | {row.reference_name}: {summary(theirs)} | - | - / "
                  f"{statistics.mean(r['train_s'] for r in theirs):.0f} |")
            continue
        mean = statistics.mean(r["score"] for r in ours)
        wall = statistics.mean(r["train_s"] for r in ours)
        if theirs:
            their_mean = statistics.mean(r["score"] for r in theirs)
            their_wall = statistics.mean(r["train_s"] for r in theirs)
            ratio = f"{mean / their_mean:.2f}x" if their_mean else "-"
            lines.append(f"| {row.label} | {summary(ours)} | {row.reference_name}: "
                         f"{summary(theirs)} | {ratio} | {wall:.0f} / {their_wall:.0f} |")
        else:
            lines.append(f"| {row.label} | {summary(ours)} | {row.reference_name or '-'} | - "
                         f"| {wall:.0f} / - |")
        print(lines[-1], file=sys.stderr, flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
