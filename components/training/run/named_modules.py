"""The environment modules this user has named (`--env-module`), by file and SHA-256: a run
directory that records one of them imports it again without `--env-module` or `--trust-code`
(the user named that very file before). A module a run names that this user never named (a
received run) is still imported only when asked, and a file changed since is refused.

The record is one JSON file, `~/.cache/metagraph/named_env_modules.json`
(`METAGRAPH_NAMED_MODULES` overrides the path), written atomically; an unreadable one counts
as empty."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

LIMIT = 1000
"""The most (source, SHA-256) pairs kept; the oldest go first."""


def record_path() -> Path:
    """Where the named modules are recorded."""
    return Path(os.environ.get("METAGRAPH_NAMED_MODULES")
                or Path.home() / ".cache" / "metagraph" / "named_env_modules.json")


def _read() -> list[list[str]]:
    try:
        pairs = json.loads(record_path().read_text())
    except (OSError, ValueError):
        return []
    if not isinstance(pairs, list):
        return []
    return [p for p in pairs if isinstance(p, list) and len(p) == 2
            and all(isinstance(x, str) for x in p)]


def remember(source: str, sha256: str) -> None:
    """Record that the user named `source` (a canonical source) whose file has `sha256`. A
    record that cannot be written is skipped: the user is then asked again next time."""
    pairs = [p for p in _read() if p != [source, sha256]] + [[source, sha256]]
    path = record_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False,
                                         suffix=".tmp") as file:
            json.dump(pairs[-LIMIT:], file)
        os.replace(file.name, path)
    except OSError:
        return


def named_before(source: str, sha256: str | None) -> bool:
    """Whether the user named `source` while its file had `sha256`."""
    return sha256 is not None and [source, sha256] in _read()
