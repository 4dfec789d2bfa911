"""Threads: several Python threads stepping one host pool end as some serial order would; a
worker thread that cannot be started is a RuntimeError, never a crash or a hang."""

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import components.envs as envs


def constant_actions(env_id, num_envs, value):
    """One action for every environment and step: any serial order of the calls then gives
    the same final state, whatever order the threads ran in."""
    if envs.spec(env_id).discrete:
        return np.full(num_envs, value % envs.spec(env_id).action_space.n, np.int32)
    return np.full((num_envs, 1), value / 3.0 - 1.0, np.float32)


@settings(max_examples=25, deadline=None)
@given(env_id=st.sampled_from(envs.ENV_IDS), num_threads=st.sampled_from([1, 2]),
       num_envs=st.sampled_from([1, 5, 1100]), callers=st.integers(2, 4),
       steps=st.integers(1, 40), action=st.integers(0, 6))
@example(env_id="CartPole-v1", num_threads=2, num_envs=2048, callers=4, steps=40, action=1)
def test_threads_stepping_one_pool_end_as_a_serial_order(env_id, num_threads, num_envs,
                                                          callers, steps, action):
    actions = constant_actions(env_id, num_envs, action)
    pool = envs.make(env_id, num_envs, seed=3, num_threads=num_threads)
    start = threading.Barrier(callers)

    def caller(index):
        start.wait()
        for _ in range(steps):
            obs, *_ = pool.step(actions)
            assert obs.shape[0] == num_envs
            if index == 0:  # reads interleave with the steps of the others
                assert np.isfinite(pool.physical_state()).all()
                pool.elapsed_steps()

    with ThreadPoolExecutor(callers) as executor:
        for result in [executor.submit(caller, i) for i in range(callers)]:
            result.result()
    serial = envs.make(env_id, num_envs, seed=3)
    for _ in range(callers * steps):
        serial.step(actions)
    np.testing.assert_array_equal(pool.physical_state(), serial.physical_state())
    np.testing.assert_array_equal(pool.elapsed_steps(), serial.elapsed_steps())


# Run in a child process: the address-space limit leaves room for one 8 MiB thread stack, so
# the first worker starts and the second cannot (what a pid limit or `ulimit -u` also does).
WORKER_CANNOT_START = """
import resource, sys
import numpy as np
import components.envs as envs
if sys.argv[1] == "in-graph":
    import jax, jax.numpy as jnp
    env = envs.make_functional("CartPole-v1", num_threads=4)
    state = jnp.asarray(env.state_from_physical(np.zeros((2048, 4))))
    actions = jnp.zeros(2048, jnp.int32)
    step = jax.jit(env.step).lower(state, actions).compile()
    run = lambda: jax.block_until_ready(step(state, actions))
else:
    run = lambda: envs.make("CartPole-v1", 4, num_threads=4)
size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (size + 12 * 2**20, hard))
try:
    run()
    print("no error")
except RuntimeError as error:
    print("RuntimeError:", error)
resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
print("threads after:", envs.make("CartPole-v1", 4, num_threads=4).num_threads)
"""


@pytest.mark.parametrize("door", ["host", "in-graph"])
def test_a_worker_that_cannot_start_is_a_runtime_error(door):
    child = subprocess.run([sys.executable, "-c", WORKER_CANNOT_START, door], timeout=120,
                           capture_output=True, text=True)  # was: hung forever
    assert child.returncode == 0, child.stderr[-2000:]
    assert "RuntimeError:" in child.stdout and "could not start worker thread 2 of 3 (" in \
        child.stdout and "use fewer threads or raise the limit" in child.stdout, child.stdout
    assert child.stdout.strip().endswith("threads after: 4")  # the process goes on


def test_the_worker_threads_run_every_item_once_whatever_the_sizes_of_consecutive_jobs(
        tmp_path):
    """Programs of several batch sizes share the in-graph door's worker threads: a job of a few
    parts followed by one of many. A worker with no part in the first once read the second's
    part count and ran a part twice or waited forever (3 runs in 6 of this program hung)."""
    from components.envs.engine import include_dir

    source = os.path.join(os.path.dirname(__file__), "cpp", "thread_pool_jobs.cpp")
    binary = str(tmp_path / "thread_pool_jobs")
    subprocess.run(["g++", "-std=c++17", "-O2", "-pthread", f"-I{include_dir()}", source, "-o",
                    binary], check=True)
    done = subprocess.run([binary, "6", "3000"], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stdout + done.stderr
