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
    def __init__(self, capacity: int, record_space: Space, alpha: float = 0.6,
                 check_priorities: bool = True, name: str | None = None):
        super().__init__(capacity, record_space, name)
        if not alpha >= 0:
            raise ValueError(f"PrioritizedReplay: alpha must be >= 0, got {alpha}")
        self.alpha = alpha
        self.check_priorities = check_priorities

    def _trees(self) -> tuple[jax.Array, jax.Array, jax.Array]:
        return (self.get_state("sum_tree", lambda key: sum_tree.empty(self.capacity, 0.0)),
                self.get_state("min_tree", lambda key: sum_tree.empty(self.capacity, np.inf)),
                self.get_state("max_priority", jnp.ones((), jnp.float32)))

    def _set_priorities(self, slots: jax.Array, priorities: jax.Array) -> None:
        sums, mins, _ = self._trees()
        scaled = priorities.astype(jnp.float32) ** self.alpha
        self.set_state("sum_tree", sum_tree.update(sums, slots, scaled, jnp.add))
        self.set_state("min_tree", sum_tree.update(mins, slots, scaled, jnp.minimum))

    @mg.api(inputs={"records": lambda self: self.record_space})
    def insert(self, records):
        slots = self._write(records)
        max_priority = self._trees()[2]
        self._set_priorities(slots, jnp.full(slots.shape, max_priority))
        return self._counters()[1]

    @mg.api
    def sample(self, key, beta: float = 0.4, batch_size: int = 32):
        """(records, indices, importance weights) of `batch_size` prioritised draws."""
        storage = self._storage()
        sums, mins, _ = self._trees()
        total = sums[1]
        segment = total / batch_size
        u = (jnp.arange(batch_size) + jax.random.uniform(key, (batch_size,))) * segment
        indices = sum_tree.find_prefix_sum(sums, jnp.minimum(u, total * (1 - 1e-7)))
        size = jnp.maximum(self._counters()[1], 1)
        indices = jnp.minimum(indices, size - 1)
        leaves = sums.shape[0] // 2
        probabilities = sums[indices + leaves] / total
        p_min = mins[1] / total
        weights = (probabilities / p_min) ** (-beta)
        return jax.tree.map(lambda store: store[indices], storage), indices, weights

    @mg.api
    def update_priorities(self, indices, priorities):
        """Set the priorities of records `indices` (e.g. |TD error| + ε); returns the running
        maximum priority. Priorities that are not finite and > 0 leave everything unchanged
        and raise `mg.RuntimeCheckError` after the call."""
        sums, mins, max_priority = self._trees()
        ok = jnp.all(jnp.isfinite(priorities) & (priorities > 0))
        if self.check_priorities:
            runtime_checks.require(ok, functools.partial(_message, self.scope), priorities)
        safe = jnp.where(ok, priorities, 1.0)
        self._set_priorities(indices.astype(jnp.int32), safe)
        new_sums, new_mins, _ = self._trees()
        self.set_state("sum_tree", jnp.where(ok, new_sums, sums))
        self.set_state("min_tree", jnp.where(ok, new_mins, mins))
        max_priority = jnp.where(ok, jnp.maximum(max_priority, safe.max().astype(jnp.float32)),
                                 max_priority)
        self.set_state("max_priority", max_priority)
        return max_priority


def _message(scope: str, priorities: np.ndarray) -> str:
    bad = ~np.isfinite(priorities) | (priorities <= 0)
    return (f"{scope}.update_priorities: priorities must be finite and > 0; got "
            f"{priorities[bad][:5].tolist()} at positions {np.flatnonzero(bad)[:5].tolist()} "
            f"(no priority was changed)")
