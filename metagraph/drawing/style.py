"""How things look: colours by dtype kind, cluster shading by depth, compact edge labels, state
lines; the same texts for every renderer (Graphviz, matplotlib, the HTML explorer)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from metagraph.spaces import ArraySpace, Container, PRNGKey
from metagraph.spaces.space import short_dtype
from metagraph.state_info import StateEntry, bytes_text

KIND_COLORS = {"float": "#1f77b4", "int": "#2ca02c", "bool": "#ff7f0e", "key": "#9467bd",
               "container": "#7f7f7f", "none": "#7f7f7f"}
ERROR_COLOR = "#d62728"
DEPTH_FILLS = ["#f4f6fb", "#e6ebf5", "#d6deef", "#c5d0e8", "#b4c2e0"]
API_FILL = "#ffffff"


def kind_of(space: Any) -> str:
    """float, int, bool, key or container (Dict, Tuple, Record, several arguments)."""
    if space is None:
        return "none"
    if isinstance(space, PRNGKey):
        return "key"
    if isinstance(space, Container):
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


def signature_text(args: Mapping[str, Any], returns: Any) -> str:
    """One call in full: `(obs: float32[B,4], key: key[]) -> int32[B]`."""
    inner = ", ".join(f"{name}: {space}" for name, space in args.items())
    return f"({inner}) -> {returns}"


def flow_text(from_input: bool, flow: Any, full: bool = False) -> str:
    """One data flow: `out['obs'] -> obs: f32[B,4]` (a part of the producer's output),
    `out -> x: f32[B,8]`, or `observation -> obs: f32[1,4]` from the graph's input."""
    source = flow.output if from_input else f"out{flow.output}"
    space = str(flow.space) if full else short(flow.space)
    return f"{source} -> {flow.argument}: {space}"


def clip_lines(lines: list[str], most: int = 4) -> str:
    """The distinct `lines`, at most `most` of them and then `+N more`."""
    unique = list(dict.fromkeys(lines))
    if len(unique) > most:
        unique = [*unique[: most - 1], f"+{len(unique) - most + 1} more"]
    return "\n".join(unique)


def state_lines(state: list[StateEntry], most: int = 6) -> list[str]:
    """A component's state, one line per variable: `count: i32[] 4 B`, or `params: 4 arrays,
    4,480 scalars, 17.5 KiB, trainable`."""
    variables: dict[str, list[StateEntry]] = {}
    for row in state:
        variables.setdefault(row.name, []).append(row)
    lines = []
    for name, rows in variables.items():
        tag = ", trainable" if rows[0].trainable else ""
        size, nbytes = sum(r.size for r in rows), sum(r.nbytes for r in rows)
        if len(rows) == 1 and not rows[0].leaf:
            dims = ",".join(map(str, rows[0].shape))
            lines.append(f"{name}: {short_dtype(rows[0].dtype)}[{dims}] {bytes_text(nbytes)}{tag}")
        else:
            lines.append(f"{name}: {len(rows)} arrays, {size:,} scalars, "
                         f"{bytes_text(nbytes)}{tag}")
    if len(lines) > most:
        lines = [*lines[: most - 1], f"+{len(lines) - most + 1} more variables"]
    return lines


def cluster_label(name: str, cls: str, params: int | None, state: list[StateEntry]) -> str:
    """`policy: Policy`, then (when `params` is given) `9,155 params, state 36.0 KiB` and the
    component's own state, one variable a line."""
    label = f"{name}: {cls}"
    if params is None:
        return label
    nbytes = sum(r.nbytes for r in state)
    label += f"\n{params:,} params" + (f", own state {bytes_text(nbytes)}" if state else "")
    return "\n".join([label, *state_lines(state)])


def depth_fill(depth: int) -> str:
    """The fill colour of a cluster at nesting `depth` (the deepest colour repeats)."""
    return DEPTH_FILLS[min(depth, len(DEPTH_FILLS) - 1)]
