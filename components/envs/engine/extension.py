"""`build_extension`: compile a user's task header (engine/task.h's contract) into a Python
module against the installed engine's headers, nanobind, NumPy and jaxlib's XLA FFI headers,
with the same CMake function that builds the library's own families (`metagraph_env.cmake`).

Needs a C++17 compiler and the extra `native` (CMake, Ninja, nanobind:
`pip install -e ".[native]"`). A build is cached by the contents of the header, of the
files it includes with `#include "..."` and of the engine, in
`~/.cache/metagraph/extensions` (or `$METAGRAPH_EXTENSION_CACHE`, or `build_dir=`), so
importing the same files again loads it; every task built there shares one CMake tree, so a
second task does not rebuild nanobind. `$METAGRAPH_EXTENSION_BUILD_TYPE` picks CMake's build
type (default `Release`; `Debug` compiles in half the time, unoptimised and with symbols for
a debugger; `Quick`, neither optimised nor with symbols, a sixth less again: the tests use
it).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from components.envs.engine import ENGINE_DIR, cmake_file, include_dir
from metagraph.install_hints import install_hint

# CMake's, and Quick: no flags of a build type (the compiler's -O0, no -g)
_BUILD_TYPES = ("Release", "Debug", "RelWithDebInfo", "MinSizeRel", "Quick")
_CPP_TYPE = re.compile(r"^(::)?[A-Za-z_]\w*(::[A-Za-z_]\w*)*(<[\w:, <>]*>)?$")
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
_loaded: dict[str, ModuleType] = {}
_bound: dict[str, str] = {}  # C++ task -> the module that binds it (nanobind: once a process)


class ExtensionBuildError(RuntimeError):
    """The build of a user's task failed: the message ends with the compiler's own words."""


class ExtensionImportError(ExtensionBuildError):
    """A user's task module built but kills the process that imports it (a static
    initialiser that throws): tried in a process of its own first, whose last words end the
    message."""


# Imports the module at argv[2] as argv[1]: what build_extension tries in a process of its own.
_PROBE = ("import importlib.util, sys; "
          "spec = importlib.util.spec_from_file_location(sys.argv[1], sys.argv[2]); "
          "spec.loader.exec_module(importlib.util.module_from_spec(spec))")


def _tool(name: str) -> str | None:
    """A build tool from this Python's environment (pip's cmake and ninja), else the PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def _digest(*paths: Path, parts: tuple[str, ...] = ()) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.read_bytes())
    for part in parts:
        h.update(part.encode())
    return h.hexdigest()[:16]


def _engine_files() -> list[Path]:
    return sorted(Path(ENGINE_DIR).glob("*.h")) + [Path(cmake_file())]


_QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"\n]+)"', re.M)


def _included_files(header: Path) -> list[Path]:
    """The files `header` includes with `#include "..."`, directly or through each other, as
    the build finds them (beside the including file, then beside `header`, then the engine's
    folder), the engine's own left out (its digest covers them): what the build of a task
    depends on besides the engine, so that editing any of them builds it again."""
    engine = set(_engine_files())
    seen: dict[Path, None] = {}
    pending = [header]
    while pending:
        current = pending.pop()
        try:
            text = current.read_text(errors="replace")
        except OSError:
            continue
        for name in _QUOTED_INCLUDE.findall(text):
            for folder in (current.parent, header.parent, Path(include_dir())):
                found = (folder / name).resolve()
                if found.is_file():
                    if found not in seen and found not in engine and found != header:
                        seen[found] = None
                        pending.append(found)
                    break
    return sorted(seen)


_UNSAFE_PATH = re.compile(r'["\\$;\x00-\x1f\x7f]')


