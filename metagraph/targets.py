"""Finding a Python object named on a command line: `MODULE:ATTRIBUTE` (a dotted module
path, e.g. `mypackage.agents:MyAlgorithm`) or `PATH.py:ATTRIBUTE` (a file, e.g.
`examples/draw_graphs.py:agent_graph`). ATTRIBUTE may be dotted (`Class.method`).

A module path is imported with the current directory first on `sys.path` for the import only,
so a module in the current directory is found, but nothing there shadows a library imported
later. A file is imported under its own name (its stem), its directory first on `sys.path`
for the import only."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class TargetError(ValueError):
    """A `MODULE:ATTRIBUTE` or `PATH.py:ATTRIBUTE` that cannot be loaded; the message is one
    line saying what was expected."""


def split_target(target: str) -> tuple[str, str]:
    """(module or file, attribute) of a target; TargetError when it has not that form."""
    where, sep, attr = target.rpartition(":")
    if not sep or not where or not attr or not all(p.isidentifier() for p in attr.split(".")):
        raise TargetError(f"expected MODULE:ATTRIBUTE or PATH.py:ATTRIBUTE, got {target!r}")
    return where, attr


def load_target(target: str) -> Any:
    """The object named by `target` (see the module docstring); TargetError when the module
    or file cannot be imported or has no such attribute. An error raised while the user's
    module runs keeps its type."""
    where, attr = split_target(target)
    obj: Any = import_source(where)
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TargetError(f"{where} has no attribute {attr!r}") from None
    return obj


def import_source(where: str) -> Any:
    """The module `where` names, a dotted module path or a `.py` file, imported as the
    module docstring says; TargetError when it cannot be found."""
    return _import_file(where) if where.endswith(".py") else _import_module(where)


def canonical_target(target: str) -> str:
    """`target` with a file path made absolute, so that it loads again from any directory
    (a run directory records the algorithm it was trained with this way)."""
    where, attr = split_target(target)
    if where.endswith(".py"):
        return f"{Path(where).resolve()}:{attr}"
    return target


def _import_module(name: str) -> Any:
    if not all(part.isidentifier() for part in name.split(".")):
        raise TargetError(f"{name!r} is neither a dotted module name nor a path ending in .py")
    with _first_on_path(str(Path.cwd())):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name is None or not name.startswith(error.name):
                raise  # the module exists; something it imports does not
            raise TargetError(f"cannot import module {name!r} (not found from {Path.cwd()} "
                              f"or sys.path; is it installed or on PYTHONPATH?)") from None


def _import_file(path_text: str) -> Any:
    path = Path(path_text).resolve()
    if not path.is_file():
        raise TargetError(f"no such file: {path_text}")
    name = path.stem
    loaded = sys.modules.get(name)
    if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() == path:
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import {path_text} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look their module up by name
    try:
        with _first_on_path(str(path.parent)):
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


@contextlib.contextmanager
def _first_on_path(directory: str) -> Iterator[None]:
    """`directory` first on `sys.path` inside the `with` block only."""
    sys.path.insert(0, directory)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(directory)
