"""A user's family of environments that steps in an engine of its own, registered from outside
the package as the Atari family is (`register(..., vector_env=, family=, scoring_kwargs=)`):
here a pure-Python corridor behind Gymnasium's own synchronous vector env. It reaches
`envs.make`, `gymnasium.make_vec`, the `Environment` component's host door and training,
and the in-graph doors refuse it by name, as they refuse Atari."""

import gymnasium
import jax
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import components.envs as envs
from components.envs import Environment, EnvSpec, register

LENGTH = 6
ENV_ID = "UsersCorridor-v0"


class Corridor(gymnasium.Env):
    """Walk right (action 1) from cell 0 to the last cell: reward 1 there, -0.01 a step;
    `bonus` pays more at the end (a keyword argument, as a family's are)."""

    def __init__(self, bonus: float = 1.0):
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (LENGTH,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)
        self.bonus = bonus
        self.cell = 0

    def _obs(self):
        return np.eye(LENGTH, dtype=np.float32)[self.cell]

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.cell = 0
        return self._obs(), {}

    def step(self, action):
        self.cell = max(0, min(LENGTH - 1, self.cell + (1 if int(action) == 1 else -1)))
        end = self.cell == LENGTH - 1
        return self._obs(), self.bonus if end else -0.01, end, False, {}


def corridor_spec(env_id, kwargs):
    """The family's spec: no compiled task, the spaces of one environment."""
    unknown = set(kwargs) - {"bonus"}
    if unknown:
        raise TypeError(f"{env_id}: unknown keyword arguments {sorted(unknown)}")
    probe = Corridor(**kwargs)
    return EnvSpec(env_id, probe.observation_space, probe.action_space, 50)


def corridor_pool(spec, num_envs, seed, num_threads, batch_size):
    """The family's host pool: Gymnasium's synchronous vector env with same-step resets."""
    if batch_size is not None:
        raise ValueError(f"{spec.env_id}: no asynchronous pool")
    kwargs = dict(spec.kwargs)
    pool = SyncVectorEnv([lambda: gymnasium.wrappers.TimeLimit(Corridor(**kwargs), 50)]
                         * num_envs, autoreset_mode=AutoresetMode.SAME_STEP)
    pool.reset(seed=seed)
    return pool


register(ENV_ID, corridor_spec, vector_env=corridor_pool, family="corridor",
         scoring_kwargs={"bonus": 1.0})


def test_the_host_pool_and_gymnasium_reach_it():
    pool = envs.make(ENV_ID, 3, bonus=2.0)
    assert isinstance(pool, SyncVectorEnv)
    obs, _ = pool.reset(seed=0)
    assert obs.shape == (3, LENGTH) and (obs[:, 0] == 1).all()
    for _ in range(LENGTH - 1):
        obs, reward, terminated, _, _ = pool.step(np.ones(3, np.int64))
    assert terminated.all() and np.allclose(reward, 2.0)
    vector = gymnasium.make_vec(f"metagraph/{ENV_ID}", 2)
    assert vector.reset(seed=1)[0].shape == (2, LENGTH)
    assert envs.spec(ENV_ID, bonus=3.0).kwargs == (("bonus", 3.0),)


def test_the_component_steps_it_through_the_host_door():
    env = Environment(ENV_ID, 2, door="host")
    assert env.observation_space.shape == (LENGTH,)
    reset = jax.jit(lambda key: env.functional.reset(key, 2))
    state, obs = reset(jax.random.key(0))
    assert obs.shape == (2, LENGTH) and (np.asarray(obs)[:, 0] == 1).all()
    out = env.functional.step(state, np.array([1, 0], np.int32), final_obs=True)
    assert np.asarray(out.obs)[0, 1] == 1 and np.asarray(out.obs)[1, 0] == 1


@pytest.mark.parametrize("door", ["native", "jax"])
def test_the_in_graph_doors_refuse_it_by_name(door):
    with pytest.raises(ValueError, match=f"{ENV_ID} steps in an engine of its own "
                       f"\\(corridor's host pool\\)"):
        Environment(ENV_ID, 2, door=door)


def test_the_conformance_check_refuses_it_by_name():
    with pytest.raises(TypeError, match="engine of its own \\(corridor's host pool\\)"):
        envs.check(ENV_ID)


def test_a_short_ppo_run_learns_it(tmp_path):
    from components.training import RunSpec, evaluate, train
    from components.training.algorithms.iterative import PPO

    overrides = {"door": "host", "num_envs": 4, "num_steps": 32, "hidden": [16],
                 "learning_rate": 0.003}
    config = PPO().config(ENV_ID, overrides)
    train(RunSpec.make(ENV_ID, "ppo", config, steps=4 * 32 * 30), tmp_path, progress=False)
    result = evaluate(tmp_path, episodes=2)
    # the shortest walk: LENGTH - 1 steps right (random walks take about 25 on average)
    assert result["return_mean"] == pytest.approx(1.0 - 0.01 * (LENGTH - 2))
