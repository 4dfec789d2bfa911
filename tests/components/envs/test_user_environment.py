"""A user's own environment: examples/envs/catch (bsuite's Catch as one C++ header and a short
Python file, outside the package) is built with `build_extension` and run from fresh
processes: step by step equal to the `bsuite` package's own Catch, conforming on every door,
and docs/your-own-environment.md runs as written."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import components.envs as envs

ROOT = Path(__file__).resolve().parents[3]
CATCH = ROOT / "examples" / "envs" / "catch"

AGAINST_BSUITE = """
import sys
import numpy as np
from bsuite.environments.catch import Catch
sys.path.insert(0, sys.argv[1])
import catch_env  # noqa: F401  (builds and registers Catch-v0)
import components.envs as envs

rng = np.random.default_rng(0)
for rows, columns in ((10, 5), (6, 3)):
    ours = envs.make("Catch-v0", 1, seed=0, rows=rows, columns=columns)
    theirs = Catch(rows=rows, columns=columns, seed=0)
    for episode in range(40):
        obs, _ = ours.reset()
        theirs.reset()
        ball_x, ball_y, paddle_x = ours.physical_state()[0]  # the same start in bsuite
        theirs._ball_x, theirs._ball_y, theirs._paddle_x = int(ball_x), int(ball_y), int(paddle_x)
        assert np.array_equal(obs[0].reshape(rows, columns), theirs._observation())
        while True:
            action = int(rng.integers(0, 3))
            obs, reward, terminated, truncated, info = ours.step(np.array([action], np.int32))
            step = theirs.step(action)
            final = info["final_obs"][0] if terminated[0] else obs[0]
            assert np.array_equal(final.reshape(rows, columns), step.observation)
            assert reward[0] == step.reward and terminated[0] == step.last()
            assert not truncated[0]
            if step.last():
                break
print("ok")
"""


@pytest.fixture(scope="module")
def cache():
    """The fresh processes build in the session's extension tree (conftest.py)."""
    return {**os.environ, "JAX_PLATFORMS": "cpu"}


