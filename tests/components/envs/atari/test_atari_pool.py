"""The Atari family (components/envs/atari): ale-py's engine behind the engine's host doors,
checked frame by frame against ale-py's own vector env and against Gymnasium's
`AtariPreprocessing` + `FrameStackObservation`, which define the same preprocessing."""

from __future__ import annotations

import pickle

import gymnasium
import numpy as np
import pytest

ale_py = pytest.importorskip("ale_py")

import components.envs as envs  # noqa: E402
from components.envs.engine.spec import EnvSpec  # noqa: E402


def _actions(step: int, env: int, n: int) -> int:
    """The action environment `env` takes at `step`, whatever pool steps it."""
    return (step * 7 + env * 3 + step // 5) % n


@pytest.mark.parametrize("game", ["Pong-v5", "Breakout-v5"])
def test_frames_equal_gymnasiums_atari_preprocessing_and_frame_stack(game):
    pytest.importorskip("cv2")  # Gymnasium's AtariPreprocessing resizes with OpenCV
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    gymnasium.register_envs(ale_py)
    ref = gymnasium.make(f"ALE/{game}", frameskip=1, repeat_action_probability=0.0)
    ref = FrameStackObservation(AtariPreprocessing(ref, noop_max=0, frame_skip=4,
                                                   screen_size=84, grayscale_obs=True), 4,
                                padding_type="zero")
    ours = envs.make(game, 1, seed=3, noop_max=0, repeat_action_probability=0.0,
                     use_fire_reset=False)
    expected, _ = ref.reset(seed=3)
    obs, _ = ours.reset()
    np.testing.assert_array_equal(obs[0], expected)
    n, score = int(ref.action_space.n), 0.0
    for t in range(300):
        a = _actions(t, 0, n)
        expected, reward, terminated, truncated, _ = ref.step(a)
        obs, ours_reward, ours_terminated, ours_truncated, info = ours.step(np.array([a]))
        assert (ours_reward[0], ours_terminated[0], ours_truncated[0]) == \
            (reward, terminated, truncated)
        score += reward
        if terminated or truncated:  # the game's last frames; obs starts the next game
            np.testing.assert_array_equal(info["final_obs"][0], expected)
            assert info["final_info"]["episode_return"][0] == score
            assert info["final_info"]["elapsed_step"][0] == t + 1
            break
        np.testing.assert_array_equal(obs[0], expected, err_msg=f"{game}, step {t}")
        assert info["episode_return"][0] == score and info["elapsed_step"][0] == t + 1
    assert game == "Pong-v5" or terminated  # Breakout's game ends inside the 300 steps
    ours.close()


def test_seeds_sticky_actions_and_no_op_starts_are_ale_pys_own():
    """With v5's sticky actions and up to 30 no-ops, environment i of a pool seeded s is
    ale-py's vector env seeded s (environment i: s + i), over two threads."""
    from ale_py.vector_env import AtariVectorEnv

    ref = AtariVectorEnv("breakout", 4, num_threads=2, reward_clipping=False,
                         repeat_action_probability=0.25, autoreset_mode="SameStep")
    ours = envs.make("ALE/Breakout-v5", 4, seed=11, num_threads=2)
    expected, _ = ref.reset(seed=11)
    obs, _ = ours.reset()
    np.testing.assert_array_equal(obs, expected)
    for t in range(200):
        actions = np.array([_actions(t, i, 4) for i in range(4)])
        expected, reward, terminated, truncated, _ = ref.step(actions.astype(np.int32))
        obs, ours_reward, ours_terminated, ours_truncated, _ = ours.step(actions)
        np.testing.assert_array_equal(obs, expected, err_msg=f"step {t}")
        np.testing.assert_array_equal(ours_reward, reward)
        np.testing.assert_array_equal(ours_terminated, terminated)


def test_episodic_life_and_reward_clipping_keep_the_raw_game_in_info():
    env = envs.make("Breakout-v5", 2, seed=0, episodic_life=True, reward_clip=True,
                    repeat_action_probability=0.0)
    obs, info = env.reset()
    lives, clipped, raw, life_ends, game_overs = info["lives"].copy(), 0.0, 0.0, 0, 0
    for t in range(3000):
        obs, reward, terminated, truncated, info = env.step(np.array([1, 3]) if t % 2
                                                            else np.array([1, 2]))
        assert set(np.unique(reward)) <= {-1.0, 0.0, 1.0}
        np.testing.assert_array_equal(reward, np.sign(info["reward"]))
        clipped, raw = clipped + reward[0], raw + info["reward"][0]
        game_over = info["terminated"]
        life_lost = terminated & ~game_over
        # a lost life ends the episode for learning while the game goes on: no reset
        assert np.all(info["lives"][life_lost] == lives[life_lost] - 1)
        if life_lost.any():
            np.testing.assert_array_equal(info["final_obs"][life_lost], obs[life_lost])
        life_ends += int(life_lost.sum())
        if game_over[0]:
            assert info["final_info"]["episode_return"][0] == raw
            game_overs, clipped, raw = game_overs + 1, 0.0, 0.0
        lives = info["lives"].copy()
        if game_overs:
            break
    assert game_overs == 1 and life_ends >= 4


def test_a_game_is_truncated_at_max_episode_steps_with_its_last_frames():
    env = envs.make("Pong-v5", 2, seed=0, max_episode_steps=40)
    env.reset()
    for _ in range(40):
        obs, _, terminated, truncated, info = env.step(np.zeros(2, np.int64))
    assert truncated.all() and not terminated.any()
    assert (info["final_info"]["elapsed_step"] == 40).all()
    assert not np.array_equal(info["final_obs"], obs)  # the next game's first frames
    obs, _, _, truncated, info = env.step(np.zeros(2, np.int64))
    assert not truncated.any() and (info["elapsed_step"] == 1).all()


def test_the_asynchronous_pool_steps_each_environment_as_the_synchronous_one():
    sync = envs.make("Pong-v5", 4, seed=5, num_threads=1)
    frames = {i: [] for i in range(4)}
    obs, _ = sync.reset()
    for i in range(4):
        frames[i].append(obs[i])
    for t in range(30):
        obs, *_ = sync.step(np.array([_actions(t, i, 6) for i in range(4)]))
        for i in range(4):
            frames[i].append(obs[i])
    pool = envs.make("Pong-v5", 4, seed=5, batch_size=2, num_threads=2)
    assert isinstance(pool, envs.atari.async_vector_env.AtariAsyncVectorEnv)
    pool.async_reset()
    steps = np.zeros(4, int)
    while steps.min() < 30:
        obs, reward, terminated, truncated, info = pool.recv()
        ids = info["env_id"]
        assert len(ids) == 2 and obs.shape == (2, 4, 84, 84)
        for k, i in enumerate(ids):
            if steps[i] <= 30:
                np.testing.assert_array_equal(obs[k], frames[i][steps[i]])
        with pytest.raises(ValueError, match="not those of the batch received last"):
            pool.send(np.zeros(2), ids[::-1] if ids[0] != ids[1] else ids + 1)
        with pytest.raises(ValueError, match="action 9"):
            pool.send(np.array([9, 0]), ids)  # refused, nothing sent: the batch is still held
        pool.send(np.array([_actions(steps[i], i, 6) for i in ids]), ids)
        steps[ids] += 1
    with pytest.raises(RuntimeError, match="async_reset while environments are stepping"):
        pool.async_reset()
    pool.close()


def test_the_host_door_and_gymnasium_step_atari():
    import jax

    from components.envs import Environment
    from metagraph.spaces import PRNGKey
    from metagraph.testing import ComponentTest

    env = Environment("ALE/Pong-v5", 2, door="host")
    test = ComponentTest(env, {"key": PRNGKey(), "action": env.batch_action_space()})
    pool = envs.make("Pong-v5", 2)
    expected, _ = pool.reset(seed=7)
    obs = test.test(("reset", np.asarray(jax.random.PRNGKey(7))))
    assert obs.dtype == np.uint8 and obs.shape == (2, 4, 84, 84)  # the task's own shape
    np.testing.assert_array_equal(obs, expected)
    for t in range(20):
        actions = np.array([_actions(t, 0, 6), _actions(t, 1, 6)], np.int32)
        out = test.test(("step", actions))
        expected, reward, *_ = pool.step(actions)
        np.testing.assert_array_equal(out.obs, expected)
        np.testing.assert_array_equal(out.reward, reward)

    single = gymnasium.make("metagraph/Pong-v5", noop_max=0)
    first, info = single.reset(seed=1)
    assert first.shape == (4, 84, 84) and info["lives"] == 0
    _, reward, terminated, truncated, info = single.step(0)
    assert isinstance(reward, float) and info["elapsed_step"] == 1
    vector = gymnasium.make_vec("metagraph/Breakout-v5", 3)
    assert vector.reset(seed=0)[0].shape == (3, 4, 84, 84)


def test_what_the_atari_doors_cannot_do_is_refused_by_name():
    with pytest.raises(ValueError, match="Pong-v5 steps in an engine of its own.*door 'host'"):
        envs.Environment("Pong-v5", 2)
    with pytest.raises(TypeError, match="engine of its own"):
        envs.check("Pong-v5")
    with pytest.raises(ValueError, match="no in-graph door"):
        envs.make_functional("Pong-v5")
    with pytest.raises(TypeError, match="VectorEnv steps compiled tasks"):
        envs.VectorEnv("Pong-v5", 2)
    pool = envs.make("Pong-v5", 1)
    for refused in (pool.records, pool.physical_state, lambda: pickle.dumps(pool),
                    lambda: pool.reset(options={"state": 0})):
        with pytest.raises(TypeError, match="exact state"):
            refused()
    with pytest.raises(TypeError, match="did you mean 'frame_skip'"):
        envs.make("Pong-v5", 1, frame_skp=3)
    with pytest.raises(TypeError, match="reward_clip must be bool"):
        envs.make("Pong-v5", 1, reward_clip=1)
    with pytest.raises(ValueError, match="repeat_action_probability must be in"):
        envs.make("Pong-v5", 1, repeat_action_probability=1.5)
    with pytest.raises(ValueError, match="action 6 at index 0 is outside"):
        pool.step(np.array([6]))
    with pytest.raises(ValueError, match="did you mean 'Pong-v5'"):
        envs.canonical_id("Pong-v4")
    spec = envs.spec("Pong-v5")
    assert isinstance(spec, EnvSpec) and spec.task is None
    assert spec.observation_space.dtype == np.uint8 and spec.action_space.n == 6
    assert envs.spec("Pong-v5", full_action_space=True).action_space.n == 18
    assert envs.spec("ALE/Pong-v5", gray_scale=False).observation_space.shape == (4, 84, 84, 3)


def test_every_shipped_game_is_registered_under_both_ids():
    names = set(envs.ATARI_IDS)
    assert {"Pong-v5", "Breakout-v5", "MsPacman-v5", "MontezumaRevenge-v5"} <= names
    assert len(names) >= 100
    assert envs.canonical_id("ALE/MsPacman-v5") == "MsPacman-v5"
