"""The asynchronous host pool (EnvPool's `async_reset` / `recv` / `send`): every environment's
trajectory equals the synchronous pool's under the same actions whatever order the groups
come back in, the groups really step while the caller works, and misuse is refused by name."""

import threading
import time

import numpy as np
import pytest

from components import envs

N, B = 8, 4


def policy(obs, env_ids, t):
    """Actions that depend on the observation, the environment and the time: any mix-up of
    groups or environments shows in the trajectories."""
    return ((obs[:, 2] > 0).astype(np.int32) + env_ids + t) % 2


def synchronous(env_id, steps, seed):
    env = envs.make(env_id, N, seed=seed, num_threads=1)
    obs, _ = env.reset(seed=seed)
    ids = np.arange(N)
    rows = [(obs.copy(), np.zeros(N, np.float32), np.zeros(N, bool), np.zeros(N, bool))]
    for t in range(steps):
        obs, reward, terminated, truncated, _ = env.step(policy(obs, ids, t).astype(np.int32))
        rows.append((obs.copy(), reward.copy(), terminated.copy(), truncated.copy()))
    env.close()
    return rows


def asynchronous(env_id, steps, seed, delay=None):
    """Each environment's rows as the asynchronous pool gives them; `delay(g)` seconds of
    'policy' after receiving group g (the other group steps meanwhile)."""
    env = envs.make(env_id, N, seed=seed, num_threads=2, batch_size=B)
    env.async_reset(seed=seed)
    rows = {i: [] for i in range(N)}
    order = []
    t_of = np.zeros(N, int)
    while min(len(r) for r in rows.values()) <= steps:
        obs, reward, terminated, truncated, info = env.recv()
        ids = info["env_id"]
        order.append(int(ids[0]) // B)
        for k, i in enumerate(ids):
            rows[i].append((obs[k].copy(), reward[k], terminated[k], truncated[k]))
        if delay is not None:
            time.sleep(delay(int(ids[0]) // B))
        actions = policy(obs, ids, t_of[ids[0]])
        t_of[ids] += 1
        env.send(actions, ids)
    env.close()
    return rows, order


@pytest.mark.parametrize("delay", [None, lambda g: 0.002 * (g + 1)], ids=["free", "uneven"])
def test_every_environment_follows_the_synchronous_pool(delay):
    sync = synchronous("CartPole-v1", 40, seed=5)
    rows, order = asynchronous("CartPole-v1", 40, seed=5, delay=delay)
    for i in range(N):
        for t in range(41):
            obs, reward, terminated, truncated = rows[i][t]
            np.testing.assert_array_equal(obs, sync[t][0][i])
            assert reward == sync[t][1][i]
            assert terminated == sync[t][2][i] and truncated == sync[t][3][i]
    assert set(order) == {0, 1}


@pytest.mark.slow  # a timing: on a loaded 2-core machine the other test worker takes a core
def test_a_group_steps_while_the_caller_works_on_another():
    """With MuJoCo's step slow enough to time: while the caller 'infers' for one group, the
    other group's step runs; one round of both groups takes about the longer of the two,
    not their sum."""
    env = envs.make("HalfCheetah-v5", 2 * 64, batch_size=64, num_threads=2, seed=0)
    env.async_reset()
    low, high = env.single_action_space.low, env.single_action_space.high
    actions = np.random.default_rng(0).uniform(low, high, (64, len(low))).astype(np.float32)
    for _ in range(4):  # warm up
        env.send(actions, env.recv()[4]["env_id"])
    start = time.perf_counter()
    rounds = 20
    for _ in range(2 * rounds):
        info = env.recv()[4]
        env.send(actions, info["env_id"])
    overlapped = time.perf_counter() - start
    sync = envs.make("HalfCheetah-v5", 64, num_threads=1, seed=0)
    sync.reset()
    start = time.perf_counter()
    for _ in range(2 * rounds):
        sync.step(actions)
    serial = time.perf_counter() - start
    env.close()
    sync.close()
    # each group on its own thread: two groups' steps take about one group's time (at least
    # a third less than stepping them one after another on one thread)
    assert overlapped < 0.67 * serial, (overlapped, serial)


def test_python_runs_while_a_group_steps():
    """The worker waits in C++ with Python's lock released: a Python thread counts on."""
    env = envs.make("HalfCheetah-v5", 256, batch_size=256, num_threads=1, seed=0)
    env.async_reset()
    env.recv()
    count, stop = [0], threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    actions = np.zeros((256, 6), np.float32)
    counted = []  # what the spinner counted during each wait (C++ holding the lock: nothing)
    for _ in range(5):
        env.send(actions, np.arange(256))
        before = count[0]
        env.recv()
        counted.append(count[0] - before)
    # on a loaded machine the spinner may not be scheduled within one wait: one is enough
    assert max(counted) > 0, counted
    stop.set()
    spinner.join()
    env.close()


def test_misuse_is_refused_by_name():
    with pytest.raises(ValueError, match="multiple of batch_size"):
        envs.make("CartPole-v1", 6, batch_size=4)
    env = envs.make("CartPole-v1", N, batch_size=B, num_threads=2)
    with pytest.raises(RuntimeError, match="recv with nothing sent"):
        env.recv()
    env.async_reset(seed=1)
    with pytest.raises(RuntimeError, match="while the groups"):
        env.async_reset()
    first = env.recv()[4]["env_id"]
    second = env.recv()[4]["env_id"]
    with pytest.raises(ValueError, match="exactly one group"):
        env.send(np.zeros(B, np.int32))
    with pytest.raises(ValueError, match="not one group's"):
        env.send(np.zeros(B, np.int32), np.array([1, 2, 3, 4]))
    with pytest.raises(ValueError, match="integer indices"):
        env.send(np.zeros(B, np.int32), np.array([0.0, 1, 2, 3]))
    env.send(np.zeros(B, np.int32), first)
    with pytest.raises(ValueError, match="stepping already"):
        env.send(np.zeros(B, np.int32), first)
    # bad actions: refused at recv with the synchronous pool's message and type; nothing moved
    env.send(np.full(B, 7, np.int32), second)
    messages = []
    for _ in range(2):
        try:
            env.recv()
        except ValueError as error:
            messages.append(str(error))
    assert len(messages) == 1 and "action" in messages[0]
    env.send(np.zeros(B, np.int32), second)  # the refused group may be sent again
    assert len(env.recv()[0]) == B
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.async_reset()


def test_actions_are_copied_when_sent():
    """The caller may write its action array as soon as send returns."""
    results = []
    for overwrite in (False, True):
        env = envs.make("CartPole-v1", B, batch_size=B, num_threads=1, seed=2)
        env.async_reset()
        env.recv()
        actions = np.ones(B, np.int32)
        env.send(actions, np.arange(B))
        if overwrite:
            actions[:] = 0
        results.append(env.recv()[0])
        env.close()
    np.testing.assert_array_equal(results[0], results[1])


def test_a_pool_dropped_without_close_stops_its_workers():
    env = envs.make("CartPole-v1", N, batch_size=B, num_threads=2)
    env.async_reset()
    env.recv()
    workers = list(env._workers)
    del env
    for worker in workers:
        worker.join(timeout=10)
        assert not worker.is_alive()


class Unreadable:
    """Actions whose `__array__` raises (a user's object)."""

    def __array__(self, *args, **kwargs):
        raise RuntimeError("cannot be read")


def test_a_send_whose_actions_cannot_be_read_leaves_the_group_to_send_again():
    """Issue 55, serious 5: the group stayed marked busy; every later send said "stepping
    already" and recv waited forever. The caller's error keeps its type."""
    env = envs.make("CartPole-v1", B, batch_size=B, num_threads=1, seed=3)
    env.async_reset()
    ids = env.recv()[4]["env_id"]
    with pytest.raises(ValueError, match="inhomogeneous"):
        env.send([[0], [0, 1], [0], [0]], ids)  # ragged
    with pytest.raises(RuntimeError, match="cannot be read") as error:
        env.send(Unreadable(), ids)
    assert "the group is not stepped and may be sent again" in str(error.value.__notes__)
    env.send(np.zeros(B, np.int32), ids)
    assert env.recv()[0].shape == (B, 4)
    env.close()


class Blocking:
    """Actions read only once `event` is set: a step that takes as long as the test wants."""

    def __init__(self, event):
        self.event = event

    def __array__(self, *args, **kwargs):
        self.event.wait()
        return np.zeros(B, np.int32)


def test_a_second_recv_for_one_group_and_a_close_never_leave_a_thread_waiting():
    """Issue 55, serious 7: two threads in recv with one group in flight, one waited forever
    and close() did not wake it. Now the second is refused at once, and a recv waiting when
    the pool closes ends with an error."""
    env = envs.make("CartPole-v1", N, batch_size=B, num_threads=1)
    env.async_reset()
    env.recv()
    env.recv()
    slow = threading.Event()
    with env._lock:  # a step of group 0 in flight that lasts until `slow` is set
        env._busy[0], env._ready[0] = True, False
    env._orders.put((0, "step", Blocking(slow)))
    outcome = []

    def waiting():
        try:
            env.recv()
            outcome.append("received")
        except RuntimeError as error:
            outcome.append(str(error))

    first = threading.Thread(target=waiting)
    first.start()
    time.sleep(0.3)
    with pytest.raises(RuntimeError, match="awaited by another thread's recv already"):
        env.recv()
    closing = threading.Thread(target=env.close)  # waits for the step in flight
    closing.start()
    first.join(timeout=5)
    assert not first.is_alive() and "closed while recv waited" in outcome[0]
    slow.set()
    closing.join(timeout=10)
    assert not closing.is_alive()


def test_one_environment_a_group_starts_no_thread_per_environment():
    """Issue 55, moderate 7: batch_size=1 started one Python thread per environment (4,101
    at n=4096). The workers are at most the C++ thread budget, and they go with close()."""
    before = threading.active_count()
    env = envs.make("CartPole-v1", 256, batch_size=1, num_threads=2, seed=5)
    assert len(env._workers) == 2 and threading.active_count() - before <= 2
    env.async_reset(seed=5)
    for _ in range(3 * 256):
        obs, _, _, _, info = env.recv()
        env.send(np.zeros(1, np.int32), info["env_id"])
    for _ in range(256):
        env.recv()
    env.close()
    assert threading.active_count() <= before
