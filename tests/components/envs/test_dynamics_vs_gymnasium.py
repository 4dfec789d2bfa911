"""The native cores step exactly like Gymnasium's own environments (to float32 precision):
thousands of random states and actions per environment, the truncation step, auto-reset."""

import gymnasium
import numpy as np
import pytest

import components.envs as envs

N = 2000
STATE_RANGES = {  # physically plausible states in Gymnasium's layout
    "CartPole-v1": [(-2.4, 2.4), (-3, 3), (-0.21, 0.21), (-3, 3)],
    "Acrobot-v1": [(-np.pi, np.pi), (-np.pi, np.pi), (-4 * np.pi, 4 * np.pi),
                   (-9 * np.pi, 9 * np.pi)],
    "MountainCar-v0": [(-1.2, 0.6), (-0.07, 0.07)],
    "MountainCarContinuous-v0": [(-1.2, 0.6), (-0.07, 0.07)],
    "Pendulum-v1": [(-2 * np.pi, 2 * np.pi), (-8, 8)],
}


def random_states_and_actions(env_id, rng):
    ranges = np.array(STATE_RANGES[env_id])
    states = rng.uniform(ranges[:, 0], ranges[:, 1], size=(N, len(ranges)))
    spec = envs.spec(env_id)
    if spec.discrete:
        actions = rng.integers(0, spec.action_space.n, N).astype(np.int32)
    else:  # include out-of-bounds actions: both sides clip them the same way
        high = float(spec.action_space.high[0])
        actions = rng.uniform(-1.5 * high, 1.5 * high, (N, 1)).astype(np.float32)
    return states, actions


@pytest.mark.parametrize("env_id", envs.ENV_IDS)
def test_one_step_from_random_states_matches_gymnasium(env_id):
    rng = np.random.default_rng(abs(hash(env_id)) % 2**32)
    states, actions = random_states_and_actions(env_id, rng)
    ours = envs.make(env_id, N, seed=0)
    ours.reset(options={"state": states})
    obs, reward, terminated, truncated, info = ours.step(actions)
    final = np.where((terminated | truncated)[:, None], info.get("final_obs", obs), obs)

    reference = gymnasium.make(env_id).unwrapped
    for i in range(N):
        reference.reset(seed=i)  # clears per-episode bookkeeping (CartPole's after-terminal)
        reference.state = states[i].copy()
        action = int(actions[i]) if envs.spec(env_id).discrete else actions[i]
        ref_obs, ref_reward, ref_terminated, ref_truncated, _ = reference.step(action)
        np.testing.assert_allclose(final[i], ref_obs, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{env_id} obs, state {states[i]}, action {action}")
        np.testing.assert_allclose(reward[i], ref_reward, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{env_id} reward")
        assert terminated[i] == ref_terminated, f"{env_id} terminated at {states[i]}"
        assert not truncated[i]


@pytest.mark.parametrize("env_id", ["Pendulum-v1", "MountainCar-v0", "CartPole-v1"])
def test_whole_episode_with_truncation_and_auto_reset_matches_gymnasium(env_id):
    """Step one environment and Gymnasium's TimeLimit-wrapped one with the same actions, from
    the same start, through the end of the episode (truncation or termination)."""
    spec = envs.spec(env_id)
    reference = gymnasium.make(env_id)
    ref_obs, _ = reference.reset(seed=3)
    ours = envs.make(env_id, 1, seed=0)
    obs, _ = ours.reset(options={"state": reference.unwrapped.state})
    np.testing.assert_allclose(obs[0], ref_obs, rtol=1e-6)
    rng = np.random.default_rng(0)
    for t in range(1, spec.max_episode_steps + 1):
        action = (rng.integers(0, spec.action_space.n, 1).astype(np.int32) if spec.discrete
                  else rng.uniform(-2, 2, (1, 1)).astype(np.float32))
        ref_obs, ref_reward, ref_term, ref_trunc, _ = reference.step(
            int(action[0]) if spec.discrete else action[0])
        obs, reward, term, trunc, info = ours.step(action)
        assert (term[0], trunc[0]) == (ref_term, ref_trunc), f"step {t}"
        shown = info["final_obs"][0] if (term[0] or trunc[0]) else obs[0]
        np.testing.assert_allclose(shown, ref_obs, rtol=1e-4, atol=1e-5, err_msg=f"step {t}")
        np.testing.assert_allclose(reward[0], ref_reward, rtol=1e-4, atol=1e-5)
        if ref_term or ref_trunc:
            break
    if env_id != "CartPole-v1":
        assert t == spec.max_episode_steps and trunc[0]
    # auto-reset: the returned observation starts a new episode
    assert ours.elapsed_steps()[0] == 0
    assert not np.allclose(obs[0], info["final_obs"][0])


def test_angles_of_any_size_match_gymnasium():
    """The cores' own vectorizing sin/cos (every quadrant, up to |x| = 1e5) and the C library's
    beyond it (to 1e15), mixed in one batch: Pendulum never wraps its angle, so any angle is
    legal. The pool first steps states of its own, all in the fast range (which it then trusts
    without scanning them again): states set from outside are scanned, not trusted."""
    rng = np.random.default_rng(7)
    # over half of them beyond 1e5, up to 1e15 (where the fast flavour's reduction is wrong)
    magnitude = 10.0 ** rng.uniform(-3, 15, N)
    states = np.stack([rng.choice([-1, 1], N) * magnitude, rng.uniform(-8, 8, N)], axis=1)
    actions = rng.uniform(-2, 2, (N, 1)).astype(np.float32)
    ours = envs.make("Pendulum-v1", N, seed=0)
    for _ in range(2):
        ours.step(actions)
    ours.reset(options={"state": states})
    obs, reward, *_ = ours.step(actions)
    reference = gymnasium.make("Pendulum-v1").unwrapped
    for i in range(N):
        reference.reset(seed=i)
        reference.state = states[i].copy()
        ref_obs, ref_reward, *_ = reference.step(actions[i])
        np.testing.assert_allclose(obs[i], ref_obs, rtol=1e-5, atol=1e-6,
                                   err_msg=f"state {states[i]}")
        np.testing.assert_allclose(reward[i], ref_reward, rtol=1e-5, atol=1e-6)
