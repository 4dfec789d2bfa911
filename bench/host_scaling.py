"""How the host pool's CartPole step scales with threads and batch size on this machine: one JSON.

    python bench/host_scaling.py [--threads 1 2 4 8 16] [--sizes 16 4096 8192 65536]

For each batch size N and thread count, million steps per second (best of five timed runs of
`pool.step` with int32 actions drawn beforehand), the microseconds one call takes, and, last,
the engine's C++ loop alone (`bench/engine_vs_hand.cpp`, no Python): what the step costs
without the call; and what one job on the worker threads costs with no work in it
(`bench/thread_pool_dispatch.cpp`, no Python: the threads' wake-up and meetings). A machine
whose calls cost far more than the loop (a sandboxed kernel that makes page faults and
system calls dear) shows it here. Threads beyond N / min_per_thread are left idle by the
pool (CartPole: 256 environments a thread at least).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
from env_throughput import engine_vs_hand

import components.envs as envs


def timed(n: int, threads: int, steps: int) -> dict:
    env = envs.make("CartPole-v1", n, seed=0, num_threads=threads)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 2, (steps, n)).astype(np.int32)
    for t in range(min(steps, 20)):
        env.step(actions[t])
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for t in range(steps):
            env.step(actions[t])
        best = min(best, time.perf_counter() - start)
    env.close()
    return {
        "m_steps_per_s": round(n * steps / best / 1e6, 2),
        "us_per_call": round(best / steps * 1e6, 2),
    }


def dispatch(threads: int, n: int = 4096) -> dict:
    """Build bench/thread_pool_dispatch.cpp against the installed engine and run it."""
    from components.envs.engine import include_dir

    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "thread_pool_dispatch.cpp")
    binary = os.path.join(tempfile.mkdtemp(), "thread_pool_dispatch")
    subprocess.run(["g++", "-std=c++17", "-O3", "-march=native", "-pthread",
                    f"-I{include_dir()}", source, "-o", binary], check=True)
    done = subprocess.run([binary, str(threads), str(n)], check=True, capture_output=True,
                          text=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cores = os.cpu_count() or 1
    parser.add_argument(
        "--threads",
        type=int,
        nargs="+",
        default=sorted({1, 2, 4, 8, cores} & set(range(1, cores + 1))),
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 4096, 8192, 65536])
    args = parser.parse_args()
    found = {
        f"N={n}": {f"{t}t": timed(n, t, max(20, min(2000, 2_000_000 // n))) for t in args.threads}
        for n in args.sizes
    }
    found["engine_vs_hand"] = engine_vs_hand()
    found["dispatch_us"] = dispatch(max(args.threads))
    print(json.dumps(found))


if __name__ == "__main__":
    main()
