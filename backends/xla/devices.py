"""Devices named by the user: `backends.xla.lower(graph, device="cpu")`, `metagraph train
--device gpu`. A name is a JAX platform (`cpu`, `gpu`, `cuda`, `rocm`, `tpu`), optionally
with the index of one of its devices (`gpu:1`), or a `jax.Device` itself; None is JAX's
default device."""

from __future__ import annotations

from typing import Any

import jax


def resolve_device(spec: Any, where: str = "device") -> jax.Device | None:
    """The `jax.Device` that `spec` names (None for None); ValueError naming what this process
    has for a platform it lacks, an index out of range or a malformed name."""
    if spec is None or isinstance(spec, jax.Device):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"{where}: expected a jax.Device or a name such as 'cpu' or 'gpu:0', "
                        f"got {type(spec).__name__}")
    platform, _, index_text = spec.strip().lower().partition(":")
    # ASCII digits only: "²", "١" and full-width digits are digits to isdigit(), not indices
    if not platform or (index_text and not (index_text.isascii() and index_text.isdigit())):
        raise ValueError(f"{where}: {spec!r} is not a device name (PLATFORM or PLATFORM:INDEX, "
                         f"e.g. 'cpu', 'gpu', 'gpu:1')")
    try:
        devices = jax.devices(platform)
    except RuntimeError:
        have = sorted({d.platform for d in jax.devices()} | {"cpu"})
        raise ValueError(f"{where}: no {platform!r} device in this process (JAX has "
                         f"{', '.join(have)}; a GPU needs JAX's CUDA plugin: "
                         f"pip install 'jax[cuda13]')") from None
    index = int(index_text or 0)
    if index >= len(devices):
        raise ValueError(f"{where}: {spec!r}: this process has {len(devices)} {platform} "
                         f"device(s), numbered from 0")
    return devices[index]
