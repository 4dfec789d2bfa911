"""Running the `metagraph` command as a user types it (in the test's process, or in a fresh
one) and reading a refusal."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

from components.training import cli


def refusal(capsys: pytest.CaptureFixture, argv: list[str]) -> str:
    """The one line `metagraph ARGV` prints when it refuses (exit status 2)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


USER_MODULE = Path(__file__).parent / "components" / "training" / "user_code" / \
    "user_reinforce.py"
"""A user's own algorithm (REINFORCE), which the tests copy outside the package."""


def metagraph(cwd: Path, *args: str, check: bool = True,
              fresh: bool = False) -> subprocess.CompletedProcess:
    """`metagraph ARGS` run in `cwd` with `cwd` first on the path, as a user types it: by
    default in this process (`cli.main`; the start-up of a fresh process, seconds each, was
    most of the suite's time), its standard output and error captured and its exit status
    returned; the modules it imported from `cwd` (a user's algorithm, an environment module)
    are forgotten afterwards, so the next command imports them again as a fresh process
    would. `fresh=True`: in a fresh process."""
    if fresh:
        env = {**os.environ, "PYTHONPATH": str(cwd), "JAX_PLATFORMS": "cpu"}
        done = subprocess.run([sys.executable, "-m", "components.training.cli", *args],
                              cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    else:
        done = _in_this_process(Path(cwd), list(args))
    if check and done.returncode != 0:
        raise AssertionError(f"metagraph {' '.join(args)} failed ({done.returncode}):\n"
                             f"{done.stdout}\n{done.stderr}")
    return done


def _in_this_process(cwd: Path, args: list[str]) -> subprocess.CompletedProcess:
    out, err = io.StringIO(), io.StringIO()
    before, where, path = set(sys.modules), os.getcwd(), list(sys.path)
    os.chdir(cwd)
    sys.path.insert(0, str(cwd))
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main(args)
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else (stop.code is not None)
            except Exception:  # a user's own error: its traceback, exit status 1
                traceback.print_exc()
                code = 1
    finally:
        os.chdir(where)
        sys.path[:] = path
        root = cwd.resolve()
        for name in set(sys.modules) - before:
            file = getattr(sys.modules[name], "__file__", None)
            if file is not None and root in Path(file).resolve().parents:
                del sys.modules[name]
    return subprocess.CompletedProcess(["metagraph", *args], code, out.getvalue(),
                                       err.getvalue())


SHORT_PPO = ["--algo", "ppo", "--steps", "64", "--set", "num_envs=2", "--set", "num_steps=16",
             "--set", "epochs=1", "--set", "minibatches=1", "--set", "hidden=[8]"]
"""The settings of a PPO run of a second or two."""


def evaluated_mean(cwd: Path, run: Path, episodes: int) -> tuple[float, str]:
    """`metagraph evaluate RUN --episodes N --json`'s mean return, and its whole output."""
    out = metagraph(cwd, "evaluate", str(run), "--episodes", str(episodes), "--json").stdout
    return float(json.loads(out)["return_mean"]), out
