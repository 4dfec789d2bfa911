"""The random keys of a training run: call i of the loop uses fold_in(PRNGKey(seed), i), so a
resumed run continues exactly as an uninterrupted one; `start` uses its own index."""

from __future__ import annotations

import jax

START_INDEX = 2**31 - 1  # the key index of `start`, apart from every call's
RESUME_INDEX = 2**31 - 2  # the key index of `start` again on a resume (`resume_keys`)
SEED_LIMIT = 2**32  # PRNGKey keeps 32 bits of a seed (without x64): larger ones would collide


def check_seed(seed: object, seeds: int | None = None) -> int:
    """`seed` if it is an int in [0, 2**32) (and so is seed + seeds - 1); else a ValueError
    naming the range (a float, a bool or a larger int would fail inside JAX, or silently
    share its key with a smaller seed)."""
    last = SEED_LIMIT - (seeds or 1)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= last:
        detail = "" if seeds is None else f" (with seeds={seeds}, seed + {seeds - 1} < 2**32)"
        raise ValueError(f"seed must be an int in [0, {last}]{detail}, got {seed!r}")
    return seed


def keys_for(seed: int, seeds: int | None, index: int) -> jax.Array:
    """The key of call `index`: fold_in(PRNGKey(seed), index), or one per seed stacked."""
    if seeds is None:
        return jax.random.fold_in(jax.random.PRNGKey(seed), index)
    return jax.numpy.stack([jax.random.fold_in(jax.random.PRNGKey(seed + k), index)
                            for k in range(seeds)])


def resume_keys(seed: int, seeds: int | None, iteration: int) -> jax.Array:
    """The key of `start` when a run resumes after `iteration` iterations: apart from every
    call's, from the first start's and from another resume's."""
    return jax.random.fold_in(keys_for(seed, seeds, RESUME_INDEX), iteration) if seeds is None \
        else jax.vmap(lambda key: jax.random.fold_in(key, iteration))(
            keys_for(seed, seeds, RESUME_INDEX))