def build_extension(header: str | os.PathLike, task: str | Sequence[str],
                    name: str | Sequence[str] | None = None, *,
                    build_dir: str | os.PathLike | None = None,
                    verbose: bool = False) -> ModuleType:
    """Build the task class `task` (its C++ name, e.g. "catch_env::Catch") of `header` into a
    module, and import it. The module holds the Python class `name` (default: the last part of
    `task`), which a spec makes with `name(env_id, kwargs)` (see `components.envs.register`).

    `task` may name several classes of the header (a list of C++ names, `name` then None or
    a list as long): one module holds them all, built in one compile (a header's boards or
    variants cost one build, not one each).

    The module is first imported in a process of its own (once per process and build, about
    0.2 s): a C++ exception thrown while it loads (a static initialiser of the task) ends
    that process, not this one.

    Raises:
        FileNotFoundError: no such header.
        ValueError: `task` or `name` is not a C++ / Python name (or the lists differ in
            length, or repeat a name); a task is bound already in this process by another
            build of the header.
        ExtensionBuildError: CMake or the compiler failed (their output is in the message),
            or CMake is missing (`pip install -e ".[native]"`).
        ExtensionImportError: the module kills the process that imports it.
    """
    header = Path(header).expanduser().resolve()
    if not header.is_file():
        raise FileNotFoundError(f"build_extension: no task header at {header}")
    if _UNSAFE_PATH.search(str(header)):  # it is written into C++ and CMake sources
        raise ValueError(f"build_extension: the header's path {str(header)!r} holds a quote, "
                         f"backslash, '$', ';' or control character, which the build's "
                         f"C++ and CMake files cannot quote; move or rename it")
    classes = _classes(task, name)
    build_type = os.environ.get("METAGRAPH_EXTENSION_BUILD_TYPE", "Release")
    if build_type not in _BUILD_TYPES:
        raise ValueError(f"build_extension: METAGRAPH_EXTENSION_BUILD_TYPE must be one of "
                         f"{list(_BUILD_TYPES)}, got {build_type!r}")
    named = tuple(f"{cpp} as {python}" for cpp, python in classes)
    digest = _digest(header, *_included_files(header), *_engine_files(),
                     parts=(*named, sys.version, build_type))
    module_name = f"_metagraph_env_{classes[0][1].lower()}_{digest}"
    if module_name in _loaded:
        return _loaded[module_name]
    # One build tree per engine, Python and build type: a second task reuses its nanobind
    # library.
    cache = Path(build_dir or os.environ.get("METAGRAPH_EXTENSION_CACHE")
                 or Path.home() / ".cache" / "metagraph" / "extensions")
    tree = cache / f"engine-{_digest(*_engine_files(), parts=(sys.version, build_type))}"
    try:
        tree.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a file where a directory must be, no permission, ...
        raise ExtensionBuildError(
            f"build_extension({header.name}): the build cache {cache} cannot hold the build "
            f"({error.strerror}: {error.filename}); give a directory you can write as "
            f"build_dir= or $METAGRAPH_EXTENSION_CACHE") from None
    for cpp, _ in classes:
        earlier = _bound.get(cpp)
        if earlier is not None:  # nanobind binds a C++ type once a process: the import fails
            raise ValueError(
                f"build_extension({header.name}): {cpp} is bound already in this process, "
                f"by another build of the header ({earlier}: another name, list of tasks, "
                f"version or copy of the header); build a header's tasks once a process, all "
                f"of them in one call")
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    built = tree / "build" / f"{module_name}{suffix}"
    if not built.exists():
        # the first build of a header takes minutes: said, so that a waiting user knows
        tasks = ", ".join(cpp for cpp, _ in classes)
        print(f"metagraph: building {header.name} ({tasks}) with the C++ compiler, once per "
              f"version of the header (1-3 minutes the first time; cached in {tree})...",
              file=sys.stderr, flush=True)
        started = time.perf_counter()
        _build(header, classes, module_name, tree, build_type, verbose)
        print(f"metagraph: built {header.name} in {time.perf_counter() - started:.0f} s",
              file=sys.stderr, flush=True)
    _try_import(header, module_name, built)
    spec = importlib.util.spec_from_file_location(module_name, built)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _loaded[module_name] = module
    _bound.update({cpp: module_name for cpp, _ in classes})
    return module


def _classes(task: str | Sequence[str],
             name: str | Sequence[str] | None) -> list[tuple[str, str]]:
    """(C++ type, Python name) of each class to build, checked: names of C++ types and
    Python identifiers, as many names as types, none twice."""
    tasks = [task] if isinstance(task, str) else list(task)
    if name is None:
        names = [t.split("::")[-1].split("<")[0] for t in tasks]
    else:
        names = [name] if isinstance(name, str) else list(name)
    if not tasks or len(names) != len(tasks):
        raise ValueError(f"build_extension: task must be a C++ type name or a non-empty list "
                         f"of them, and name None or as many names ({len(tasks)} tasks, "
                         f"{len(names)} names)")
    for cpp in tasks:
        if not isinstance(cpp, str) or not _CPP_TYPE.match(cpp):
            raise ValueError(f"build_extension: task must be a C++ type name such as "
                             f"'catch_env::Catch', got {cpp!r}")
    for python in names:
        if not isinstance(python, str) or not _IDENTIFIER.match(python):
            raise ValueError(f"build_extension: name must be a Python identifier, got "
                             f"{python!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"build_extension: each class of a module needs its own name, got "
                         f"{names}")
    return list(zip(tasks, names, strict=True))


