"""`run_iterations`: the body of an agent's `train(key, iterations)` API, which runs up to
`count` (`config.iterations_per_call`) whole training iterations in one executable: the first
`iterations` of them, the others skipped, so a run does exactly the iterations it asks for with
one executable. A pure function over the agent's own `iteration(key) -> statistics`.
`IterativeAgent`: the `start` and `train` APIs every agent built on it shares."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

import metagraph as mg


def run_iterations(iteration: Callable[[jax.Array], dict[str, Any]], key: jax.Array,
                   iterations: jax.Array, count: int) -> dict[str, Any]:
    """The statistics of the first `iterations` of `count` calls of `iteration`, each [count]
    (zeros for the skipped ones). Iteration k uses the k-th of `count` keys split from `key`,
    whatever `iterations` is: a value above `count` runs all, one below 1 none."""

    def one(_, xs):
        index, iteration_key = xs
        return None, mg.cond(index < iterations, iteration, None, iteration_key)

    return mg.scan(one, None, (jnp.arange(count), jax.random.split(key, count)))[1]


class IterativeAgent(mg.Component):
    """The APIs every built-in agent that trains in whole iterations over its environments
    shares, written once: `start(key)` resets its `rollout` (a `Rollout`), `train(key,
    iterations)` runs `run_iterations` over its `_iteration(key) -> statistics`, up to
    `config.iterations_per_call` of them in one executable."""

    @mg.api
    def start(self, key):
        """Reset every environment (from `key`); returns the first observations."""
        return self.rollout.reset(key)

    @mg.api
    def train(self, key, iterations):
        """The first `iterations` (an int32 scalar) of `iterations_per_call` iterations
        (`run_iterations`); per-iteration statistics [iterations_per_call], zeros for the
        skipped ones."""
        return run_iterations(self._iteration, key, iterations, self.config.iterations_per_call)
