"""Scripted and random streams for testing wrappers against Gymnasium's own:
`ScriptedVectorEnv` (a Gymnasium vector env replaying given observations, rewards and
terminations) and `rolled_out` (an environment component stepped with random actions through
a `Rollout`)."""

from __future__ import annotations

import gymnasium
import jax
import numpy as np

import metagraph as mg
from components.agents import Rollout
from metagraph.spaces import Discrete, PRNGKey
from metagraph.testing import ComponentTest


class ScriptedVectorEnv(gymnasium.vector.VectorEnv):
    """A vector env that returns the next of its scripted observations, rewards and
    terminations at each step (what the wrappers under test see)."""

    def __init__(self, obs, rewards=None, terminated=None,
                 autoreset=gymnasium.vector.AutoresetMode.NEXT_STEP):
        self.metadata = {"autoreset_mode": autoreset}
        self.num_envs = obs.shape[1]
        self.single_observation_space = gymnasium.spaces.Box(-np.inf, np.inf, obs.shape[2:])
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, obs.shape[1:])
        self.single_action_space = gymnasium.spaces.Discrete(2)
        self.action_space = gymnasium.spaces.MultiDiscrete([2] * self.num_envs)
        self.obs, self.rewards, self.terminated, self.t = obs, rewards, terminated, 0

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return self.obs[0], {}

    def step(self, actions):
        self.t += 1
        n = self.num_envs
        reward = self.rewards[self.t - 1] if self.rewards is not None else np.zeros(n)
        terminated = (self.terminated[self.t - 1] if self.terminated is not None
                      else np.zeros(n, bool))
        return self.obs[self.t], reward, terminated, np.zeros(n, bool), {}


class RandomRollout(mg.Component):
    """`collect(key)`: `env` reset, then a `Rollout` of it for `steps` steps, each action drawn
    from the step's key (the same actions whatever wraps `env`): its observations, rewards,
    ends, episode returns and the steps' extras."""

    def __init__(self, env, steps):
        super().__init__()
        self.rollout = Rollout(env)
        self.steps = steps

    @mg.api
    def collect(self, key):
        reset_key, key = jax.random.split(key)
        self.rollout.reset(reset_key)
        space = self.rollout.env.action_space
        n = self.rollout.num_envs

        def act(obs, step_key):
            if isinstance(space, Discrete):
                return jax.random.randint(step_key, (n,), 0, space.n), ()
            return jax.random.uniform(step_key, (n, *space.shape), minval=-2.0, maxval=2.0), ()

        trajectory = self.rollout.run(act, key, self.steps)
        return {"obs": trajectory.observations, "last_obs": trajectory.last_observations,
                "reward": trajectory.rewards, "done": trajectory.done,
                "returns": trajectory.episode_returns, "extras": trajectory.task_extras,
                "final_obs": trajectory.final_observations, "actions": trajectory.actions}


def rolled_out(env, steps):
    test = ComponentTest(RandomRollout(env, steps), {"key": PRNGKey()})
    return test, test.collect(np.asarray(jax.random.PRNGKey(2)))
