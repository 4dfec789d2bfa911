"""The pipelined runner against sampling and learning in turn, on this machine, each run a fresh
`metagraph train` process (start-up, tracing and compiling count in its wall time).

    python bench/pipeline.py [--algo impala] [--env CartPole-v1] [--steps 300000]
                             [--seeds 0 1 2] [--num-samplers 1] [--set KEY=VALUE ...]

Contenders: `--runner local` (the samplers in this process, sampling and learning in turn)
and `--runner pipeline` (the samplers in threads beside the learner, at most one version of
policy lag), with the same algorithm, settings, seeds and steps. Prints, per contender and
seed, the whole command's wall time, the training's (the last metrics row's `wall_time`), the
steps per second after the first tenth of the rows (past the compiles), the mean return of
the last tenth of the rows and the mean policy lag; then the ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(args, runner: str, seed: int, out: Path) -> dict:
    command = [sys.executable, "-m", "components.training.cli", "train", args.env, "--algo",
               args.algo, "--runner", runner, "--num-samplers", str(args.num_samplers),
               "--steps", str(args.steps), "--seed", str(seed), "--out", str(out)]
    for item in args.set or []:
        command += ["--set", item]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        return {"error": done.stderr[-1500:]}
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    tail = rows[-max(1, len(rows) // 10):]
    returns = [r["episode_return_mean"] for r in tail if r["episode_return_mean"] is not None]
    first = rows[len(rows) // 10]  # past the compiles and the first calls
    rate = ((rows[-1]["env_steps"] - first["env_steps"])
            / max(1e-9, rows[-1]["wall_time"] - first["wall_time"]))
    return {"wall": wall, "training": rows[-1]["wall_time"], "steps": rows[-1]["env_steps"],
            "steps_per_s": rate,
            "return": statistics.mean(returns) if returns else float("nan"),
            "lag": statistics.mean(r.get("policy_lag", 0) for r in rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algo", default="impala")
    parser.add_argument("--env", default="CartPole-v1")
    parser.add_argument("--steps", type=int, default=300_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--num-samplers", type=int, default=1)
    parser.add_argument("--set", action="append", metavar="KEY=VALUE")
    args = parser.parse_args()
    results: dict[str, list[dict]] = {"local": [], "pipeline": []}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:  # interleaved: both contenders see the same machine load
            for runner in results:
                result = run(args, runner, seed, Path(tmp) / f"{runner}-{seed}")
                results[runner].append(result)
                shown = ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                                  for k, v in result.items())
                print(f"{runner:>8} seed {seed}: {shown}", flush=True)
    ok = {k: [r for r in v if "error" not in r] for k, v in results.items()}
    if all(len(v) == len(args.seeds) for v in ok.values()):
        local, piped = ok["local"], ok["pipeline"]
        wall = statistics.mean(a["wall"] / b["wall"] for a, b in zip(local, piped, strict=True))
        train = statistics.mean(b["steps_per_s"] / a["steps_per_s"]
                                for a, b in zip(local, piped, strict=True))
        print(f"{args.algo} on {args.env}, {args.steps} steps, {args.num_samplers} sampler(s), "
              f"seeds {args.seeds}: local / pipeline wall time {wall:.2f}x (steps/s after the "
              f"first tenth of the rows: pipeline / local {train:.2f}x); mean return local "
              f"{statistics.mean(r['return'] for r in local):.1f}, pipeline "
              f"{statistics.mean(r['return'] for r in piped):.1f}")


if __name__ == "__main__":
    main()
