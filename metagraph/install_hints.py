"""`install_hint(extra)`: the command that brings an optional extra, as this installation
takes it, run in the clone it was installed from (the project is not on a package index):
with `-e` for an editable install, without for one installed as a wheel (`pip install .`)."""

from __future__ import annotations

import functools
import json
from importlib import metadata

DISTRIBUTION = "metagraph-rl"
"""The name the package is installed under (pyproject.toml's `name`)."""


@functools.lru_cache(maxsize=1)
def editable() -> bool:
    """Whether this installation is an editable one (pip's direct_url.json says so)."""
    try:
        record = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:  # run from a source tree without installing it
        return True
    try:
        return bool(json.loads(record or "{}").get("dir_info", {}).get("editable", False))
    except (ValueError, AttributeError):
        return False


def install_hint(extra: str) -> str:
    """The pip command that installs the optional `extra` ("games", "video", "ray", ...)."""
    if editable():
        return f'pip install -e ".[{extra}]"'
    return f'pip install ".[{extra}]" (in the clone the package was installed from)'
