"""A user's task that is broken (tasks/flawed.h: one walk, one flaw per keyword argument):
the conformance check fails each broken one naming the case and passes the correct one; a
task whose step throws a C++ exception or reports `out.error` fails the step with a Python
exception naming the environment, on the host pool (one thread and two) and in-graph, and
the process lives on; a task of impossible sizes (a negative state size) is refused when it
is made; a module whose static initialiser throws is refused when built, not imported
(issue 35)."""

import os
import subprocess
import sys
from pathlib import Path

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import components.envs as envs

SPACE_CASE = "finite rewards, observations inside the observation space"


@pytest.fixture(scope="module")
def walk():
    module = envs.build_extension(Path(__file__).parent / "tasks" / "flawed.h", "flawed::Walk")

    def make_spec(env_id, kwargs):
        task = module.Walk(env_id, kwargs)
        return envs.EnvSpec(env_id, gymnasium.spaces.Box(-10, 10, (2,), np.float32),
                            gymnasium.spaces.Discrete(2), int(task.max_steps), task)

    envs.register("FlawedWalk-v0", make_spec)
    return "FlawedWalk-v0"


def test_the_correct_walk_conforms(walk):
    assert set(envs.check(walk, flaw="none").values()) == {"ok"}


@pytest.mark.parametrize(("flaw", "case", "why"), [
    ("nan_reward", SPACE_CASE, "step 0: environment 0's reward is nan"),
    ("nan_obs", SPACE_CASE, "step 0: environment 0's observation has nan at index 1"),
    ("outside", SPACE_CASE, "step 0: environment 0's observation 100.0 at index 1 is outside "
                            "the declared observation space [-10.0, 10.0]"),
    # (which environments differ depends on which parts each thread claimed)
    ("thread", "results independent of the thread count",
     "with 2 threads, step 0's reward of environment "),
])
def test_the_check_fails_a_broken_task_naming_the_case(walk, flaw, case, why):
    with pytest.raises(envs.ConformanceError) as error:
        envs.check(walk, flaw=flaw)
    lines = [line for line in str(error.value).splitlines() if line.startswith(f"- {case}:")]
    assert lines and why in lines[0], str(error.value)


def test_nan_rewards_are_one_failure_not_thread_dependence_too(walk):
    with pytest.raises(envs.ConformanceError) as error:
        envs.check(walk, flaw="nan_reward")
    failed = [line for line in str(error.value).splitlines() if line.startswith("- ")]
    assert not any("thread count" in line for line in failed), str(error.value)


def right(n):
    return np.ones(n, np.int32)


