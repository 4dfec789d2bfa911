"""Picking a root API's inputs out of a batch by the names its `ApiSignature` declares, so a
learner needs no list of input names of its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from metagraph.graph import MetaGraph


def inputs_for(graph: MetaGraph, api: str, batch: Mapping[str, Any]) -> tuple[Any, ...]:
    """The positional inputs of root API `api` of `graph`, in its signature's order, taken
    from `batch` by name (extra entries are ignored). Raises KeyError naming what is missing."""
    if api not in graph.apis:
        raise KeyError(f"{graph.root.name} has no built API {api!r}; built: {list(graph.apis)}")
    names = list(graph.apis[api].inputs)
    missing = [name for name in names if name not in batch]
    if missing:
        raise KeyError(f"{graph.root.name}.{api} needs inputs {names}; the batch lacks "
                       f"{missing} (it has {sorted(batch)})")
    return tuple(batch[name] for name in names)
