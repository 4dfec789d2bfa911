"""`FrameStack`: each observation the last k of the episode, stacked on a new leading axis;
`HostFrameStack`, the same stacks kept for a host vector env (what acting from elsewhere,
an evaluation's, needs); `pushed` and `first_stacks`, the arithmetic both keep them with."""

from __future__ import annotations

import functools
from typing import Any

import jax.numpy as jnp
import numpy as np

from components.envs.wrappers.wrapper import EnvironmentWrapper
from metagraph.checks import positive_int
from metagraph.spaces import Bool, Box, Dict, Space


def first_stacks(obs: Any, num_stack: int, xp: Any = jnp) -> Any:
    """The stacks [N, num_stack, *shape] that episodes starting with `obs` [N, *shape] are
    observed with: `num_stack` copies of their first observation (Gymnasium's
    `FrameStackObservation` with its default padding, "reset"). `xp`: `jax.numpy` inside a
    program, `numpy` on the host."""
    return xp.repeat(obs[:, None], num_stack, axis=1)


def pushed(frames: Any, obs: Any, started: Any, xp: Any = jnp) -> Any:
    """`frames` [N, k, *shape] with `obs` [N, *shape] pushed in as the newest and the oldest
    dropped; where `started` [N] (bool: `obs` is a new episode's first observation, a
    same-step auto-reset's), k copies of `obs` (`first_stacks`)."""
    newest = obs[:, None]
    shifted = xp.concatenate([frames[:, 1:], newest], axis=1)
    restarted = xp.repeat(newest, frames.shape[1], axis=1)
    started = xp.reshape(started, (-1,) + (1,) * (frames.ndim - 1))
    return xp.where(started, restarted, shifted)


def stacked_space(space: Space, num_stack: int) -> Box | Bool:
    """One observation of `space` stacked `num_stack` times on a new leading axis (the same
    dtype; a Box's bounds repeated)."""
    if isinstance(space, Bool):
        return Bool((num_stack, *space.shape))
    low = np.broadcast_to(np.asarray(space.low), space.shape)
    high = np.broadcast_to(np.asarray(space.high), space.shape)
    return Box((num_stack, *space.shape), space.dtype, np.stack([low] * num_stack),
               np.stack([high] * num_stack))


class FrameStack(EnvironmentWrapper):
    """`env` observed as its last `num_stack` observations of the episode, stacked on a new
    leading axis ([num_envs, num_stack, *shape], the oldest first), as Gymnasium's
    `FrameStackObservation` (its default padding: an episode's first stack is its first
    observation repeated) and DQN's and PPO's Atari stacks: what a policy needs where one
    observation does not show the state (velocities from positions). A step's final
    observations are the ended episodes' last stacks; where an episode restarts (same-step
    auto-reset) its stack starts again from the new first observation.

    Its state: `frames` [num_envs, num_stack, *shape], the stacks it last gave. Its
    observations depend on earlier ones, so an agent's acting APIs take them as it gives
    them, stacks (`task_observation_space`), and whoever acts on the task from elsewhere
    keeps the same stacks: `evaluate`, a run's periodic evaluation and its videos wrap their
    host environments in `HostFrameStack` (`host_wrapper`, `host_environment`).

    Ale-py's and EnvPool's Atari stack inside the task (`stack_num`); this wrapper stacks any
    task's observations (a vector, planes, frames) on any door.

    Args:
        env: the environment (see `EnvironmentWrapper`); its observations a Box or Bool
            planes (a game's {"obs", "legal"} is refused: its search steps single states).
        num_stack: how many observations each stack holds (1: each as it was, with an axis
            more).
        name: the scope name (default "frame_stack").

    Raises:
        ValueError: `num_stack` is not a positive int, or the observations are a game's.
    """

    def __init__(self, env: Any, num_stack: int, name: str | None = None):
        super().__init__(env, name)
        positive_int(num_stack, "FrameStack: num_stack")
        if isinstance(env.observation_space, Dict):
            raise ValueError(f"FrameStack: a game's observations {env.observation_space} "
                             f"cannot be stacked (its search steps one position, its legal "
                             f"moves are the newest state's); stack a task's Box or Bool "
                             f"observations")
        self.num_stack = num_stack

    @property
    def observation_space(self) -> Box | Bool:
        """The wrapped environment's observation stacked `num_stack` times (same dtype)."""
        return stacked_space(self.env.observation_space, self.num_stack)

    def observation(self, obs: Any) -> Any:
        """Observations from elsewhere come as this wrapper gives them, stacked: unchanged."""
        return obs

    def reset_observation(self, obs: Any) -> Any:
        """Every episode's first stack: its first observation repeated."""
        frames = first_stacks(obs, self.num_stack)
        self._frames()
        self.set_state("frames", frames)
        return frames

    def step_result(self, out: Any) -> Any:
        """The step's observations pushed into the stacks (a new episode's starting again),
        its final observations into the ended episodes' last stacks."""
        frames = self._frames()
        done = out.terminated | out.truncated
        stacks = pushed(frames, out.obs, done)
        self.set_state("frames", stacks)
        final = pushed(frames, out.final_obs, jnp.zeros_like(done))
        return out._replace(obs=stacks, final_obs=final)

    def _frames(self) -> Any:
        space = self.observation_space
        return self.get_state("frames", jnp.zeros((self.num_envs, *space.shape), space.dtype))

    def host_wrapper(self) -> functools.partial:
        """A host vector env (the task's) observed through the same stacks: `HostFrameStack`
        of `num_stack`."""
        return functools.partial(HostFrameStack, num_stack=self.num_stack)


class HostFrameStack:
    """A host vector env (Gymnasium's API with same-step auto-reset: the native pool, ale-py's,
    `gymnasium.make_vec`'s) whose observations are `FrameStack`'s stacks, kept in NumPy with
    the same arithmetic (`pushed`): what an evaluation acts on for an agent that trained on
    stacks. `reset` and `step` return what the env's return, the observations stacked; every
    other attribute is the env's."""

    def __init__(self, env: Any, num_stack: int):
        positive_int(num_stack, "HostFrameStack: num_stack")
        self.env, self.num_stack = env, num_stack
        self.frames: np.ndarray | None = None

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, Any]:
        """The env reset; every stack its first observation repeated."""
        obs, info = self.env.reset(**kwargs)
        self.frames = first_stacks(np.asarray(obs), self.num_stack, np)
        return self.frames, info

    def step(self, action: Any) -> tuple[Any, ...]:
        """The env stepped; its observations pushed into the stacks (a restarted episode's
        stack starting again)."""
        if self.frames is None:
            raise RuntimeError("HostFrameStack: step before reset")
        obs, reward, terminated, truncated, info = self.env.step(action)
        done = np.asarray(terminated) | np.asarray(truncated)
        self.frames = pushed(self.frames, np.asarray(obs), done, np)
        return self.frames, reward, terminated, truncated, info

    def __getattr__(self, name: str) -> Any:
        if name == "env":  # (not yet set: no recursion)
            raise AttributeError(name)
        return getattr(self.env, name)
