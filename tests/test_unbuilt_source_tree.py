"""A source checkout whose native module was never built (say, the repository root after a
non-editable install) says so in one line, naming what to run, instead of a circular-import
message."""

import shutil
import site
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_importing_an_unbuilt_source_tree_says_what_to_run(tmp_path):
    for package in ("metagraph", "backends", "components"):
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    # -S: no site hooks, so the editable install's redirecting importer is not in the way
    paths = [str(tmp_path), *site.getsitepackages()]
    code = f"import sys; sys.path[:0] = {paths!r}; import components.envs"
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: metagraph: the compiled environments")
    assert "pip install -e ." in last and "circular" not in done.stderr