@pytest.mark.parametrize("flaw", ["throw", "error"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_failing_step_is_an_exception_on_the_host_pool(walk, flaw, threads):
    n = 1200  # two threads' parts
    pool = envs.make(walk, n, seed=0, num_threads=threads, flaw=flaw)
    pool.reset(seed=0)
    pool.step(right(n))
    pool.step(right(n))  # x = 2
    error_type = RuntimeError
    words = "the walk went too far right" if flaw == "throw" else \
        "the walk failed with error 7"
    with pytest.raises(error_type, match=rf"^FlawedWalk-v0: (the task threw an exception in "
                                         rf"the step of environments \d+\.\.\d+: |"
                                         rf"environment 0 ){words}$"):
        pool.step(right(n))  # x = 3 everywhere
    pool.step(np.zeros(n, np.int32))  # the pool still steps: left is fine


@pytest.mark.parametrize("flaw", ["throw", "error"])
def test_a_failing_step_is_an_exception_in_graph(walk, flaw):
    door = envs.make_functional(walk, flaw=flaw)
    state, _ = door.reset(jax.random.PRNGKey(0), 4)
    step = jax.jit(door.step)
    for _ in range(2):
        state = step(state, jnp.ones(4, jnp.int32)).state
    words = "the walk went too far right" if flaw == "throw" else \
        "the walk failed with error 7"
    with pytest.raises(Exception, match=words):
        jax.block_until_ready(step(state, jnp.ones(4, jnp.int32)))


@pytest.mark.parametrize(("flaw", "words"), [
    ("no_obs", r"the task's obs_dim\(\) is 0, expected one in \[1, 16777216\]"),
    ("no_actions", r"the task's num_actions\(\) is 0"),
    ("negative_steps", r"the task's max_steps\(\) is -3"),
])
def test_a_task_of_impossible_sizes_is_refused_when_it_is_made(walk, flaw, words):
    with pytest.raises(ValueError, match=rf"^FlawedWalk-v0: {words}"):
        envs.make(walk, 2, flaw=flaw)


@pytest.mark.slow  # a second task module to build (20-30 s): kept out of the quick suite
def test_a_negative_state_size_is_refused_when_the_task_is_made():
    module = envs.build_extension(Path(__file__).parent / "tasks" / "flawed.h", "flawed::Sized")
    with pytest.raises(ValueError, match=r"^Sized-v0: the task's state size \(kStateWords or "
                                         r"state_words\(\)\) is -5, expected one in "
                                         r"\[1, 16777216\]"):
        module.Sized("Sized-v0", {"broken": "state"})
    with pytest.raises(ValueError, match=r"^Sized-v0: the task's obs_shape\(\) has 2 "
                                         r"dimensions whose product is 6, expected a product "
                                         r"of obs_dim\(\) = 1"):
        module.Sized("Sized-v0", {"broken": "shape"})
    task = module.Sized("Sized-v0", {"broken": "none"})
    assert task.state_words == 1 and task.obs_shape == (1, 1)


def test_a_task_whose_static_initialiser_throws_is_refused_and_the_process_lives(walk):
    """The same module, its static initialiser throwing (FLAWED_THROW_ON_IMPORT): importing
    it would abort the process (std::terminate); build_extension tries it in a process of its
    own and raises ExtensionImportError with the exception's words."""
    script = ("import components.envs as envs, sys\n"
              "try:\n"
              f"    envs.build_extension({str(Path(__file__).parent / 'tasks' / 'flawed.h')!r}, "
              "'flawed::Walk')\n"
              "except envs.ExtensionImportError as error:\n"
              "    print(error)\n"
              "    sys.exit(3)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "FLAWED_THROW_ON_IMPORT": "1"})
    assert done.returncode == 3, done.stderr[-2000:]
    assert "build_extension(flawed.h): the built module kills the process that imports it " \
           "(signal SIGABRT)" in done.stdout
    assert "flawed: the task's table could not be read" in done.stdout


def test_a_build_cache_that_is_a_file_is_named(tmp_path):
    cache = tmp_path / "cache"
    cache.write_text("not a directory")
    with pytest.raises(envs.ExtensionBuildError, match=f"build_extension\\(flawed.h\\): the "
                                                       f"build cache {cache} cannot hold the "
                                                       f"build \\(Not a directory"):
        envs.build_extension(Path(__file__).parent / "tasks" / "flawed.h", "flawed::Walk",
                             name="CacheProbe", build_dir=cache)


FLAWED_MODULE = f'''
from pathlib import Path

import gymnasium
import numpy as np

import components.envs as envs

module = envs.build_extension(Path({str(Path(__file__).parent / "tasks" / "flawed.h")!r}),
                              "flawed::Walk")


def make_spec(env_id, kwargs):
    task = module.Walk(env_id, kwargs)
    return envs.EnvSpec(env_id, gymnasium.spaces.Box(-10, 10, (2,), np.float32),
                        gymnasium.spaces.Discrete(2), int(task.max_steps), task)


envs.register("FlawedWalk-v0", make_spec)
'''


def test_training_on_a_task_whose_step_throws_ends_in_one_line_naming_it(walk, tmp_path):
    """The in-graph door returns the task's exception as an XLA error (labelled
    RESOURCE_EXHAUSTED, 63 lines of JAX's traceback): `train` says the environment failed,
    in the task's words, and what is on disk."""
    from command_line import metagraph

    (tmp_path / "flawed_env.py").write_text(FLAWED_MODULE)
    done = metagraph(tmp_path, "train", "FlawedWalk-v0", "--env-module", "flawed_env.py",
                     "--algo", "ppo", "--env-kwargs", 'flaw="throw"', "--out", "run",
                     "--steps", "20000", "--set", "num_envs=2", check=False)
    assert done.returncode == 1
    err = [line for line in done.stderr.splitlines() if "step/s" not in line and line.strip()]
    assert err == ["metagraph train: the environment failed: FlawedWalk-v0 step: the walk "
                   "went too far right; no checkpoint was written yet"], done.stderr
