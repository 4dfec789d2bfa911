"""A sum tree and a min tree over the same leaves, stacked in one JAX array float32[2, 2L]
(row 0 sums, row 1 minima) and updated a whole batch at a time.

Node 1 is the root, node i has children 2i and 2i+1, leaf j sits at L + j. Empty leaves hold 0
in the sum row and +inf in the min row. L is a power of two of at least 2·capacity + 8, so a
contiguous run of up to `capacity` leaves starting anywhere in [0, capacity) has room to its
right: an insert updates its leaves and their ancestors with contiguous slices (no gather or
scatter), level by level. Arbitrary indices (priority updates) use a vectorised scatter per
level; duplicate indices keep the last value written. No per-record loop anywhere.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def num_leaves(capacity: int) -> int:
    """The number of leaves of trees for `capacity` records (a power of two with room to spare)."""
    return 1 << int(np.ceil(np.log2(2 * capacity + 8)))


def empty(capacity: int) -> jax.Array:
    """Empty stacked trees for `capacity` records: sums of zeros and minima of +inf."""
    size = 2 * num_leaves(capacity)
    return jnp.stack([jnp.zeros(size, jnp.float32), jnp.full(size, jnp.inf, jnp.float32)])


def _levels(trees: jax.Array) -> int:
    return int(np.log2(trees.shape[1] // 2))


def _combine(children: jax.Array) -> jax.Array:
    pairs = children.reshape(2, -1, 2)
    return jnp.stack([pairs[0].sum(-1), pairs[1].min(-1)])


def _refresh_range(trees: jax.Array, first_leaf: jax.Array, n: int) -> jax.Array:
    """Recompute the ancestors of leaves [first_leaf, first_leaf + n) with slices."""
    lo, size = first_leaf + trees.shape[1] // 2, n
    for _ in range(_levels(trees)):
        lo, size = lo // 2, size // 2 + 2
        children = jax.lax.dynamic_slice(trees, (0, 2 * lo), (2, 2 * size))
        trees = jax.lax.dynamic_update_slice(trees, _combine(children), (0, lo))
    return trees


def write_ring(trees: jax.Array, start: jax.Array, values: jax.Array, capacity: int
               ) -> jax.Array:
    """Set leaves (start + i) % capacity to values[i] (a ring-buffer insert, n ≤ capacity)."""
    n = values.shape[0]
    if not isinstance(n, int):  # a symbolic batch while the graph is built: same result
        return update(trees, (start + jnp.arange(n)) % capacity, values)
    leaves = trees.shape[1] // 2
    values = jnp.asarray(values, jnp.float32)
    position = start + jnp.arange(n)
    inside = position < capacity
    # the run [start, start + n): the part past the capacity stays empty
    run = jnp.stack([jnp.where(inside, values, 0.0), jnp.where(inside, values, jnp.inf)])
    trees = jax.lax.dynamic_update_slice(trees, run, (0, start + leaves))
    trees = _refresh_range(trees, start, n)
    # what wrapped around lands on leaves [0, n): blend with what is there
    wrapped = start + n - capacity  # leaves [0, wrapped) receive values[n - wrapped + j]

    def wrap(trees):
        j = jnp.arange(n)
        head = jax.lax.dynamic_slice(trees, (0, leaves), (2, n))
        source = jnp.clip(j + n - wrapped, 0, n - 1)
        blend = jnp.where(j < wrapped, values[source], head)
        trees = jax.lax.dynamic_update_slice(trees, blend, (0, leaves))
        return _refresh_range(trees, jnp.zeros((), jnp.int32), n)

    return jax.lax.cond(wrapped > 0, wrap, lambda trees: trees, trees)


def update(trees: jax.Array, indices: jax.Array, values: jax.Array) -> jax.Array:
    """Set leaves `indices` to `values` (any order, duplicates: the last one wins) and refresh
    their ancestors."""
    leaves = trees.shape[1] // 2
    order = jnp.argsort(indices, stable=True)
    ordered = indices[order]
    is_last = jnp.concatenate([ordered[1:] != ordered[:-1], jnp.ones((1,), bool)])
    target = jnp.where(is_last, ordered + leaves, trees.shape[1])  # out of range: dropped
    trees = trees.at[:, target].set(values.astype(jnp.float32)[order], mode="drop")
    node = indices + leaves
    for _ in range(_levels(trees)):
        node = node // 2
        children = jnp.stack([trees[:, 2 * node], trees[:, 2 * node + 1]], -1)
        trees = trees.at[:, node].set(_combine(children.reshape(2, -1)))
    return trees


def total(trees: jax.Array) -> jax.Array:
    """The sum of all priorities (the sum tree's root)."""
    return trees[0, 1]


def minimum(trees: jax.Array) -> jax.Array:
    """The smallest priority (the min tree's root)."""
    return trees[1, 1]


def leaf_values(trees: jax.Array, indices: jax.Array) -> jax.Array:
    """The priorities at record `indices`."""
    return trees[0, indices + trees.shape[1] // 2]


def find_prefix_sum(trees: jax.Array, targets: jax.Array) -> jax.Array:
    """For each target in [0, total), the leaf j where the running sum of leaves first
    exceeds it: sampling ∝ leaf values when targets are uniform in [0, total)."""
    sums = trees[0]
    node = jnp.ones(targets.shape, jnp.int32)
    for _ in range(_levels(trees)):
        left = sums[2 * node]
        go_right = targets >= left
        targets = jnp.where(go_right, targets - left, targets)
        node = 2 * node + go_right.astype(jnp.int32)
    return node - sums.shape[0] // 2
