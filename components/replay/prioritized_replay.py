"""`PrioritizedReplay` (Schaul et al. 2016): proportional prioritised sampling over a ring
buffer, with a sum tree and a min tree of p^α held in JAX arrays.

- new records enter at the running maximum priority seen so far;
- `sample(key, batch_size, beta)` draws record i with probability P(i) = p_i^α / Σ_j p_j^α
  (one stratified draw per segment of the total) and returns importance weights
  w_i = (N P(i))^-β / max_j (N P(j))^-β = (P(i) / P_min)^-β;
- `update_priorities(indices, priorities)` is vectorised; priorities must be finite and > 0
  (anything else leaves the buffer unchanged and raises `mg.RuntimeCheckError` naming this
  component after the call).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

import metagraph as mg
from components.replay import sum_tree
from components.replay.replay_buffer import ReplayBuffer
from metagraph import runtime_checks
from metagraph.spaces import Space


class PrioritizedReplay(ReplayBuffer):
    """A replay buffer sampling records in proportion to priority^alpha (Schaul et al. 2016),
    with sum and min trees.

    Args:
        capacity: The number of records kept (oldest overwritten).
        record_space: The space of one record.
        alpha: The priority exponent (0: uniform).
        check_priorities: Refuse non-finite or negative priorities at run time.
        name: The scope name.
        min_size: The number of records `sample` needs.
        check_empty: Refuse to sample fewer than `min_size` records at run time.
    """
    def __init__(self, capacity: int, record_space: Space, alpha: float = 0.6,
                 check_priorities: bool = True, name: str | None = None, min_size: int = 1,
                 check_empty: bool = True):
        super().__init__(capacity, record_space, name, min_size, check_empty)
        if not alpha >= 0:
            raise ValueError(f"PrioritizedReplay: alpha must be >= 0, got {alpha}")
        self.alpha = alpha
        self.check_priorities = check_priorities

    def _trees(self) -> tuple[jax.Array, jax.Array]:
        return (self.get_state("trees", lambda key: sum_tree.empty(self.capacity)),
                self.get_state("max_priority", jnp.ones((), jnp.float32)))

    @mg.api(inputs={"records": lambda self: self.record_space})
    def insert(self, records):
        """Write a batch of records at the maximum priority seen so far; returns the new size."""
        index = self._counters()[0]
        self._write(records)
        trees, max_priority = self._trees()
        n = jax.tree.leaves(records)[0].shape[0]
        scaled = jnp.full((n,), max_priority ** self.alpha, jnp.float32)
        self.set_state("trees", sum_tree.write_ring(trees, index, scaled, self.capacity))
        return self._counters()[1]

    @mg.api
    def sample(self, key, beta: float = 0.4, batch_size: int = 32):
        """(records, indices, importance weights) of `batch_size` prioritised draws; refused
        while the buffer holds fewer than `min_size` records (see `ReplayBuffer`)."""
        self._require_records()
        storage = self._storage()
        trees, _ = self._trees()
        total = sum_tree.total(trees)
        segment = total / batch_size
        u = (jnp.arange(batch_size) + jax.random.uniform(key, (batch_size,))) * segment
        indices = sum_tree.find_prefix_sum(trees, jnp.minimum(u, total * (1 - 1e-7)))
        indices = jnp.minimum(indices, jnp.maximum(self._counters()[1], 1) - 1)
        probabilities = sum_tree.leaf_values(trees, indices) / total
        p_min = sum_tree.minimum(trees) / total
        weights = (probabilities / p_min) ** (-beta)
        return jax.tree.map(lambda store: store[indices], storage), indices, weights

    @mg.api
    def update_priorities(self, indices, priorities):
        """Set the priorities of records `indices` (e.g. |TD error| + ε); returns the running
        maximum priority. Priorities that are not finite and > 0 leave everything unchanged
        and raise `mg.RuntimeCheckError` after the call."""
        trees, max_priority = self._trees()
        ok = jnp.all(jnp.isfinite(priorities) & (priorities > 0))
        if self.check_priorities:
            runtime_checks.require(ok, functools.partial(_message, self.scope), priorities)
        safe = jnp.where(ok, priorities, 1.0)
        updated = sum_tree.update(trees, indices.astype(jnp.int32), safe ** self.alpha)
        self.set_state("trees", jnp.where(ok, updated, trees))
        max_priority = jnp.where(ok, jnp.maximum(max_priority, safe.max().astype(jnp.float32)),
                                 max_priority)
        self.set_state("max_priority", max_priority)
        return max_priority


def _message(scope: str, priorities: np.ndarray) -> str:
    bad = ~np.isfinite(priorities) | (priorities <= 0)
    return (f"{scope}.update_priorities: priorities must be finite and > 0; got "
            f"{priorities[bad][:5].tolist()} at positions {np.flatnonzero(bad)[:5].tolist()} "
            f"(no priority was changed)")