def run(code, env, cwd=ROOT):
    done = subprocess.run([sys.executable, "-c", code, str(CATCH)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_catch_equals_bsuites_catch_step_by_step(cache):
    assert run(AGAINST_BSUITE, cache).strip().endswith("ok")


def test_catch_passes_the_conformance_check_in_a_fresh_process(cache):
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import catch_env; "
            "import components.envs as envs; print(envs.check('Catch-v0'))")
    assert "FAILED" not in run(code, cache)


def test_your_own_environment_page_runs_as_written(cache):
    page = (ROOT / "docs" / "your-own-environment.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    assert len(blocks) == 5
    run("\n".join(blocks), cache)


def test_bad_arguments_to_build_extension_are_named(monkeypatch):
    monkeypatch.setenv("METAGRAPH_EXTENSION_BUILD_TYPE", "Fastest")
    with pytest.raises(ValueError, match="METAGRAPH_EXTENSION_BUILD_TYPE must be one of "
                                         "\\['Release', 'Debug'"):
        envs.build_extension(CATCH / "catch.h", "catch_env::Catch")
    monkeypatch.undo()
    with pytest.raises(FileNotFoundError, match="no task header"):
        envs.build_extension(CATCH / "missing.h", "catch_env::Catch")
    with pytest.raises(ValueError, match="task must be a C\\+\\+ type name"):
        envs.build_extension(CATCH / "catch.h", "catch_env::Catch; evil()")
    with pytest.raises(ValueError, match="name must be a Python identifier"):
        envs.build_extension(CATCH / "catch.h", "catch_env::Catch", "not-a-name")

    with pytest.raises(ValueError, match="task must be a C\\+\\+ type name"):
        envs.build_extension(CATCH / "catch.h", ["catch_env::Catch", "evil()"])
    with pytest.raises(ValueError, match="2 tasks, 1 names"):
        envs.build_extension(CATCH / "catch.h", ["a::Catch", "b::Catch"], ["Catch"])
    with pytest.raises(ValueError, match="needs its own name, got \\['Catch', 'Catch'\\]"):
        envs.build_extension(CATCH / "catch.h", ["a::Catch", "b::Catch"])
    with pytest.raises(ValueError, match="a non-empty list"):
        envs.build_extension(CATCH / "catch.h", [])


def test_a_task_built_again_under_another_name_is_refused_before_building(tmp_path):
    """A C++ type is bound once a process (nanobind): a second build of it, which would fail
    to import with nanobind's own words, is refused naming the first, whichever copy of the
    header bound it; the same build again, from any copy, is the module loaded."""
    copy = tmp_path / "catch.h"  # the same header elsewhere (a user's folder, a test's copy)
    copy.write_text((CATCH / "catch.h").read_text())
    first = envs.build_extension(copy, "catch_env::Catch")
    assert envs.build_extension(CATCH / "catch.h", "catch_env::Catch") is first
    with pytest.raises(ValueError, match="build_extension\\(catch.h\\): catch_env::Catch is "
                                         "bound already in this process, by another build"):
        envs.build_extension(CATCH / "catch.h", "catch_env::Catch", "Again")
    assert envs.build_extension(CATCH / "catch.h", "catch_env::Catch") is first


def test_a_header_path_that_cannot_be_quoted_is_refused_before_any_build(tmp_path):
    planted = tmp_path / 'x")\nexecute_process(COMMAND touch planted)\n#'
    planted.mkdir()
    (planted / "catch.h").write_text((CATCH / "catch.h").read_text())
    with pytest.raises(ValueError, match="holds a quote, backslash"):
        envs.build_extension(planted / "catch.h", "catch_env::Catch",
                             build_dir=tmp_path / "build")
    assert not (tmp_path / "build").exists()


def test_an_included_files_edit_changes_the_build_it_loads(tmp_path):
    from components.envs.engine.extension import _included_files

    (tmp_path / "rules").mkdir()
    (tmp_path / "task.h").write_text('#include "rules/reward.h"\n#include "engine/task.h"\n')
    (tmp_path / "rules" / "reward.h").write_text('#include "scale.h"\n')
    (tmp_path / "rules" / "scale.h").write_text("constexpr double kScale = 1.0;\n")
    header = tmp_path / "task.h"
    assert _included_files(header) == [tmp_path / "rules" / "reward.h",
                                       tmp_path / "rules" / "scale.h"]  # not the engine's
    from components.envs.engine import extension

    def key():
        return extension._digest(header, *_included_files(header))

    before = key()
    (tmp_path / "rules" / "scale.h").write_text("constexpr double kScale = 2.0;\n")
    assert key() != before


@pytest.mark.slow
def test_a_header_that_does_not_compile_is_a_build_error_with_the_compilers_words(tmp_path):
    header = tmp_path / "broken.h"
    header.write_text("struct Broken { this is not C++ };\n")
    with pytest.raises(envs.ExtensionBuildError, match="broken.h"):
        envs.build_extension(header, "Broken", build_dir=tmp_path / "build")


def test_a_first_build_says_it_is_building(tmp_path, monkeypatch, capsys):
    """Issue 55: the first `--env-module` run compiled for minutes and printed nothing."""
    from components.envs.engine import extension

    header = tmp_path / "task.h"
    header.write_text('#include "engine/task.h"\n')

    def compiling(*args, **kwargs):
        raise RuntimeError("the compiler ran")

    monkeypatch.setattr(extension, "_build", compiling)
    with pytest.raises(RuntimeError, match="the compiler ran"):
        envs.build_extension(header, "my::Task", build_dir=tmp_path / "build")
    said = capsys.readouterr().err
    assert "metagraph: building task.h (my::Task) with the C++ compiler" in said
    assert "1-3 minutes the first time" in said
