"""The random keys of a training run: call i of the loop uses fold_in(PRNGKey(seed), i), so a
resumed run continues exactly as an uninterrupted one; `start` uses its own index."""

from __future__ import annotations

import jax

START_INDEX = 2**31 - 1  # the key index of `start`, apart from every call's


def keys_for(seed: int, seeds: int | None, index: int) -> jax.Array:
    """The key of call `index`: fold_in(PRNGKey(seed), index), or one per seed stacked."""
    if seeds is None:
        return jax.random.fold_in(jax.random.PRNGKey(seed), index)
    return jax.numpy.stack([jax.random.fold_in(jax.random.PRNGKey(seed + k), index)
                            for k in range(seeds)])
