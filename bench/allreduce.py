"""The cost of a learner split over processes on JAX's distributed runtime: XLA's all-reduce
across processes and the learner's update rate on 1 and M processes, and one sampler's rate,
for the model in docs/distributed.md ("Scale on paper").

    python bench/allreduce.py [--processes 1 2] [--envs CartPole-v1 HalfCheetah-v5]
                              [--batch-envs 64] [--steps 64] [--rounds 30]

For each M in `--processes`, M processes join a group on localhost
(`components.training.distributed.LearnerGroup`, CPU collectives through Gloo) and measure:

1. All-reduce: a float32 vector per process (64 and 1024 floats, the size of IMPALA's 64-64
   policy's parameters, and 1M floats) summed over the processes by XLA (`jnp.sum` over a mesh axis
   spanning the processes, which XLA lowers to an all-reduce), seconds per call.
2. The learner: IMPALA's `learn` (V-trace, Adam) on a batch of `batch-envs` x `steps`
   environment steps, each process with its half (time-major: its block of environments);
   environment steps learned per second by the group.

Then, in one plain process, one sampler's rate: IMPALA's fused `rollout` (policy and native
environments in one executable) on `batch-envs` x `steps` steps, in steps per second.

Medians over `rounds` after a warm-up. On a 2-core machine the M processes share the cores:
read the 2-process rows as the cost of the collective plus the contention, not as a speed-up.
"""

from __future__ import annotations

import argparse
import functools
import json
import socket
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
from timing import timed


def median_seconds(fn, rounds: int, warmup: int = 3) -> float:
    """Median wall time of `fn()` (which blocks until its result is ready)."""
    return statistics.median(timed(fn, rounds, warmup))


def fake_inputs(graph, api: str, seed: int = 0) -> tuple:
    """Inputs of `api` at its spaces' shapes: random floats, zero integers, no dones."""
    import jax
    rng = np.random.default_rng(seed)
    out = []
    for space in graph.apis[api].inputs.values():
        abstract = space.to_abstract(1, 1)
        leaf = jax.tree.leaves(abstract)[0]
        if np.issubdtype(leaf.dtype, np.floating):
            out.append(rng.normal(size=leaf.shape).astype(leaf.dtype) * 0.1)
        else:
            out.append(np.zeros(leaf.shape, leaf.dtype))
    return tuple(out)


def sum_as_one_vector(*xs, cuts: tuple[int, ...]):
    """The arrays `xs` (each [devices, ...]) summed over axis 0 through one concatenated
    vector, split back at `cuts`: one all-reduce instead of one per array."""
    import jax.numpy as jnp
    flat = jnp.concatenate([x.reshape(x.shape[0], -1) for x in xs], axis=1)
    return jnp.split(jnp.sum(flat, axis=0), cuts)


def worker(process_id: int, processes: int, port: int, args: argparse.Namespace) -> None:
    """One process of the group: prints a JSON line of its measurements (process 0's)."""
    from components.training.distributed import LearnerGroup
    group = LearnerGroup.join(f"localhost:{port}", processes, process_id, timeout=120)
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec

    from components.agents.impala_agent import ImpalaAgent
    from components.agents.impala_config import ImpalaConfig
    from components.training.algorithms import Impala

    dp = group.data_parallel()
    found: dict = {"processes": processes, "allreduce": {}, "learn": {}}
    config = ImpalaConfig(num_envs=args.batch_envs, num_steps=args.steps)
    for env_id in args.envs:
        graph = Impala().build(env_id, config, 10**6, 1)
        exe = group.lower(graph, batch_axes=ImpalaAgent.batch_axes(), seed=0)
        mine = exe.data_parallel.local_part(graph, "learn", fake_inputs(graph, "learn"))
        seconds = median_seconds(lambda exe=exe, mine=mine: jax.block_until_ready(
            exe.learn(*mine)), args.rounds)
        policy = jax.tree.leaves(exe.get_states("impala_agent/policy"))
        params = sum(np.size(leaf) for leaf in policy)
        # the learner's all-reduce: one per trainable leaf (policy and value), as XLA emits it
        trainable = [leaf for scope, values in exe.get_state().items()
                     if "policy" in scope or "value" in scope
                     for leaf in jax.tree.leaves(values) if np.issubdtype(leaf.dtype, np.floating)]
        grads = [jax.make_array_from_process_local_data(
            NamedSharding(dp.mesh, PartitionSpec("batch")), leaf[None]) for leaf in trainable]
        tree_sum = jax.jit(lambda *xs: [jnp.sum(x, axis=0) for x in xs],
                           out_shardings=dp.replicated)
        tree_seconds = median_seconds(lambda g=grads, f=tree_sum: jax.block_until_ready(f(*g)),
                                      args.rounds)
        # the same floats as one vector: what raveling the gradients first would cost
        cuts = np.cumsum([leaf.size for leaf in trainable])[:-1]
        flat_sum = jax.jit(functools.partial(sum_as_one_vector, cuts=tuple(cuts)),
                           out_shardings=dp.replicated)
        flat_seconds = median_seconds(lambda g=grads, f=flat_sum: jax.block_until_ready(
            f(*g)), args.rounds)
        found["learn"][env_id] = {"seconds": seconds, "params": int(params),
                                  "steps_per_second": args.batch_envs * args.steps / seconds,
                                  "grad_leaves": len(trainable),
                                  "grad_floats": int(sum(np.size(x) for x in trainable)),
                                  "grad_allreduce_seconds": tree_seconds,
                                  "flat_allreduce_seconds": flat_seconds}
    split = NamedSharding(dp.mesh, PartitionSpec("batch"))
    reduce = jax.jit(lambda x: jnp.sum(x, axis=0), out_shardings=dp.replicated)
    sizes = sorted({found["learn"][e]["params"] for e in args.envs}
                   | {16, 64, 256, 512, 1024, 1 << 20})
    for size in sizes:
        local = np.ones((1, size), np.float32)
        x = jax.make_array_from_process_local_data(split, local)
        compiled = reduce.lower(x).compile()
        assert processes == 1 or "all-reduce" in compiled.as_text()
        seconds = median_seconds(lambda x=x, f=compiled: jax.block_until_ready(f(x)),
                                 args.rounds)
        found["allreduce"][size] = seconds
    if group.is_chief:
        print(json.dumps(found), flush=True)
    group.close()


