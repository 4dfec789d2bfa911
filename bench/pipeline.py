"""The pipelined runner against sampling and learning in turn, on this machine, each run a fresh
`metagraph train` process (start-up, tracing and compiling count in its wall time).

    python bench/pipeline.py [--algo impala] [--env CartPole-v1] [--steps 300000]
                             [--seeds 0 1 2] [--num-samplers 1] [--set KEY=VALUE ...]
                             [--contenders in-turn pipeline fused host-door actors]

Contenders (the first two by default), with the same algorithm, settings, seeds and steps:
`in-turn` (`--runner local --num-samplers K`: the samplers in this process, sampling and
learning in turn), `pipeline` (`--runner pipeline --num-samplers K`: the samplers in threads
beside the learner, at most one version of policy lag), `fused` (the algorithm's own loop:
rollout and update in one program where it has one) and `host-door` (that loop with the
environments behind the host door, `--set door="host"`: stepping and inference alternate
through the host pool) and `actors` (Sebulba's shape: `--runner pipeline --num-samplers 2
--set door="host"`, two sampler threads each alternating its own host pool's steps with its
policy calls, one stepping while the other infers). Prints, per contender and
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


def contender_args(name: str, num_samplers: int) -> list[str]:
    samplers = ["--num-samplers", str(num_samplers)]
    return {"in-turn": ["--runner", "local", *samplers],
            "pipeline": ["--runner", "pipeline", *samplers],
            "fused": [], "host-door": ["--set", 'door="host"'],
            "actors": ["--runner", "pipeline", "--num-samplers", "2", "--set",
                       'door="host"']}[name]


def run(args, contender: str, seed: int, out: Path) -> dict:
    command = [sys.executable, "-m", "components.training.cli", "train", args.env, "--algo",
               args.algo, *contender_args(contender, args.num_samplers),
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
    parser.add_argument("--contenders", nargs="+", default=["in-turn", "pipeline"],
                        choices=["in-turn", "pipeline", "fused", "host-door", "actors"])
    args = parser.parse_args()
    results: dict[str, list[dict]] = {name: [] for name in args.contenders}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:  # interleaved: both contenders see the same machine load
            for runner in results:
                result = run(args, runner, seed, Path(tmp) / f"{runner}-{seed}")
                results[runner].append(result)
                shown = ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                                  for k, v in result.items())
                print(f"{runner:>8} seed {seed}: {shown}", flush=True)
    ok = {k: [r for r in v if "error" not in r] for k, v in results.items()}
    if "pipeline" not in ok or not all(len(v) == len(args.seeds) for v in ok.values()):
        return
    piped = ok["pipeline"]
    print(f"{args.algo} on {args.env}, {args.steps} steps, {args.num_samplers} sampler(s), "
          f"seeds {args.seeds}; mean return pipeline "
          f"{statistics.mean(r['return'] for r in piped):.1f}")
    for name, runs in ok.items():
        if name == "pipeline":
            continue
        wall = statistics.mean(a["wall"] / b["wall"] for a, b in zip(runs, piped, strict=True))
        rate = statistics.mean(b["steps_per_s"] / a["steps_per_s"]
                               for a, b in zip(runs, piped, strict=True))
        print(f"  {name} / pipeline wall time {wall:.2f}x (steps/s past the compiles: pipeline "
              f"/ {name} {rate:.2f}x); mean return {name} "
              f"{statistics.mean(r['return'] for r in runs):.1f}")

if __name__ == "__main__":
    main()
