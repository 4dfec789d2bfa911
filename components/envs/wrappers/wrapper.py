"""`EnvironmentWrapper`: a component around an environment with the same API, changing
nothing; a transformation overrides `observation` and `observation_space` (what `reset` and
`step` give), `action` (what the wrapped environment is stepped with), or, for one that learns
from what it sees or changes rewards, `reset_observation` and `step_result` (with
`extras_spaces` where it adds entries to a step's `extras`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import metagraph as mg
from metagraph.spaces import Bool, Box, Dict, Record, Space


class EnvironmentWrapper(mg.Component):
    """`env` (an `Environment`, or a wrapper of one) with the same APIs and attributes.

    Args:
        env: the environment to wrap: a component with `reset(key)` and `step(action)` APIs
            returning what `Environment`'s return, and its `num_envs`, `observation_space`
            and `action_space`.
        name: the scope name (default: the class name in snake case).
    """

    def __init__(self, env: mg.Component, name: str | None = None):
        super().__init__(name)
        self.env = env

    # ---- what the wrapped environment has, unchanged ----------------------------------------
    @property
    def unwrapped(self) -> mg.Component:
        """The environment under every wrapper."""
        return getattr(self.env, "unwrapped", self.env)

    @property
    def num_envs(self) -> int:
        """How many environments each step drives."""
        return self.env.num_envs

    @property
    def env_spec(self) -> Any:
        """The task's `EnvSpec` (None where the wrapped component has none)."""
        return getattr(self.env, "env_spec", None)

    @property
    def door(self) -> str | None:
        """The door the environments are stepped through."""
        return getattr(self.env, "door", None)

    @property
    def action_space(self) -> Space:
        """One environment's action space."""
        return self.env.action_space

    def batch_action_space(self) -> Space:
        """The space of one `step`'s actions: all `num_envs` environments at once."""
        return self.env.batch_action_space()

    @property
    def functional(self) -> Any:
        """The wrapped environment's functional door (`Environment.functional`; None where it
        has none): what a search steps the same games through."""
        return getattr(self.env, "functional", None)

    def env_state(self) -> Any:
        """The wrapped environments' in-graph state (see `Environment.env_state`)."""
        return self.env.env_state()

    # ---- what a transformation overrides ----------------------------------------------------
    @property
    def observation_space(self) -> Space:
        """One environment's observation space as this wrapper gives it."""
        return self.env.observation_space

    def observation(self, obs: Any) -> Any:
        """The wrapped environment's observations [num_envs, ...] as this wrapper gives them;
        also what an agent applies to observations from elsewhere (an evaluation's)."""
        return obs

    def action(self, action: Any) -> Any:
        """The actions the wrapped environment is stepped with, from the ones given."""
        return action

    def reset_observation(self, obs: Any) -> Any:
        """What `reset` gives of the wrapped environment's first observations: `observation`
        (a wrapper that learns from what it sees, a normaliser, overrides it)."""
        return self.observation(obs)

    def step_result(self, out: Any) -> Any:
        """What `step` gives of the wrapped environment's `StepResult`: its observations and
        final observations through `observation` (a wrapper of rewards overrides it)."""
        return out._replace(obs=self.observation(out.obs),
                            final_obs=self.observation(out.final_obs))

    def host_wrapper(self) -> Callable[[Any], Any] | None:
        """What acting from elsewhere needs of this wrapper on the host, where one observation
        or one action at a time cannot say it: a picklable function wrapping a host vector
        env (the task's, an evaluation's) so that it does what this wrapper does (`FrameStack`:
        `HostFrameStack`, its stacks; `ActionRepeat`: `HostActionRepeat`, its repeats), or
        None where the acting APIs apply `observation` and `action` (here)."""
        return None

    def stepped(self, action: Any) -> Any:
        """The wrapped environment's `StepResult` for `action` (already through `action`): its
        `step`; an action repeat steps it several times."""
        return self.env.step(action)

    def extras_spaces(self) -> dict[str, Space]:
        """The named entries this wrapper adds to a step's `extras` (its `step_result` puts
        them there), each with its space [num_envs, ...]; none here."""
        return {}

    # ---- APIs --------------------------------------------------------------------------------
    @mg.api(outputs=lambda self: batched(self.observation_space, self.num_envs))
    def reset(self, key):
        """Reset every environment (from `key`); returns their first observations."""
        return self.reset_observation(self.env.reset(key))

    @mg.api(inputs={"action": lambda self: self.batch_action_space()},
            outputs=lambda self: self._step_space())
    def step(self, action):
        """Step every environment with `action` (the wrapped environment's `StepResult`, its
        observations and final observations as this wrapper gives them)."""
        return self.step_result(self.stepped(self.action(action)))

    def _step_space(self) -> Record:
        inner = self.env._step_space()
        observed = batched(self.observation_space, self.num_envs)
        spaces = {**inner.spaces, "obs": observed, "final_obs": observed}
        added = self.extras_spaces()
        if added:
            extras = inner.spaces.get("extras")
            named = dict(extras.spaces) if isinstance(extras, Dict) else {}
            spaces["extras"] = Dict({**named, **added})
        return Record(inner.record_type, spaces)


