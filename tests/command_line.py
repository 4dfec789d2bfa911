"""Running the `metagraph` command in the test's process and reading a refusal, or in a
fresh process as a user types it."""

from __future__ import annotations

import os
import subprocess
import sys
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


def metagraph(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`metagraph ARGS` in a fresh process, in `cwd`, with only `cwd` added to the path."""
    env = {**os.environ, "PYTHONPATH": str(cwd), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-m", "components.training.cli", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)
    if check and done.returncode != 0:
        raise AssertionError(f"metagraph {' '.join(args)} failed ({done.returncode}):\n"
                             f"{done.stdout}\n{done.stderr}")
    return done
