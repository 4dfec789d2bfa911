"""Prioritised replay latency: insert and sample, against flashbax's prioritised buffer
measured in the same run.

    python bench/replay.py [--capacity 1000000] [--batch 256] [--rounds 50]

Records are {obs: uint8[32, 32, 3], action: int32, reward: float32}. Ours is
`components.replay.PrioritizedReplay` lowered by the XLA executor (state donated); flashbax's
`make_prioritised_flat_buffer` runs under jax.jit with the buffer state donated. Each figure is
the median over `rounds` calls after a warm-up, blocking on the result.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import metagraph as mg
from backends import xla
from components.replay import PrioritizedReplay
from metagraph.spaces import Box, Dict, Discrete, PRNGKey


def batch_of(batch: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"obs": rng.integers(0, 256, (batch, 32, 32, 3), dtype=np.uint8),
            "action": rng.integers(0, 4, batch).astype(np.int32),
            "reward": rng.normal(size=batch).astype(np.float32)}


def median_ms(fn, rounds: int) -> float:
    for _ in range(3):
        jax.block_until_ready(fn(0))
    times = []
    for i in range(rounds):
        start = time.perf_counter()
        jax.block_until_ready(fn(i))
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def ours(capacity: int, batch: int, rounds: int) -> tuple[float, float]:
    record = Dict(obs=Box((32, 32, 3), dtype=np.uint8), action=Discrete(4), reward=Box(()))
    graph = mg.build(PrioritizedReplay(capacity, record),
                     {"records": record.with_ranks(batch=True), "key": PRNGKey()},
                     apis=["insert", "sample"], batch_size=batch)
    exe = xla.lower(graph)
    data = [batch_of(batch, s) for s in range(4)]
    keys = [np.asarray(k) for k in jax.random.split(jax.random.PRNGKey(0), 8)]
    insert = median_ms(lambda i: exe.insert(data[i % 4]), rounds)
    sample = median_ms(lambda i: exe.sample(keys[i % 8]), rounds)
    return insert, sample


def flashbax(capacity: int, batch: int, rounds: int) -> tuple[float, float] | str:
    try:
        import flashbax as fbx
    except ImportError:
        return "not installed"
    buffer = fbx.make_prioritised_flat_buffer(capacity, 1, batch, add_batch_size=batch)
    example = jax.tree.map(lambda x: jnp.asarray(x[0]), batch_of(1, 0))
    state = buffer.init(example)
    add = jax.jit(buffer.add, donate_argnums=0)
    sample = jax.jit(buffer.sample)
    data = [jax.tree.map(jnp.asarray, batch_of(batch, s)) for s in range(4)]
    keys = list(jax.random.split(jax.random.PRNGKey(0), 8))
    holder = {"state": state}

    def do_add(i):
        holder["state"] = add(holder["state"], data[i % 4])
        return holder["state"]

    insert = median_ms(do_add, rounds)
    sample_ms = median_ms(lambda i: sample(holder["state"], keys[i % 8]), rounds)
    return insert, sample_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capacity", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    ours_insert, ours_sample = ours(args.capacity, args.batch, args.rounds)
    peer = flashbax(args.capacity, args.batch, args.rounds)
    print(f"capacity {args.capacity}, batch {args.batch}, obs uint8[32,32,3]; median ms per call")
    print(f"{'':>10} {'insert':>9} {'sample':>9}")
    print(f"{'ours':>10} {ours_insert:9.3f} {ours_sample:9.3f}")
    if isinstance(peer, str):
        print(f"{'flashbax':>10} {peer}")
        return
    print(f"{'flashbax':>10} {peer[0]:9.3f} {peer[1]:9.3f}")
    print(f"{'ratio':>10} {ours_insert / peer[0]:9.2f} {ours_sample / peer[1]:9.2f}"
          "   (ours / flashbax; goal <= 1.0)")


if __name__ == "__main__":
    main()
