"""`FrameStackReplay` against the stacks it was given: ale-py's own frame stacks from Pong
(zero-padded resets), Gymnasium-style reset padding and lives lost mid-game (synthetic
episodes), across the ring's wrap; every transition sampled equal to the observation and
next observation a whole-observation replay would have kept; a stack it cannot share is
refused naming the component."""

import jax
import numpy as np
import pytest

import metagraph as mg
from components.replay.frame_stack_replay import FrameStackReplay
from metagraph.spaces import Box, Dict, Discrete, PRNGKey
from metagraph.testing import ComponentTest

K, H, W = 4, 3, 2
OBS = Box((K, H, W), dtype=np.uint8)
RECORD = Dict(action=Discrete(5), reward=Box(()))


def spaces(num_envs, steps, obs=OBS):
    return {"observations": Box((steps, num_envs, *obs.shape), dtype=obs.dtype),
            "records": {"action": Box((steps, num_envs), dtype=np.int32),
                        "reward": Box((steps, num_envs))},
            "next_steps": Box((steps, num_envs), dtype=np.int32),
            "last_observations": Box((num_envs, *obs.shape), dtype=obs.dtype),
            "key": PRNGKey()}


def synthetic_stream(num_envs, length, seed):
    """Observations [length + 1, N, K, H, W] as a stacking environment gives them: new
    frames each step, episodes that start zero-padded or copy-padded, and lives lost (a
    `done` the stack goes on through)."""
    rng = np.random.default_rng(seed)
    stacks = np.zeros((length + 1, num_envs, K, H, W), np.uint8)
    for n in range(num_envs):
        stack = None
        for t in range(length + 1):
            frame = rng.integers(1, 255, (H, W), dtype=np.uint8)
            if stack is None or rng.random() < 0.08:  # a reset: zero or copy padding
                stack = (np.zeros((K, H, W), np.uint8) if rng.random() < 0.5
                         else np.repeat(frame[None], K, 0))
                stack[-1] = frame
            else:  # a step, or a life lost (the stack goes on)
                stack = np.concatenate([stack[1:], frame[None]])
            stacks[t, n] = stack
    return stacks


def n_step_targets(steps, num_envs, n, rng):
    """`next_steps` as DQN's n-step windows give them: n, or fewer where a window stops early
    or reaches the rollout's end."""
    t = np.arange(steps)[:, None]
    window = rng.integers(1, n + 1, (steps, num_envs))
    return np.minimum(window, steps - t).astype(np.int32)


def check_against_truth(test, truth_obs, truth_next, truth_action, held, num_envs, rounds=8):
    """Every sampled transition (32 a round) equals the whole observations kept beside it."""
    for seed in range(rounds):
        batch, indices = test.test(("sample", jax.random.PRNGKey(seed)))
        indices = np.asarray(indices)
        assert indices.min() >= 0 and indices.max() < held * num_envs
        np.testing.assert_array_equal(batch["obs"], truth_obs[indices])
        np.testing.assert_array_equal(batch["next_obs"], truth_next[indices])
        np.testing.assert_array_equal(batch["action"], truth_action[indices])


