"""NumPy's integer dtypes (discrete tasks) and float64 (continuous ones) are checked and
converted by the host pool's C++ threads, each for its part (`engine/given_actions.h`): the
same steps as the task's own dtype, the same messages as the Python door (`actions.py`,
`action_error`), nothing moved by a refused step, and no Python fallback on the way."""

import numpy as np
import pytest

import components.envs as envs
from components.envs.engine.actions import action_error

INTEGERS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
            np.longlong, np.ulonglong]


def same_steps(a, b):
    """Two steps' (obs, reward, terminated, truncated): a VectorEnv's step tuples, or the C++
    pool's step (its outputs by name)."""
    if not isinstance(a, tuple):
        a = (a.obs, a.reward, a.terminated, a.truncated)
    for x, y in zip(a[:4], b[:4], strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("dtype", INTEGERS)
def test_integer_actions_step_as_int32_in_the_pool_itself(dtype):
    n = 1100  # three threads' parts of the pool's smallest share
    ours = envs.make("CartPole-v1", n, seed=3, num_threads=2)
    reference = envs.make("CartPole-v1", n, seed=3, num_threads=1)
    ours.reset(seed=3)
    reference.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(30):
        actions = rng.integers(0, 2, n)
        # the C++ pool takes the dtype as it is (a TypeError would send it to Python)
        out = ours._pool.step(actions.astype(dtype))
        same_steps(out, reference.step(actions.astype(np.int32)))


@pytest.mark.parametrize(("dtype", "value"), [(np.int64, 2**32), (np.int64, -1),
                                               (np.int64, -2**63), (np.uint64, 2**64 - 1),
                                               (np.uint32, 2**32 - 1), (np.int8, -128),
                                               (np.uint16, 2)])
@pytest.mark.parametrize("index", [0, 1099])  # in the first thread's part and in the last's
def test_an_integer_outside_the_actions_is_named_before_its_cast(dtype, value, index):
    n = 1100
    pool = envs.make("CartPole-v1", n, seed=0, num_threads=2)
    before = pool.records()
    actions = np.zeros(n, dtype)
    actions[index] = value
    actions[-1 if index == 0 else 0] = 1
    with pytest.raises(ValueError) as error:
        pool.step(actions)
    assert str(error.value) == action_error(pool.env_spec, actions)
    assert f"action {value} at index {index} is outside [0, 2)" in str(error.value)
    np.testing.assert_array_equal(pool.records(), before)  # nothing moved


def test_the_first_bad_integer_is_named_across_threads():
    n = 2048
    pool = envs.make("CartPole-v1", n, seed=0, num_threads=2)
    actions = np.zeros(n, np.int64)
    actions[[700, 1500, 2000]] = [7, 2**40, -5]
    with pytest.raises(ValueError, match=r"action 7 at index 700 is outside"):
        pool.step(actions)


def test_an_illegal_move_in_int64_is_named_as_in_int32():
    board = envs.make("ConnectFour-v0", 2, seed=0)
    board.reset(seed=0)
    for _ in range(6):
        board.step(np.array([0, 1], np.int64))
    messages = []
    for dtype in (np.int32, np.int64):
        with pytest.raises(ValueError) as error:
            board.step(np.array([0, 1], dtype))  # column 0 of environment 0 is full
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert "action 0 at index 0 is not legal" in messages[0]


@pytest.mark.parametrize("env_id", ["Pendulum-v1", "Hopper-v5"])
def test_float64_actions_step_as_numpy_casts_them(env_id):
    n = 700
    ours = envs.make(env_id, n, seed=1, num_threads=2)
    reference = envs.make(env_id, n, seed=1, num_threads=1)
    ours.reset(seed=1)
    reference.reset(seed=1)
    space = ours.single_action_space
    rng = np.random.default_rng(1)
    for _ in range(10):
        actions = rng.uniform(space.low, space.high, (n, *space.shape))  # float64
        out = ours._pool.step(actions)
        same_steps(out, reference.step(actions.astype(np.float32)))


@pytest.mark.parametrize(("value", "message"), [
    (1e308, r"action at index 599 is 1e\+308, outside float32's range"),
    (-3.5e38, r"action at index 599 is -3.5e\+38, outside float32's range"),
    (np.nan, r"action at index 599 is not finite \(NaN or inf\)"),
    (-np.inf, r"action at index 599 is not finite \(NaN or inf\)"),
])
def test_a_float64_that_does_not_convert_is_named(value, message):
    n = 1100
    pool = envs.make("Pendulum-v1", n, seed=0, num_threads=2)
    before = pool.records()
    actions = np.zeros((n, 1))
    actions[599, 0] = value
    with pytest.raises(ValueError, match=rf"Pendulum-v1: {message}") as error:
        pool.step(actions)
    assert error.value.__cause__ is None and error.value.__context__ is None  # C++ said it
    np.testing.assert_array_equal(pool.records(), before)


def test_the_largest_float32_converts_and_a_strided_int64_array_still_steps():
    pool = envs.make("Pendulum-v1", 2, seed=0)
    pool.step(np.array([[float(np.finfo(np.float32).max)], [0.0]]))  # clipped by the task
    cart = envs.make("CartPole-v1", 4, seed=0)
    reference = envs.make("CartPole-v1", 4, seed=0)
    strided = np.zeros(8, np.int64)[::2]  # not contiguous: converted by the Python door
    same_steps(cart.step(strided), reference.step(np.zeros(4, np.int32)))


@pytest.mark.parametrize("actions", [np.zeros(4, np.bool_), np.zeros(4, np.float64),
                                     np.zeros(4, np.float32)])
def test_other_dtypes_are_still_refused_for_discrete_actions(actions):
    with pytest.raises(TypeError, match="CartPole-v1: discrete actions must be integers|"
                                        "CartPole-v1: actions must be a numeric array"):
        envs.make("CartPole-v1", 4, seed=0).step(actions)
    with pytest.raises(TypeError, match="continuous actions must be floating point"):
        envs.make("Pendulum-v1", 4, seed=0).step(np.zeros((4, 1), np.int64))
