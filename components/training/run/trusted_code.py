"""A run directory is data, not code.

A run trained with a user's algorithm records what `--algo` named (`my_module:MyAlgorithm`
or `/abs/path/my_algorithm.py:MyAlgorithm`) and the SHA-256 of that file. A command that
reads the run (`evaluate`, `train --resume`, `load`, `export`) imports that file only when
the user names it again (`--algo`, the same spec) or says `--trust-code`, and only while the
file's SHA-256 is still the recorded one: a run directory received from someone else never
runs their code unasked, and a file changed since training is refused. Built-in algorithms
are part of the library and always allowed.

The same holds for an environment id that names a module (Gymnasium's `module:Env-v0`,
which imports `module` to register the environment): from a run directory it is imported
only with `--trust-code` (`check_environment_code`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from components.training.algorithm import AlgorithmBase
from components.training.registry import BUILTIN, record, resolve
from metagraph.targets import TargetError, split_target


class UntrustedCodeError(ValueError):
    """A run names code of a user's that the user has not named again, or that changed since
    the run was trained; the message says what to pass."""


def code_file(spec: str) -> Path | None:
    """The file that algorithm `spec` (MODULE:ATTRIBUTE or PATH.py:ATTRIBUTE) lives in,
    found without running it (a dotted module's parent packages are imported); None for a
    built-in algorithm or a module without a file."""
    if spec in BUILTIN:
        return None
    where, _ = split_target(spec)
    return source_file(where)


def source_file(where: str) -> Path | None:
    """The file of `where`, a `.py` path or a dotted module name, found without running it
    (a dotted module's parent packages are imported); None for a module without a file."""
    if where.endswith(".py"):
        return Path(where).resolve()
    sys.path.insert(0, str(Path.cwd()))
    try:
        found = importlib.util.find_spec(where)
    except (ImportError, ValueError):
        found = None
    finally:
        sys.path.remove(str(Path.cwd()))
    origin = getattr(found, "origin", None)
    return Path(origin).resolve() if origin and Path(origin).is_file() else None


def sha256_of(path: Path) -> str:
    """The SHA-256 (hex) of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def code_record(spec: str) -> dict[str, Any]:
    """What config.json records about algorithm `spec`'s code: its file and SHA-256 (nothing
    for a built-in algorithm)."""
    try:
        path = code_file(spec)
    except TargetError:
        return {}
    return {} if path is None else {"algo_file": str(path), "algo_sha256": sha256_of(path)}


def algorithm_of_run(run: Any, saved: dict[str, Any], algo: str | AlgorithmBase | None,
                     trust_code: bool) -> AlgorithmBase:
    """The algorithm of a run directory (`run`, its config.json `saved`): `algo` when it is an
    `AlgorithmBase` the caller made, the built-in one the run names, or the user's code the run
    names when `algo` names the same again or `trust_code`, and its file is unchanged.

    Raises:
        UntrustedCodeError: the run's code is neither named again nor trusted, or changed.
        AlgorithmError: `algo` names another algorithm than the run's, or cannot be found.
    """
    if isinstance(algo, AlgorithmBase):
        return algo
    spec = saved["algo"]
    if spec in BUILTIN:
        named = None if algo is None else record(algo)
        if named is not None and named != spec:
            raise UntrustedCodeError(f"{run.config_path}: the run was trained with {spec!r}, "
                                     f"not {algo!r}")
        return resolve(spec)
    if algo is not None and record(algo) != spec:
        raise UntrustedCodeError(f"{run.config_path}: the run was trained with {spec!r}; "
                                 f"--algo {algo!r} names another algorithm")
    if algo is None and not trust_code:
        raise UntrustedCodeError(
            f"{run.config_path} names your code {spec!r}: a run directory is data, so it is "
            f"not imported unasked; name it again (--algo {spec}) or pass --trust-code")
    refuse_if_changed(run, code_file(spec), saved.get("algo_sha256"))
    return resolve(spec)


def refuse_if_changed(run: Any, path: Path | None, recorded: str | None) -> None:
    """UntrustedCodeError when the file `path` a run names no longer has the SHA-256
    `recorded` at training (nothing to compare when either is missing)."""
    if recorded is not None and path is not None and path.is_file() \
            and sha256_of(path) != recorded:
        raise UntrustedCodeError(
            f"{path} changed since the run in {run.path} was trained (SHA-256 {recorded[:12]}… "
            f"recorded, {sha256_of(path)[:12]}… now); refused: restore the file, or train again")


def check_environment_code(run: Any, saved: dict[str, Any], trust_code: bool) -> None:
    """Refuse a run whose environment id names a module (`module:Env-v0`: Gymnasium imports
    `module` when it makes the environment) unless `trust_code`.

    Raises:
        UntrustedCodeError: the env_id names a module and the code is not trusted.
    """
    env_id = saved.get("env_id")
    module, colon, _ = env_id.partition(":") if isinstance(env_id, str) else ("", "", "")
    if colon and not trust_code:
        raise UntrustedCodeError(
            f"{run.config_path}: env_id {env_id!r} makes Gymnasium import the module "
            f"{module!r}; a run directory is data, so it is not imported unasked: pass "
            f"--trust-code if you trust that module")

