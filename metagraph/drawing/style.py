"""How things look: colours by dtype kind, cluster shading by depth, compact edge labels."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from metagraph.spaces import ArraySpace, Dict, PRNGKey, Tuple

KIND_COLORS = {"float": "#1f77b4", "int": "#2ca02c", "bool": "#ff7f0e", "key": "#9467bd",
               "container": "#7f7f7f", "none": "#7f7f7f"}
ERROR_COLOR = "#d62728"
DEPTH_FILLS = ["#f4f6fb", "#e6ebf5", "#d6deef", "#c5d0e8", "#b4c2e0"]
API_FILL = "#ffffff"


def kind_of(space: Any) -> str:
    """float, int, bool, key or container (Dict, Tuple, several arguments)."""
    if space is None:
        return "none"
    if isinstance(space, PRNGKey):
        return "key"
    if isinstance(space, Dict | Tuple):
        return "container"
    if isinstance(space, ArraySpace):
        kind = np.dtype(space.dtype).kind
        return {"f": "float", "i": "int", "u": "int", "b": "bool"}.get(kind, "container")
    return "container"


def edge_kind(args: Mapping[str, Any]) -> str:
    """The colour class of an edge from the spaces of its arguments: their one kind, `none`, or
    `container` when mixed."""
    kinds = {kind_of(space) for space in args.values()}
    return kinds.pop() if len(kinds) == 1 else ("none" if not kinds else "container")


def short(space: Any) -> str:
    """A space's compact text (`f32[B,4]`); a description given as text is shown as is."""
    if space is None:
        return "?"
    return space if isinstance(space, str) else space.short()


def edge_label(args: Mapping[str, Any], returns: Any = None) -> str:
    """`obs: f32[B,4]`, one argument per line, then `-> i32[B]`."""
    lines = [f"{name}: {short(space)}" for name, space in args.items()
             if short(space) not in ("{}", "()")]  # an empty **kwargs or *args
    if returns is not None:
        lines.append(f"-> {short(returns)}")
    return "\n".join(lines)


def depth_fill(depth: int) -> str:
    """The fill colour of a cluster at nesting `depth` (the deepest colour repeats)."""
    return DEPTH_FILLS[min(depth, len(DEPTH_FILLS) - 1)]
