"""`run_iterations`: the body of an agent's `train(key, iterations)` API, which runs up to
`count` (`config.iterations_per_call`) whole training iterations in one executable: the first
`iterations` of them, the others skipped, so a run does exactly the iterations it asks for with
one executable. A pure function over the agent's own `iteration(key) -> statistics`."""

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
