"""`Learner`: the learner's side of a distributed run, for any algorithm with a `Distributed`
part. It publishes the shared component's state to the samplers, gathers their batches (one
as it arrives, or one from every sampler for a synchronous algorithm), hands them to the
algorithm's `update`, and adds what only the runner knows to each metrics row: the policy lag,
the sampling time and how many samplers were replaced."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from components.training.algorithm import Distributed
from components.training.metrics import Row, check_rows
from metagraph.errors import MetaGraphError


def shared_scope(graph: Any, path: str) -> str | None:
    """The scope, in `graph`, of the component at attribute path `path` from its root; None
    where the path's last attribute is None (a part this configuration does not have)."""
    component = graph.root
    parts = path.split(".")
    for i, part in enumerate(parts):
        if not hasattr(component, part):
            raise ValueError(f"Distributed.shared={path!r}: {graph.root.name} has no component "
                             f"at that attribute path")
        component = getattr(component, part)
        if component is None:
            if i == len(parts) - 1:
                return None
            raise ValueError(f"Distributed.shared={path!r}: {graph.root.name} has no component "
                             f"at that attribute path")
    try:
        return graph.scope_of(component)
    except MetaGraphError:
        raise ValueError(f"Distributed.shared={path!r} is not a component of the built graph "
                         f"of {graph.root.name}") from None


def shared_scopes(graph: Any, shared: str | tuple[str, ...]) -> list[str]:
    """The scopes of `Distributed.shared` (one path or several) in `graph`, those of parts
    this configuration lacks left out."""
    paths = (shared,) if isinstance(shared, str) else tuple(shared)
    return [scope for scope in (shared_scope(graph, path) for path in paths)
            if scope is not None]


def shared_states(exe: Any, scopes: list[str]) -> dict[str, Any]:
    """NumPy copies of the state of every component in or below `scopes`."""
    return {name: value for scope in scopes for name, value in exe.get_states(scope).items()}


class Learner:
    """Publishes the shared weights to a pool of samplers, gathers their batches and calls the
    algorithm's `update`."""
    def __init__(self, parts: Distributed, exe: Any, config: Any, pool: Any, version: int,
                 key_for: Callable[[int], jax.Array], name: str = "algorithm"):
        self.parts, self.exe, self.config, self.pool = parts, exe, config, pool
        self.name = name  # the algorithm's, for the errors about its rows
        self.key_for = key_for
        self.scopes = shared_scopes(exe.graph, parts.shared)
        self.scope = self.scopes[0]  # the first shared component's (the policy's)
        if not parts.synchronous:  # keep every sampler busy from the start
            pool.publish(shared_states(exe, self.scopes), version)
            for index in range(pool.count):
                for _ in range(pool.depth * pool.rollouts):
                    pool.request(index)

    def step(self, version: int) -> list[Row]:
        """One update's metrics rows, checked (`metrics.check_rows`), with the runner's
        numbers added; `version` is the number of updates so far (the weights' version)."""
        if self.parts.synchronous:
            self.pool.publish(shared_states(self.exe, self.scopes), version)
            for index in range(self.pool.count):
                self.pool.request(index)
            arrived = dict(self.pool.next() for _ in range(self.pool.count))
            results = [arrived[index] for index in range(self.pool.count)]
        else:
            index, result = self.pool.next()
            results = [result]
        rows = check_rows(self.name, self.parts.update(
            self.exe, self.config, [r["batch"] for r in results], self.key_for(version)),
            "Distributed.update()")
        if not self.parts.synchronous:
            self.pool.publish(shared_states(self.exe, self.scopes), version + 1)
            self.pool.request(index)
        return [row.with_extra(policy_lag=max(version - r["version"] for r in results),
                               sample_seconds=round(max(r["sample_seconds"] for r in results), 5),
                               samplers_replaced=self.pool.replaced) for row in rows]

    @property
    def streams(self) -> int:
        """Key streams used so far (every sampler ever started has its own)."""
        return self.pool.streams

    def close(self) -> None:
        """Stop the samplers."""
        self.pool.close()