def sampler_rates(args: argparse.Namespace) -> dict[str, float]:
    """Steps per second of one IMPALA sampler in this process, per environment."""
    from backends import xla
    from components.agents.impala_config import ImpalaConfig
    from components.training.algorithms import Impala
    from components.training.distributed import Sampler

    config = ImpalaConfig(num_envs=args.batch_envs, num_steps=args.steps)
    rates = {}
    for env_id in args.envs:
        exe = xla.lower(Impala().build(env_id, config, 10**6, 1), seed=0)
        sampler = Sampler("impala", env_id, config.to_dict(), 0, 0, 1)
        sampler.sample(exe.get_states("impala_agent/policy"), 0)
        seconds = median_seconds(lambda s=sampler: s.sample(None, 0), args.rounds)
        rates[env_id] = args.batch_envs * args.steps / seconds
    return rates


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--envs", nargs="+", default=["CartPole-v1", "HalfCheetah-v5"])
    parser.add_argument("--batch-envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--worker", type=int, nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker, args)
        return
    forwarded = ["--envs", *args.envs, "--batch-envs", str(args.batch_envs), "--steps",
                 str(args.steps), "--rounds", str(args.rounds)]
    results = []
    for processes in args.processes:
        port = free_port()
        procs = [subprocess.Popen([sys.executable, __file__, *forwarded, "--worker", str(i),
                                   str(processes), str(port)], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True,
                                  cwd=Path(__file__).parents[1])
                 for i in range(processes)]
        outs = [proc.communicate(timeout=600)[0] for proc in procs]
        if any(proc.returncode for proc in procs):
            raise SystemExit(f"a worker of the {processes}-process group failed")
        results.append(json.loads(outs[0].strip().splitlines()[-1]))
    batch = args.batch_envs * args.steps
    print(f"IMPALA learner, batch {args.batch_envs} envs x {args.steps} steps = {batch}, "
          f"median of {args.rounds}\n")
    print("| processes | " + " | ".join(f"{e}: ms/update | {e}: steps/s" for e in args.envs)
          + " |")
    print("|---:|" + "---:|---:|" * len(args.envs))
    for found in results:
        cells = [f"{found['learn'][e]['seconds'] * 1e3:.2f} | "
                 f"{found['learn'][e]['steps_per_second'] / 1e6:.3f} M" for e in args.envs]
        print(f"| {found['processes']} | " + " | ".join(cells) + " |")
    print("\nThe learner's gradients (policy and value, one array per leaf) summed across the "
          "processes, ms per call\n")
    print("| processes | " + " | ".join(
        f"{e}: {results[0]['learn'][e]['grad_leaves']} leaves, "
        f"{results[0]['learn'][e]['grad_floats']:,} floats" for e in args.envs) + " |")
    print("|---:|" + "---:|" * len(args.envs))
    for found in results:
        print(f"| {found['processes']} | " + " | ".join(
            f"{found['learn'][e]['grad_allreduce_seconds'] * 1e3:.3f} (as one vector: "
            f"{found['learn'][e]['flat_allreduce_seconds'] * 1e3:.3f})" for e in args.envs)
            + " |")
    sizes = list(results[0]["allreduce"])
    print("\nAll-reduce of a float32 vector across the processes (XLA, Gloo), ms per call\n")
    print("| processes | " + " | ".join(f"{int(s):,} floats ({int(s) * 4 / 1e3:.0f} KB)"
                                       for s in sizes) + " |")
    print("|---:|" + "---:|" * len(sizes))
    for found in results:
        print(f"| {found['processes']} | " + " | ".join(
            f"{found['allreduce'][s] * 1e3:.3f}" for s in sizes) + " |")
    print("\nOne sampler (IMPALA rollout, fused), in one process\n")
    for env_id, rate in sampler_rates(args).items():
        print(f"- {env_id}: {rate / 1e6:.3f} M steps/s ({1e6 / rate:.2f} µs per step)")


if __name__ == "__main__":
    main()
