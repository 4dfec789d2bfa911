"""Connecting to Ray: a local instance with no setup, or an existing cluster by address."""

from __future__ import annotations

import os
from typing import Any

from metagraph.errors import MissingExtraError
from metagraph.install_hints import install_hint


def ray_module() -> Any:
    """The `ray` module.

    Raises:
        ImportError: Ray is not installed (it names the `ray` extra).
    """
    try:
        import ray
    except ImportError:
        raise MissingExtraError(f"the Ray backend needs Ray: {install_hint('ray')}") from None
    return ray


def connect(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Make sure Ray is initialised: join the cluster at `address` ("auto": the one this
    machine belongs to), or start a local instance of `num_cpus` CPUs (default: this machine's,
    at least 2). Returns whether this call started it (and so should `ray.shutdown()` it)."""
    ray = ray_module()
    if ray.is_initialized():
        return False
    if address is not None:
        ray.init(address=address)
    else:
        ray.init(num_cpus=num_cpus or max(2, os.cpu_count() or 1), include_dashboard=False)
    return True
