"""Sum and min segment trees in JAX arrays, updated a whole batch at a time.

A tree over `capacity` leaves is an array of 2·L nodes (L the next power of two): node 1 is
the root, node i has children 2i and 2i+1, leaf j sits at L + j. A batch update writes its
leaves, then recomputes the parents level by level (log2 L vectorised steps, no per-record
loop); duplicate indices in a batch keep the last value written for them.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def tree_size(capacity: int) -> int:
    return 1 << max(0, int(np.ceil(np.log2(capacity))))


def empty(capacity: int, fill: float) -> jax.Array:
    return jnp.full((2 * tree_size(capacity),), fill, jnp.float32)


def update(tree: jax.Array, indices: jax.Array, values: jax.Array, combine) -> jax.Array:
    """Set leaves `indices` to `values` and refresh their ancestors with `combine`
    (jnp.add for a sum tree, jnp.minimum for a min tree)."""
    leaves = tree.shape[0] // 2
    order = jnp.argsort(indices, stable=True)
    ordered = indices[order]
    is_last = jnp.concatenate([ordered[1:] != ordered[:-1], jnp.ones((1,), bool)])
    target = jnp.where(is_last, ordered + leaves, 2 * leaves)  # out of range: dropped
    tree = tree.at[target].set(values.astype(tree.dtype)[order], mode="drop")
    node = indices + leaves
    for _ in range(int(np.log2(leaves))):
        node = node // 2
        tree = tree.at[node].set(combine(tree[2 * node], tree[2 * node + 1]))
    return tree


def find_prefix_sum(tree: jax.Array, targets: jax.Array) -> jax.Array:
    """For each target in [0, total), the leaf j where the running sum of leaves first
    exceeds it: sampling ∝ leaf values when targets are uniform in [0, total)."""
    leaves = tree.shape[0] // 2
    node = jnp.ones(targets.shape, jnp.int32)
    for _ in range(int(np.log2(leaves))):
        left = tree[2 * node]
        go_right = targets >= left
        targets = jnp.where(go_right, targets - left, targets)
        node = 2 * node + go_right.astype(jnp.int32)
    return node - leaves