@pytest.mark.parametrize("capacity, rollouts", [(400, 3), (48, 9)])  # with and without wrap
def test_every_sampled_stack_is_the_one_inserted(capacity, rollouts):
    num_envs, steps, n = 4, 10, 3
    rng = np.random.default_rng(0)
    stream = synthetic_stream(num_envs, steps * rollouts, seed=1)
    replay = FrameStackReplay(capacity, num_envs, OBS, RECORD)
    test = ComponentTest(replay, spaces(num_envs, steps), backend="xla")
    obs, nxt, act = [], [], []
    for r in range(rollouts):
        window = stream[r * steps:(r + 1) * steps + 1]
        next_steps = n_step_targets(steps, num_envs, n, rng)
        action = rng.integers(0, 5, (steps, num_envs)).astype(np.int32)
        records = {"action": action, "reward": rng.normal(size=(steps, num_envs))
                   .astype(np.float32)}
        size = test.test(("insert", [window[:-1], records, next_steps, window[-1]]))
        t = np.arange(steps)[:, None]
        obs.append(window[:-1])
        nxt.append(window[t + next_steps, np.arange(num_envs)[None, :]])
        act.append(action)
    held = min(steps * rollouts, capacity // num_envs)
    assert size == held * num_envs
    # whole observations, as a ReplayBuffer of obs and next_obs keeps them: the newest `held`
    # steps, step-major (index = step * num_envs + env)
    flat = [np.concatenate(x)[-held:].reshape(held * num_envs, *x[0].shape[2:])
            for x in (obs, nxt, act)]
    check_against_truth(test, *flat, held, num_envs)
    # one frame a step of each environment, not 2K
    store = test.get_state()["store"]["frames"]
    assert store.shape == (capacity // num_envs + K, num_envs, H, W)


def test_ale_pys_own_stacks_come_back_frame_for_frame():
    pytest.importorskip("ale_py")
    from components import envs

    num_envs, steps, rollouts = 2, 64, 6
    # Breakout: random play loses its five lives (the stack goes on) and ends games (a
    # zero-padded stack starts) within these steps
    pool = envs.make("Breakout-v5", num_envs, seed=3)
    obs, _ = pool.reset(seed=3)
    space = Box((4, 84, 84), dtype=np.uint8)
    replay = FrameStackReplay(steps * rollouts * num_envs, num_envs, space, RECORD)
    test = ComponentTest(replay, spaces(num_envs, steps, space), backend="xla")
    rng = np.random.default_rng(0)
    seen, following, resets = [], [], 0
    for _ in range(rollouts):
        window = [obs]
        for _ in range(steps):  # random play: Pong's episodes end within these steps
            obs, _, terminated, truncated, _ = pool.step(rng.integers(0, 4, num_envs))
            resets += int((terminated | truncated).sum())
            window.append(obs)
        window = np.stack(window)
        next_steps = np.ones((steps, num_envs), np.int32)
        records = {"action": np.zeros((steps, num_envs), np.int32),
                   "reward": np.zeros((steps, num_envs), np.float32)}
        test.test(("insert", [window[:-1], records, next_steps, window[-1]]))
        seen.append(window[:-1])
        following.append(window[1:])
    pool.close()
    assert resets >= 2  # lives lost and games ended among them
    held = steps * rollouts
    truth = [np.concatenate(x).reshape(held * num_envs, 4, 84, 84) for x in (seen, following)]
    check_against_truth(test, *truth, np.zeros(held * num_envs, np.int32), held, num_envs)


def test_a_stack_it_cannot_share_is_refused_naming_the_component():
    num_envs, steps = 2, 4
    stream = synthetic_stream(num_envs, steps, seed=2)
    stream[2, 1, 0] = 7  # an older frame changed in place: neither a step nor a reset
    stream[2, 1, 1] = 9
    replay = FrameStackReplay(64, num_envs, OBS, RECORD, name="frames")
    test = ComponentTest(replay, spaces(num_envs, steps), backend="xla")
    records = {"action": np.zeros((steps, num_envs), np.int32),
               "reward": np.zeros((steps, num_envs), np.float32)}
    with pytest.raises(mg.RuntimeCheckError, match=r"frames\.insert: the observation at step 2"):
        test.test(("insert", [stream[:-1], records, np.ones((steps, num_envs), np.int32),
                              stream[-1]]))


def test_bad_construction_is_refused_by_name():
    with pytest.raises(ValueError, match="K >= 2 frames"):
        FrameStackReplay(100, 2, Box((84,)), RECORD)
    with pytest.raises(ValueError, match="not obs or next_obs"):
        FrameStackReplay(100, 2, OBS, Dict(obs=Box(()), action=Discrete(2)))
    with pytest.raises(ValueError, match="holds no step"):
        FrameStackReplay(3, 4, OBS, RECORD)


def test_a_rollout_of_the_wrong_shape_or_reach_is_refused():
    num_envs, steps = 2, 4
    stream = synthetic_stream(num_envs, steps, seed=3)
    records = {"action": np.zeros((steps, num_envs), np.int32),
               "reward": np.zeros((steps, num_envs), np.float32)}
    with pytest.raises(ValueError, match=r"frames\.insert: observations must be \(4, 2, 4, 3"):
        ComponentTest(FrameStackReplay(64, num_envs, OBS, RECORD, name="frames"),
                      spaces(num_envs + 1, steps), backend="xla")
    test = ComponentTest(FrameStackReplay(64, num_envs, OBS, RECORD, name="frames"),
                         spaces(num_envs, steps), backend="xla")
    reach = np.ones((steps, num_envs), np.int32)
    reach[3, 0] = 2  # the last step's next observation is its last_observations: 1 step on
    with pytest.raises(mg.RuntimeCheckError, match=r"next_steps at step 3 of the rollout"):
        test.test(("insert", [stream[:-1], records, reach, stream[-1]]))
