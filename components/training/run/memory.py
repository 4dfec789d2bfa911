"""`check_state_fits`: a graph's state, estimated from its spaces after the build and before
anything is allocated, refused in one line when it cannot fit in this machine's memory (a
`--set buffer_size=99999999999999` would otherwise fail deep inside an allocation, or be
killed for memory without a word)."""

from __future__ import annotations

import os

from metagraph.graph import MetaGraph


class StateTooLargeError(ValueError):
    """The state a graph would allocate is larger than the memory available."""


def available_bytes() -> int:
    """The memory this process can still use: Linux's MemAvailable, else the physical
    memory."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def size_text(nbytes: float) -> str:
    """`nbytes` in the largest binary unit below it: "191.0 GiB"."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:.1f} {unit}" if unit != "B" else f"{int(nbytes)} B"
        nbytes /= 1024
    raise AssertionError("unreachable")


def check_state_fits(graph: MetaGraph, name: str, copies: int = 1,
                     available: int | None = None) -> int:
    """The bytes of `graph`'s state times `copies` (seeds), or StateTooLargeError naming
    `name`, the size, the largest array (its component, variable and shape) and the memory
    available."""
    need = graph.state_bytes() * copies
    have = available_bytes() if available is None else available
    if need <= have:
        return need
    largest = max(graph.state_table(), key=lambda entry: entry.nbytes)
    shape = ",".join(str(d) for d in largest.shape)
    raise StateTooLargeError(
        f"{name}: the state would take {size_text(need)}, more than the {size_text(have)} of "
        f"memory available; its largest array is {largest.component} "
        f"{largest.full_name} {largest.dtype}[{shape}] ({size_text(largest.nbytes)}): lower "
        f"the config value that sizes it")
