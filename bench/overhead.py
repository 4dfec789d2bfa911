"""Framework overhead, measured against hand-written JAX in the same run.

    python bench/overhead.py

1. Calling a lowered root API against a hand-written `jax.jit` of the same pure function with
   the state threaded by hand (asynchronous dispatch: the result is awaited once per round), for
   two models: the example agent (`exe.act(obs, key)`, a 2x32 MLP policy) at batch 1 and 1024,
   and a tiny one (two nested components, 4-8-3 layers) at batch 1, with JAX and with NumPy
   inputs. Goal: ratio <= 1.05 for every row (a fixed cost would hide inside a big model).
   The times are each contender's fastest round; the ratio is the median of the rounds' paired
   ratios (rounds alternate, so both contenders see the same machine state).
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
from compose_and_run import MLP, Agent  # noqa: E402

import metagraph as mg  # noqa: E402
from backends import xla  # noqa: E402
from metagraph.spaces import Box, PRNGKey  # noqa: E402


def per_call_seconds(fns: dict, repeats: int, rounds: int = 31) -> tuple[dict[str, float], float]:
    """Per-call time of each of two functions, and their ratio.

    Rounds alternate between the two (so both see the same machine state); each function's
    fastest round is its time, and the ratio is the median over rounds of the paired ratio
    (first over second), which drift and a stray busy round on a shared 2-core machine move
    least."""
    for fn in fns.values():
        jax.block_until_ready(fn())
    times: dict[str, list[float]] = {name: [] for name in fns}
    for round_index in range(rounds):
        order = list(fns.items()) if round_index % 2 == 0 else list(fns.items())[::-1]
        for name, fn in order:
            start = time.perf_counter()
            for _ in range(repeats):
                out = fn()
            jax.block_until_ready(out)
            times[name].append((time.perf_counter() - start) / repeats)
    first, second = times.values()
    ratio = statistics.median(a / b for a, b in zip(first, second, strict=True))
    return {name: min(values) for name, values in times.items()}, ratio


class Tiny(mg.Component):
    """The smallest model worth calling: two nested components, layers 4 -> 8 -> 3."""

    def __init__(self):
        self.net = MLP([8, 3])

    @mg.api
    def act(self, obs):
        return self.net.forward(obs)


def call_overhead(root: mg.Component, inputs: dict,
                  repeats: int) -> tuple[float, float, float]:
    """Per-call seconds of `exe.act(*inputs)` and of the hand-written `jax.jit` peer, and the
    median paired ratio of the two."""
    spaces = {name: Box(np.shape(v)[1:], batch=True) if name == "obs" else PRNGKey()
              for name, v in inputs.items()}
    graph = mg.build(root, spaces)
    exe = xla.lower(graph)
    args = tuple(inputs.values())

    # The peer: the same pure function, jitted and driven by hand.
    step = jax.jit(graph.pure("act"), donate_argnums=0)
    holder = {"state": graph.init_state(0)}

    def by_hand():
        holder["state"], actions = step(holder["state"], *args)
        return actions

    result, ratio = per_call_seconds({"ours": lambda: exe.act(*args), "hand": by_hand}, repeats)
    return result["ours"], result["hand"], ratio


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
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    print(f"jax {jax.__version__}, device {jax.devices()[0].device_kind}")
    print(f"{'model':>18} {'batch':>6} {'input':>6} {'metagraph us':>13} {'jax.jit us':>11} "
          f"{'ratio':>6}")
    rng = np.random.default_rng(0)
    key = jax.random.PRNGKey(0)
    for model, batch, kind in (("agent (2x32 MLP)", 1, "jax"), ("agent (2x32 MLP)", 1024, "jax"),
                               ("tiny (4-8-3)", 1, "jax"), ("tiny (4-8-3)", 1, "numpy")):
        obs = rng.normal(size=(batch, 4)).astype(np.float32)
        obs = jnp.asarray(obs) if kind == "jax" else obs
        if model.startswith("agent"):
            root, inputs = Agent(Box((4,), batch=True), 2), {"obs": obs, "key": key}
        else:
            root, inputs = Tiny(), {"obs": obs}
        ours, hand, ratio = call_overhead(root, inputs, args.repeats)
        print(f"{model:>18} {batch:>6} {kind:>6} {ours * 1e6:>13.1f} {hand * 1e6:>11.1f} "
              f"{ratio:>6.3f}")
    seconds = build_seconds(50)
    print(f"mg.build of 50 nested components: {seconds * 1e3:.1f} ms (goal <= 200 ms)")


if __name__ == "__main__":
    main()