def wrappers_of(env: Any) -> list[EnvironmentWrapper]:
    """The wrappers around `env`'s environment, the outermost first (`env` itself included;
    none where it is no wrapper)."""
    chain = []
    while isinstance(env, EnvironmentWrapper):
        chain.append(env)
        env = env.env
    return chain


def _acting_wrappers(env: Any) -> tuple[list[EnvironmentWrapper], EnvironmentWrapper | None]:
    """The wrappers whose `observation` an acting API applies (those above the outermost one
    with a `host_wrapper`), the outermost first, and that one (None where none has one)."""
    chain = wrappers_of(env)
    kept = next((i for i, wrapper in enumerate(chain) if wrapper.host_wrapper() is not None),
                None)
    if kept is None:
        return chain, None
    return chain[:kept], chain[kept]


def task_observation_space(env: Any) -> Space:
    """One observation as an agent's acting APIs take it: the task's (`env`'s `unwrapped`
    environment's; `env`'s own where it is no wrapper), or, under a wrapper that acting from
    elsewhere repeats on the host (a `host_wrapper`: `FrameStack`, `ActionRepeat`), what the
    outermost such wrapper gives (`host_environment`)."""
    _, kept = _acting_wrappers(env)
    if kept is not None:
        return kept.observation_space
    return getattr(env, "unwrapped", env).observation_space


def task_observations(env: Any, obs: Any) -> Any:
    """Observations of `task_observation_space` as `env` gives them: the `observation` of
    each wrapper above the task (or above the outermost wrapper with a `host_wrapper`)
    applied, the innermost first. What an agent's acting APIs apply to observations from
    elsewhere (an evaluation's, `predict`'s), so that a policy acts on the bare task as it
    acted in training."""
    above, _ = _acting_wrappers(env)
    for wrapper in reversed(above):
        obs = wrapper.observation(obs)
    return obs


def host_wrappers(env: Any) -> list[Callable[[Any], Any]]:
    """What a host vector env of the task (an evaluation's) is wrapped in, the innermost
    first, to act as an agent stepping `env` acts (`task_observation_space`): nothing, or
    each wrapper's `host_wrapper` up to the outermost one that has one. Picklable (a video
    rendered in a process of its own applies them).

    Raises:
        ValueError: a wrapper that changes observations lies under one with a `host_wrapper`
            (the host would need it too: wrap it outside). Actions need nothing here: the
            acting APIs apply every wrapper's `action` (`task_actions`).
    """
    _, kept = _acting_wrappers(env)
    if kept is None:
        return []
    found = []
    for wrapper in reversed(wrappers_of(kept)):
        host = wrapper.host_wrapper()
        if host is None and _changes_observations(wrapper):
            raise ValueError(f"{type(wrapper).__name__} changes the observations under "
                             f"{type(kept).__name__}, which acting from elsewhere "
                             f"repeats on the host: wrap {type(wrapper).__name__} around "
                             f"{type(kept).__name__} instead")
        if host is not None:
            found.append(host)
    return found


def host_environment(env: Any, vector_env: Any) -> Any:
    """`vector_env`, the task's on the host, in `host_wrappers(env)`: what an agent stepping
    `env` acts on (itself where no wrapper has a `host_wrapper`)."""
    for wrap in host_wrappers(env):
        vector_env = wrap(vector_env)
    return vector_env


def outermost_wrapper(root: mg.Component) -> EnvironmentWrapper | None:
    """The first `EnvironmentWrapper` among `root` and its sub-components, breadth first (an
    agent's wrapped environments: a wrapper's own environment lies deeper), or None."""
    level = [root]
    while level:
        found = next((c for c in level if isinstance(c, EnvironmentWrapper)), None)
        if found is not None:
            return found
        level = [child for component in level for _, child in component.sub_components()]
    return None


def _changes_observations(wrapper: EnvironmentWrapper) -> bool:
    cls = type(wrapper)
    return any(getattr(cls, name) is not getattr(EnvironmentWrapper, name)
               for name in ("observation", "observation_space", "reset_observation"))


def wrapper_of(env: Any, kind: type) -> Any:
    """The outermost wrapper of class `kind` around `env`'s environment (`env` itself
    included), or None."""
    return next((wrapper for wrapper in wrappers_of(env) if isinstance(wrapper, kind)), None)


def task_actions(env: Any, action: Any) -> Any:
    """The actions the environment under `env`'s wrappers is stepped with when `env` is given
    `action`: each wrapper's `action` applied, the outermost first (a component that is no
    wrapper passes them as they are). What an agent's acting APIs give, so that a policy
    evaluated on the task alone acts as it acted in training."""
    while isinstance(env, EnvironmentWrapper):
        action = env.action(action)
        env = env.env
    return action


def batched(space: Space, n: int) -> Space:
    """`space` with a leading axis of `n` (each entry of a Dict; a Box keeps its dtype, not
    its bounds): the space of a batch of environments' observations."""
    if isinstance(space, Dict):
        return Dict({k: batched(v, n) for k, v in space.spaces.items()})
    if isinstance(space, Bool):
        return Bool((n, *space.shape))
    return Box((n, *space.shape), space.dtype)
