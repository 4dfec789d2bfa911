"""The native MuJoCo tasks (all eleven of Gymnasium's v5 suite) step exactly like Gymnasium's
own v5 environments (same MuJoCo): teacher-forced from the same qpos/qvel with the same actions,
observation, reward, terminated and truncated agree to 1e-9 (in practice bit for bit), and
every `info` term by name to float32's rounding (ours are float32 extras), over many steps and
through resets (each task's own episode limit: Reacher 50, Pusher 100), with Gymnasium's keyword
arguments."""

import gymnasium
import numpy as np
import pytest

from components.envs import MUJOCO_IDS, make

TOL = 1e-9
INFO_TOL = 1e-6  # relative (at least 1): float32's rounding of the same float64 term


def info_terms(info):
    """A host pool's step info for its first environment: the task's terms by name."""
    return {name: value[0] for name, value in info.items()
            if not name.startswith("_") and name not in ("final_obs", "final_info")}


def info_error(ours, theirs):
    """The largest relative difference between our float32 terms and Gymnasium's."""
    assert ours.keys() == theirs.keys(), (sorted(ours), sorted(theirs))
    assert all(np.asarray(value).dtype == np.float32 for value in ours.values())
    return max(float(np.max(np.abs(np.float32(theirs[name]) - value)
                            / np.maximum(1.0, np.abs(theirs[name]))))
               for name, value in ours.items())


def random_actions(env, rng, count):
    """Uniform actions over 1.2x the control range: MuJoCo clamps ctrl, both sides alike."""
    low, high = env.single_action_space.low, env.single_action_space.high
    return rng.uniform(1.2 * low, 1.2 * high, (count, len(low))).astype(np.float32)


def teacher_forced(env_id, steps, seed=0, **kwargs):
    """Step Gymnasium's env and ours side by side; after every episode's end Gymnasium resets
    and ours is reset to its qpos/qvel. Returns the largest differences seen and the number of
    episodes ended."""
    reference = gymnasium.make(env_id, **kwargs)
    ours = make(env_id, 1, seed=seed, **kwargs)
    rng = np.random.default_rng(seed)
    worst = {"obs": 0.0, "reward": 0.0}
    worst_info = 0.0
    episodes = 0

    def restart(reset_seed):
        obs, _ = reference.reset(seed=reset_seed)
        data = reference.unwrapped.data
        mine, _ = ours.reset(options={"qpos": data.qpos.copy(), "qvel": data.qvel.copy()})
        assert mine.dtype == np.float64
        worst["obs"] = max(worst["obs"], float(np.max(np.abs(mine[0] - obs))))

    restart(seed)
    for t, action in enumerate(random_actions(ours, rng, steps)):
        obs, reward, terminated, truncated, their_info = reference.step(action)
        mine, my_reward, my_terminated, my_truncated, info = ours.step(action[None])
        worst_info = max(worst_info, info_error(info_terms(info), their_info))
        done = bool(my_terminated[0] or my_truncated[0])
        last = info["final_obs"][0] if done else mine[0]
        worst["obs"] = max(worst["obs"], float(np.max(np.abs(last - obs))))
        worst["reward"] = max(worst["reward"], abs(float(my_reward[0]) - reward))
        assert (bool(my_terminated[0]), bool(my_truncated[0])) == (terminated, truncated), t
        if terminated or truncated:
            episodes += 1
            restart(seed + 1 + episodes)
    assert worst["obs"] <= TOL and worst["reward"] <= TOL, worst
    assert worst_info <= INFO_TOL, worst_info
    return worst, episodes


@pytest.mark.parametrize("env_id", MUJOCO_IDS)
def test_teacher_forced_steps_match_gymnasium(env_id):
    worst, _ = teacher_forced(env_id, 300)
    assert worst == {"obs": 0.0, "reward": 0.0}  # the same MuJoCo gives the same bits


@pytest.mark.parametrize("env_id", MUJOCO_IDS)
def test_truncation_and_resets_match_gymnasium(env_id):
    _, episodes = teacher_forced(env_id, 200, seed=3, max_episode_steps=40)
    assert episodes >= 5


@pytest.mark.parametrize(("env_id", "kwargs"), [
    ("HalfCheetah-v5", {"forward_reward_weight": 2.0, "ctrl_cost_weight": 0.3,
                        "exclude_current_positions_from_observation": False}),
    ("Hopper-v5", {"healthy_z_range": (0.9, 2.0), "healthy_angle_range": (-0.1, 0.1),
                   "healthy_reward": 2.0, "ctrl_cost_weight": 0.01}),
    ("Walker2d-v5", {"terminate_when_unhealthy": False, "healthy_z_range": (1.0, 2.0)}),
    ("Ant-v5", {"include_cfrc_ext_in_observation": False, "contact_cost_weight": 1e-2,
                "healthy_z_range": (0.3, 1.0), "main_body": "torso"}),
    ("Swimmer-v5", {"exclude_current_positions_from_observation": False,
                    "ctrl_cost_weight": 0.5}),
    ("InvertedPendulum-v5", {"reset_noise_scale": 0.1}),
    ("InvertedDoublePendulum-v5", {"healthy_reward": 3.0, "reset_noise_scale": 0.3}),
    ("Reacher-v5", {"reward_dist_weight": 2.0, "reward_control_weight": 0.3}),
    ("Pusher-v5", {"reward_near_weight": 1.0, "reward_dist_weight": 0.5,
                   "reward_control_weight": 1.0}),
    ("Humanoid-v5", {"include_cinert_in_observation": False, "include_cvel_in_observation": False,
                     "contact_cost_range": (-1.0, 0.01), "healthy_z_range": (1.1, 2.0),
                     "forward_reward_weight": 2.0}),
    ("HumanoidStandup-v5", {"include_qfrc_actuator_in_observation": False,
                            "include_cfrc_ext_in_observation": False,
                            "impact_cost_weight": 1e-3, "impact_cost_range": (0.0, 0.5)}),
])
def test_keyword_arguments_match_gymnasium(env_id, kwargs):
    teacher_forced(env_id, 150, seed=5, **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", MUJOCO_IDS)
def test_thousands_of_steps_match_gymnasium(env_id):
    worst, _ = teacher_forced(env_id, 5000, seed=11)
    assert worst == {"obs": 0.0, "reward": 0.0}
