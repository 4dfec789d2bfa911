"""`ReplayBuffer`: a uniform ring buffer over any record space, held in JAX arrays.

    buffer = ReplayBuffer(capacity=100_000, record_space=Dict(obs=Box((4,)), action=Discrete(2)))
    buffer.insert(records)                  # records: the record space with a leading batch axis
    batch, indices = buffer.sample(key, 256)

Inserting overwrites the oldest records once the buffer is full. Sampling draws indices
uniformly from the records inserted so far (with replacement). `can_sample()` says whether the
buffer holds `min_size` records (at least 1); sampling with fewer is refused, as dopamine
refuses an empty sum tree: `mg.RuntimeCheckError` after the call, the state unchanged. The
check costs a branch, not a host round trip (the callback runs only when refusing);
`check_empty=False` drops it.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

import metagraph as mg
from metagraph import runtime_checks
from metagraph.checks import positive_int
from metagraph.spaces import Space


class ReplayBuffer(mg.Component):
    """A uniform ring buffer of records, as component state.

    Args:
        capacity: The number of records kept (oldest overwritten).
        record_space: The space of one record.
        name: The scope name.
        min_size: The number of records `sample` needs.
        check_empty: Refuse to sample fewer than `min_size` records at run time.
    """
    def __init__(self, capacity: int, record_space: Space, name: str | None = None,
                 min_size: int = 1, check_empty: bool = True):
        super().__init__(name)
        owner = type(self).__name__
        self.capacity = positive_int(capacity, f"{owner}: capacity")
        if not isinstance(record_space, Space):
            raise TypeError(f"{owner}: record_space must be a metagraph Space")
        self.min_size = positive_int(min_size, f"{owner}: min_size")
        if min_size > capacity:
            raise ValueError(f"{owner}: min_size {min_size} exceeds the capacity {capacity}")
        self.check_empty = check_empty
        self.record_space = record_space.with_ranks(batch=True)

    def _storage(self) -> Any:
        return self.get_state("storage", lambda key: jax.tree.map(
            lambda s: jnp.zeros(s.shape, s.dtype), self.record_space.to_abstract(self.capacity)))

    def _counters(self) -> tuple[jax.Array, jax.Array]:
        return (self.get_state("index", jnp.zeros((), jnp.int32)),
                self.get_state("size", jnp.zeros((), jnp.int32)))

    def _write(self, records: Any) -> jax.Array:
        """Write a batch at the ring position; returns the slots written."""
        storage = self._storage()
        index, size = self._counters()
        n = jax.tree.leaves(records)[0].shape[0]
        if isinstance(n, int) and n > self.capacity:  # (symbolic while the graph is built)
            raise ValueError(f"{self.scope}.insert: a batch of {n} records exceeds the capacity "
                             f"{self.capacity}")
        slots = (index + jnp.arange(n, dtype=jnp.int32)) % self.capacity
        storage = jax.tree.map(lambda store, new: store.at[slots].set(new.astype(store.dtype)),
                               storage, records)
        self.set_state("storage", storage)
        self.set_state("index", (index + n) % self.capacity)
        self.set_state("size", jnp.minimum(size + n, self.capacity))
        return slots

    def _require_records(self) -> None:
        """Refuse to sample (after the call) while fewer than `min_size` records are held."""
        if self.check_empty:
            message = (f"{self.scope}.sample: the buffer holds fewer than "
                       f"min_size={self.min_size} records; insert some first (can_sample() "
                       f"says when sampling is possible)")
            # `require` calls the host only on its refusing branch (no round trip per sample)
            # and reports only a value that fails, so it holds under vmap too (`--seeds`),
            # where a cond runs both branches
            runtime_checks.require(self._counters()[1] >= self.min_size, message)

    @mg.api(inputs={"records": lambda self: self.record_space})
    def insert(self, records):
        """Append a batch of records (a leading batch axis); returns the new size."""
        self._write(records)
        return self._counters()[1]

    @mg.api
    def sample(self, key, batch_size: int = 32, stratified: bool = False):
        """(records, indices): `batch_size` records drawn uniformly with replacement; with
        `stratified`, one from each of `batch_size` equal slices of the records held (every
        record still equally likely, a batch spread over the buffer's ages: how
        `PrioritizedReplay` draws, here with equal priorities)."""
        self._require_records()
        storage = self._storage()
        size = jnp.maximum(self._counters()[1], 1)
        if stratified:
            u = (jnp.arange(batch_size) + jax.random.uniform(key, (batch_size,))) / batch_size
            indices = jnp.minimum((u * size).astype(jnp.int32), size - 1)
        else:
            indices = jax.random.randint(key, (batch_size,), 0, size)
        return jax.tree.map(lambda store: store[indices], storage), indices

    @mg.api
    def size(self):
        """The number of records held."""
        return self._counters()[1]

    @mg.api
    def can_sample(self):
        """Whether `sample` can draw: the buffer holds at least `min_size` records."""
        return self._counters()[1] >= self.min_size
