"""The environment engine: one C++ contract for a task (`task.h`) and one implementation of
everything around it, for every family: the threaded host pool (`pool.h`, `VectorEnv`), the
XLA FFI handlers (`ffi.h`, `InGraphEnv`), checks, auto-reset, random streams, registration
(`register`) and the build of a user's own task (`build_extension`)."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

ENGINE_DIR = os.path.dirname(os.path.abspath(__file__))


def include_dir() -> str:
    """The folder to put on the include path: `#include "engine/module.h"`."""
    return os.path.dirname(ENGINE_DIR)


def cmake_file() -> str:
    """`metagraph_env.cmake`, which defines `metagraph_add_env_module` for a user's CMake."""
    return os.path.join(ENGINE_DIR, "metagraph_env.cmake")


def compiled_module(name: str, where: str) -> ModuleType:
    """Import a family's compiled module, or an ImportError saying how to build it."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
        raise ImportError(
            f"metagraph: the compiled environments ({name}) are not built in "
            f"{os.path.dirname(os.path.abspath(where))}, a source tree: build them here with "
            f"`pip install -e .`, or run from another directory to use the installed "
            f"package") from None
