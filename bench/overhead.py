"""Framework overhead, measured against hand-written JAX in the same run.

    python bench/overhead.py

1. Calling a lowered root API (`exe.act(obs, key)`) against a hand-written `jax.jit` of the
   same pure function with the state threaded by hand, at batch 1 and 1024. Goal: ratio <= 1.05.
2. `mg.build` (trace and check, no XLA compile) of a graph of 50 nested components.
   Goal: <= 0.2 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from compose_and_run import Agent  # noqa: E402

import metagraph as mg  # noqa: E402
from backends import xla  # noqa: E402
from metagraph.spaces import Box, PRNGKey  # noqa: E402


def per_call_seconds(fns: dict, repeats: int, rounds: int = 15) -> dict[str, float]:
    """Per-call time of each function: rounds interleaved (so both see the same machine
    state), the fastest round kept (the least noisy estimate on a shared 2-core machine)."""
    for fn in fns.values():
        jax.block_until_ready(fn())
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(repeats):
                out = fn()
            jax.block_until_ready(out)
            times[name].append((time.perf_counter() - start) / repeats)
    return {name: min(values) for name, values in times.items()}


def call_overhead(batch: int, repeats: int) -> tuple[float, float]:
    obs_space = Box((4,), batch=True)
    graph = mg.build(Agent(obs_space, 2), {"obs": obs_space, "key": PRNGKey()})
    obs = jnp.asarray(np.random.default_rng(0).normal(size=(batch, 4)).astype(np.float32))
    key = jax.random.PRNGKey(0)

    exe = xla.lower(graph)

    # The peer: the same pure function, jitted and driven by hand.
    step = jax.jit(graph.pure("act"), donate_argnums=0)
    holder = {"state": graph.init_state(0)}

    def by_hand():
        holder["state"], actions = step(holder["state"], obs, key)
        return actions

    result = per_call_seconds({"ours": lambda: exe.act(obs, key), "hand": by_hand}, repeats)
    return result["ours"], result["hand"]


class Link(mg.Component):
    """One level of a deep chain: a counter, then the child."""

    def __init__(self, depth: int):
        if depth > 1:
            self.child = Link(depth - 1)

    @mg.api
    def forward(self, x):
        seen = self.get_state("seen", jnp.zeros((), jnp.int32))
        self.set_state("seen", seen + 1)
        y = x * 2.0 + 1.0
        return self.child.forward(y) if hasattr(self, "child") else y


def build_seconds(depth: int, rounds: int = 9) -> float:
    spaces = {"x": Box((8,), batch=True)}
    mg.build(Link(depth), spaces)  # warm JAX's own caches once
    times = []
    for _ in range(rounds):
        root = Link(depth)
        start = time.perf_counter()
        graph = mg.build(root, spaces)
        times.append(time.perf_counter() - start)
    assert len(graph.components) == depth
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=500)
    args = parser.parse_args()
    print(f"jax {jax.__version__}, device {jax.devices()[0].device_kind}")
    print(f"{'batch':>6} {'metagraph us':>13} {'jax.jit us':>11} {'ratio':>6}")
    for batch in (1, 1024):
        ours, hand = call_overhead(batch, args.repeats)
        print(f"{batch:>6} {ours * 1e6:>13.1f} {hand * 1e6:>11.1f} {ours / hand:>6.3f}")
    seconds = build_seconds(50)
    print(f"mg.build of 50 nested components: {seconds * 1e3:.1f} ms (goal <= 200 ms)")


if __name__ == "__main__":
    main()
