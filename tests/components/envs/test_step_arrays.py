"""The host pool's step returns arrays no one else can see change: new ones, or ones of an
earlier step that the caller let go of (the pool keeps a few sets and reuses a set once every
array in it is referenced by the pool alone). Whatever the caller holds is never written."""

import numpy as np
import pytest

from components import envs

N = 8


@pytest.fixture
def pool():
    env = envs.make("CartPole-v1", N, seed=0, num_threads=1)
    env.reset(seed=0)
    yield env
    env.close()


def steps(env, count, hold):
    """`count` steps of alternating actions; every output kept (copies where not `hold`)."""
    out = []
    for t in range(count):
        result = env.step(np.full(N, t % 2, np.int32))
        out.append(result if hold else
                   tuple(np.copy(x) if isinstance(x, np.ndarray) else
                         {k: np.copy(v) if isinstance(v, np.ndarray) else v
                          for k, v in x.items()} for x in result))
    return out


def test_held_arrays_are_never_written_and_dropped_ones_give_the_same_results():
    held, copied = (envs.make("CartPole-v1", N, seed=3, num_threads=1) for _ in range(2))
    held.reset(seed=3), copied.reset(seed=3)
    kept = steps(held, 60, hold=True)       # every array still referenced: never reused
    snapshot = [tuple(np.copy(x) if isinstance(x, np.ndarray) else x for x in r[:4])
                for r in kept]
    fresh = steps(copied, 60, hold=False)   # dropped after copying: reused every step
    for r, s, f in zip(kept, snapshot, fresh, strict=True):
        for a, b, c in zip(r[:4], s, f[:4], strict=True):
            np.testing.assert_array_equal(a, b)  # not written since it was returned
            np.testing.assert_array_equal(a, c)  # reusing arrays changed no result
        assert r[4].keys() == f[4].keys()
        for k in r[4]:
            if isinstance(r[4][k], np.ndarray):
                np.testing.assert_array_equal(r[4][k], f[4][k])
    assert any("final_obs" in r[4] for r in kept)  # episodes ended on the way


def test_dropped_arrays_are_reused_and_held_ones_are_not(pool):
    addresses = set()
    for _ in range(10):
        obs = pool.step(np.zeros(N, np.int32))[0]
        addresses.add(obs.ctypes.data)
        del obs
    assert len(addresses) == 1  # the same set every step: no allocation
    first = pool.step(np.zeros(N, np.int32))[0]
    view = first[:2]
    del first  # the view still refers to it
    second = pool.step(np.zeros(N, np.int32))[0]
    assert not np.shares_memory(view, second)
    buffer = memoryview(second)
    del second
    third = pool.step(np.zeros(N, np.int32))[0]
    assert not np.shares_memory(np.asarray(buffer), third)


def test_an_array_changed_in_place_is_not_reused(pool):
    obs = pool.step(np.zeros(N, np.int32))[0]
    obs.shape = (2, N // 2, 4)
    del obs
    assert pool.step(np.zeros(N, np.int32))[0].shape == (N, 4)
    obs = pool.step(np.zeros(N, np.int32))[0]
    obs.flags.writeable = False
    del obs
    for _ in range(4):
        assert pool.step(np.zeros(N, np.int32))[0].flags.writeable


@pytest.mark.filterwarnings("ignore:Setting the strides:DeprecationWarning")  # what users do
@pytest.mark.parametrize("change", ["dtype", "strides", "byte order"])
def test_an_array_whose_layout_was_set_in_place_is_not_reused(pool, change):
    reference = envs.make("CartPole-v1", N, seed=0, num_threads=1)
    reference.reset(seed=0)
    obs = pool.step(np.zeros(N, np.int32))[0]
    reference.step(np.zeros(N, np.int32))
    if change == "dtype":  # same size: only the type says it
        obs.dtype = np.uint32
    elif change == "strides":  # same shape and type, another walk over the bytes
        obs.strides = (4, 4 * N)
    else:
        obs.dtype = obs.dtype.newbyteorder()
    del obs
    for _ in range(3):
        ours = pool.step(np.ones(N, np.int32))[0]
        theirs = reference.step(np.ones(N, np.int32))[0]
        assert ours.dtype == np.float32 and ours.flags.c_contiguous
        np.testing.assert_array_equal(ours, theirs)  # read with the pool's own layout


def test_a_weak_reference_to_a_dropped_array_never_sees_a_later_step(pool):
    import weakref

    obs = pool.step(np.zeros(N, np.int32))[0]
    seen = np.copy(obs)
    watcher = weakref.ref(obs)
    del obs
    for _ in range(4):
        pool.step(np.ones(N, np.int32))
        if watcher() is not None:  # the pool keeps it alive: it must not be written
            np.testing.assert_array_equal(watcher(), seen)


def test_final_obs_is_reused_and_holds_zeros_but_where_an_episode_ended_this_step():
    """Rows an earlier step wrote into a reused final_obs are cleared: compared with a pool
    whose every array is held (new each step), episodes ending at different steps."""
    held, dropped = (envs.make("CartPole-v1", N, seed=5, num_threads=1) for _ in range(2))
    held.reset(seed=5), dropped.reset(seed=5)
    rng = np.random.default_rng(0)
    kept, addresses, ends = [], set(), 0
    for _ in range(120):
        actions = (rng.random(N) < 0.8).astype(np.int32)  # mostly right: short episodes
        kept.append(held.step(actions))
        info = dropped.step(actions)[4]
        theirs = kept[-1][4]
        assert info.keys() == theirs.keys()
        if "final_obs" in info:
            ends += 1
            addresses.add(info["final_obs"].ctypes.data)
            done = info["_final_obs"]
            np.testing.assert_array_equal(info["final_obs"], theirs["final_obs"])
            assert not info["final_obs"][~done].any() and info["final_obs"][done].any()
        del info
    assert ends >= 5 and len(addresses) < ends  # reused across steps that ended episodes
