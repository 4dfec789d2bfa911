"""`ActionRepeat`: each action taken k times, the rewards summed, an episode's end ending the
step; `HostActionRepeat`, the same repeats on a host vector env (what acting from elsewhere,
an evaluation's, needs)."""

from __future__ import annotations

import functools
from typing import Any

import jax.numpy as jnp
import numpy as np

from components.envs.engine.functional import where_leading
from components.envs.wrappers.wrapper import EnvironmentWrapper
from metagraph.checks import positive_int


class ActionRepeat(EnvironmentWrapper):
    """`env` stepped `repeats` times with each action, as Brax's and Acme's `action_repeat`
    and the frame skip of Atari's recipes (without their max-pooling): a step's reward is the
    sum of the rewards of its steps of the task; an episode that ends inside the repeat ends
    the step there, its environment not stepped for the rest of it (its state kept:
    `Environment.step_where`), and the step gives what the task gave at that end (its
    `final_obs`, its successor's first observation, `terminated`/`truncated`); the others give
    their last step's. The task's `extras` are its last step's.

    It wraps an `Environment` of an in-graph door directly: only the program's own state can
    leave some environments unstepped (the host and gymnasium doors' pools step all at once:
    refused; Atari's and MuJoCo's tasks take a `frame_skip` of their own). Each of the
    repeat's steps is traced (a program k steps long): a few (2-8), not hundreds.

    An agent acts on the task as it trained, an action every `repeats` steps: `evaluate`,
    the periodic evaluation and the videos step their host environments through
    `HostActionRepeat` (`host_wrapper`).

    Args:
        env: an `Environment` (door "native" or "jax"; no game: a player's move is one move).
        repeats: how many times each action is taken (1: once, as the task).
        name: the scope name (default "action_repeat").

    Raises:
        TypeError: `env` is no `Environment` (a wrapper around one: wrap it outside).
        ValueError: `repeats` is not a positive int; the door is a pool's; the task is a game.
    """

    def __init__(self, env: Any, repeats: int, name: str | None = None):
        super().__init__(env, name)
        positive_int(repeats, "ActionRepeat: repeats")
        if not callable(getattr(env, "step_where", None)):
            raise TypeError(f"ActionRepeat: env must be an Environment (it steps some of its "
                            f"environments, `Environment.step_where`), got "
                            f"{type(env).__name__}: wrap {type(env).__name__} around the "
                            f"ActionRepeat instead")
        if not env.steps_some:
            raise ValueError(f"ActionRepeat: the {env.door} door's pool steps all its "
                             f"environments at once, so an episode ending inside a repeat "
                             f"could not stop there; use door 'native' or 'jax' (or the task's "
                             f"own frame_skip where it has one: Atari, MuJoCo)")
        if getattr(env, "legal_actions", False):
            raise ValueError(f"ActionRepeat: {env.env_spec.env_id} is a game; a move is "
                             f"played once")
        self.repeats = repeats

    def stepped(self, action: Any) -> Any:
        """The task stepped up to `repeats` times with `action`, each environment until its
        episode ends (see the class docstring)."""
        out = self.env.step(action)
        ended = out.terminated | out.truncated
        reward = out.reward
        for _ in range(self.repeats - 1):
            going = ~ended
            more = self.env.step_where(action, going)
            reward = reward + jnp.where(going, more.reward, 0.0)
            out = where_leading(going, more, out)
            ended = ended | (going & (more.terminated | more.truncated))
        return out._replace(reward=reward)

    def host_wrapper(self) -> functools.partial:
        """A host vector env (the task's) stepped with the same repeats: `HostActionRepeat`."""
        return functools.partial(HostActionRepeat, repeats=self.repeats)


class HostActionRepeat:
    """A host vector env (Gymnasium's API with same-step auto-reset) whose `step` takes each
    action `repeats` times, as `ActionRepeat` does in a program: the rewards summed up to each
    environment's first end inside the repeat, and what the env gave at that end (its
    observation, `terminated`, `truncated`, `info`'s entries are the last step's). A pool
    steps all its environments at once, so an environment whose episode ended inside the
    repeat goes on into its next episode with the same action for the rest of it: what an
    evaluation playing one episode an environment (`evaluate`'s) never counts. Every other
    attribute is the env's."""

    def __init__(self, env: Any, repeats: int):
        positive_int(repeats, "HostActionRepeat: repeats")
        self.env, self.repeats = env, repeats

    def reset(self, **kwargs: Any) -> tuple[Any, Any]:
        """The env reset."""
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, ...]:
        """The env stepped `repeats` times with `action` (see the class docstring)."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        obs, total = np.array(obs), np.array(reward, np.float64)
        terminated, truncated = np.array(terminated), np.array(truncated)
        ended = terminated | truncated
        for _ in range(self.repeats - 1):
            more, reward, more_terminated, more_truncated, info = self.env.step(action)
            going = ~ended
            total += np.where(going, reward, 0.0)
            obs[going] = np.asarray(more)[going]
            terminated[going] = np.asarray(more_terminated)[going]
            truncated[going] = np.asarray(more_truncated)[going]
            ended |= going & (terminated | truncated)
        return obs, total, terminated, truncated, info

    def __getattr__(self, name: str) -> Any:
        if name == "env":  # (not yet set: no recursion)
            raise AttributeError(name)
        return getattr(self.env, name)