def _try_import(header: Path, module_name: str, built: Path) -> None:
    """Import the built module in a process of its own: an ExtensionImportError when that
    process dies (std::terminate on a throwing static initialiser aborts it)."""
    done = subprocess.run([sys.executable, "-c", _PROBE, module_name, str(built)],
                          capture_output=True, text=True)
    if done.returncode == 0:
        return
    how = (f"signal {signal.Signals(-done.returncode).name}" if done.returncode < 0
           else f"exit status {done.returncode}")
    raise ExtensionImportError(
        f"build_extension({header.name}): the built module kills the process that imports it "
        f"({how}), so it is not imported here: a C++ exception thrown while it loads (a "
        f"static or global object of the task whose initialiser throws?). Its last words:\n"
        f"{done.stderr.strip()[-2000:]}")


def _known_folders() -> list[str]:
    """CMake definitions of the folders this process can name itself (jaxlib's XLA FFI
    headers, NumPy's, nanobind's CMake files), so that configuring does not start Python to
    ask (importing jax there took 3-4 of configure's 5 seconds); one it cannot name is left
    to CMake to find, and to name if it fails."""
    import jax
    import numpy

    folders = {"METAGRAPH_FFI_HEADERS": (jax.ffi.include_dir(), "xla/ffi/api/ffi.h"),
               "METAGRAPH_NUMPY_HEADERS": (numpy.get_include(), "numpy/arrayobject.h")}
    try:
        import nanobind
    except ImportError:  # CMake says it is missing
        pass
    else:
        folders["nanobind_ROOT"] = (nanobind.cmake_dir(), "nanobind-config.cmake")
    return [f"-D{name}={folder}" for name, (folder, inside) in folders.items()
            if (Path(folder) / inside).is_file()]


def _build(header: Path, classes: list[tuple[str, str]], module_name: str, tree: Path,
           build_type: str, verbose: bool) -> None:
    cmake = _tool("cmake")
    if cmake is None:
        raise ExtensionBuildError(f"build_extension needs CMake: {install_hint('native')} "
                                  f"(CMake, Ninja and nanobind)")
    source = tree / "modules" / module_name
    source.mkdir(parents=True, exist_ok=True)
    (source / "module.cpp").write_text(
        f'// Generated by components.envs.build_extension for {header.name}.\n'
        f'#include "engine/module.h"\n#include "{header}"\n\n'
        + "".join(f"METAGRAPH_TASK_HANDLERS({name}, {task})\n" for task, name in classes)
        + f"\nNB_MODULE({module_name}, m) {{\n  metagraph::engine::init_module(m);\n"
        + "".join(f"  METAGRAPH_BIND_TASK(m, {name}, {task});\n" for task, name in classes)
        + "}\n")
    (source / "CMakeLists.txt").write_text(
        f"metagraph_add_env_module({module_name} {module_name} module.cpp\n"
        f'  INCLUDE_DIRS "{include_dir()}" "{header.parent}")\n'
        f"set_target_properties({module_name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "
        '"${CMAKE_BINARY_DIR}")\n')
    (tree / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21...3.30)\n"
        "project(metagraph_extensions LANGUAGES CXX)\n"
        "find_package(Python 3.11 COMPONENTS Interpreter Development.Module REQUIRED)\n"
        "if(NOT nanobind_ROOT)\n"
        '  execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir\n'
        "    OUTPUT_STRIP_TRAILING_WHITESPACE OUTPUT_VARIABLE nanobind_ROOT)\n"
        "endif()\n"
        "find_package(nanobind CONFIG REQUIRED)\n"
        'set(METAGRAPH_ARCH "native" CACHE STRING "")\n'
        f'include("{cmake_file()}")\n'
        "# nanobind's core once, in the tree's own folder: built by the first module otherwise,\n"
        "# it moves (and is rebuilt) whenever a new module sorts first\n"
        "nanobind_build_library(nanobind-static)\n"
        'file(GLOB modules LIST_DIRECTORIES true "${CMAKE_CURRENT_SOURCE_DIR}/modules/*")\n'
        "foreach(module ${modules})\n  add_subdirectory(${module})\nendforeach()\n")
    build = tree / "build"
    configure = [cmake, "-S", str(tree), "-B", str(build), f"-DCMAKE_BUILD_TYPE={build_type}",
                 f"-DPython_EXECUTABLE={sys.executable}", *_known_folders()]
    ninja = _tool("ninja")
    if ninja is not None and not (build / "CMakeCache.txt").exists():
        configure += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
    with open(tree / "lock", "w") as lock:  # one build at a time in a tree
        fcntl.flock(lock, fcntl.LOCK_EX)
        for command in (configure, [cmake, "--build", str(build), "--target", module_name]):
            done = subprocess.run(command, capture_output=not verbose, text=True)
            if done.returncode != 0:
                output = (done.stdout or "") + (done.stderr or "")
                shutil.rmtree(source, ignore_errors=True)  # a broken module leaves no trace
                raise ExtensionBuildError(f"build_extension({header.name}): "
                                          f"`{' '.join(command)}` failed:\n{output[-6000:]}")
