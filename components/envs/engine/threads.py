"""How many C++ threads step an environment pool when the caller does not say."""

from __future__ import annotations

import os
from typing import Any

from metagraph.checks import positive_int

MAX_THREADS = 1024  # the C++ pool's own limit (engine/pool.h)


def available_cores() -> int:
    """The cores this process may run on (`os.sched_getaffinity`; `os.cpu_count` where the
    platform has no affinity)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def resolve_threads(num_threads: Any, num_envs: int | None, where: str) -> int:
    """`num_threads` checked (an int in [1, 1024]), or by default every available core, capped
    at the number of environments (`num_envs`, where known)."""
    if num_threads is None:
        cores = available_cores()
        return max(1, min(cores, num_envs) if num_envs is not None else cores)
    positive_int(num_threads, f"{where}: num_threads")
    if num_threads > MAX_THREADS:
        raise ValueError(f"{where}: num_threads must be at most {MAX_THREADS} (this process may "
                         f"run on {available_cores()} cores), got {num_threads}")
    return int(num_threads)
