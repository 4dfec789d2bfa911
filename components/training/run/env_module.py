"""A user's own environment from the command line: `metagraph train ENV --env-module SOURCE`,
SOURCE a dotted module path or a `.py` file that registers ENV when it is imported
(`components.envs.register`, e.g. after `build_extension` of the task's header; see
docs/your-own-environment.md).

The run records SOURCE (a file as an absolute path) and the SHA-256 of its file. A run
directory is data (`trusted_code.py`): a command that reads the run (`evaluate`, `export`,
`play`, `train --resume`, `load`) imports SOURCE again only when it is named again
(`--env-module SOURCE`), with `--trust-code`, or when this user named that very file (its
path and SHA-256) before (`named_modules.py`), and only while its file is unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from components.envs.engine.catalogue import env_ids, resolved_id
from components.training.run.named_modules import named_before, remember
from components.training.run.trusted_code import (
    UntrustedCodeError,
    refuse_if_changed,
    sha256_of,
    source_file,
)
from metagraph.targets import import_source


def canonical_source(source: str) -> str:
    """`source` with a file path made absolute (it imports again from any directory)."""
    return str(Path(source).resolve()) if source.endswith(".py") else source


def import_env_module(source: str) -> None:
    """Import `source` (a module path or a `.py` file), which registers the environment;
    TargetError (a ValueError) when it cannot be found; its own errors keep their type."""
    import_source(source)


def env_module_record(source: str | None) -> dict[str, Any]:
    """What config.json records of `--env-module SOURCE`: the source and its file's SHA-256
    (nothing without one)."""
    if source is None:
        return {}
    path = source_file(source)
    digest = sha256_of(path) if path is not None else None
    if digest is not None:  # the user named it: a run recording it opens without asking
        remember(canonical_source(source), digest)
    return {"env_module": canonical_source(source),
            **({"env_module_sha256": digest} if digest is not None else {})}


def env_module_of_run(run: Any, saved: dict[str, Any], named: str | None,
                      trust_code: bool) -> None:
    """Import the environment module a run recorded, when `named` names it again or
    `trust_code`, and its file is the one the run was trained with.

    Raises:
        UntrustedCodeError: the run names a module that is neither named again nor trusted,
            `named` names another one, or its file changed since training.
    """
    recorded = saved.get("env_module")
    if recorded is None:
        if named is not None:
            import_env_module(named)  # a module for a run that needed none: harmless
        return
    if named is not None and canonical_source(named) != recorded:
        raise UntrustedCodeError(f"{run.config_path}: the run was trained with --env-module "
                                 f"{recorded}, not {named}")
    sha256, env_id = saved.get("env_module_sha256"), saved.get("env_id")
    if named is None and not trust_code and isinstance(env_id, str) \
            and resolved_id(env_id) in env_ids():
        return  # registered in this process already: the user imported the module themselves
    # the very file this user named before (and unchanged, below) is theirs to import
    if named is None and not trust_code and not named_before(recorded, sha256):
        raise UntrustedCodeError(
            f"{run.config_path} names your environment module {recorded!r}: a run directory "
            f"is data, so it is not imported unasked; name it again (--env-module "
            f"{recorded}; from Python, load(run, env_module=...)) or pass --trust-code "
            f"(trust_code=True)")
    refuse_if_changed(run, source_file(recorded), sha256)
    import_env_module(recorded)
