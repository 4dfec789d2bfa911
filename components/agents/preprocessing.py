"""An agent's optional observation preprocessor: a component applied to observations before
the policy (or Q-network) sees them.

The contract, for a user's own component:

- an API `forward(obs)` returning the observations the policy sees (same leading axes);
- optionally an API `update(obs)`, called on each rollout step's observations before
  `forward`, for a stateful preprocessor (a running mean and variance): its statistics change
  during rollouts only, never while the agent learns or acts greedily.

Both APIs are called with several batch sizes inside an agent (the rollout's `num_envs`, a
learning batch, `greedy`'s batch), so declare them `@mg.api(polymorphic=True)`.
"""

from __future__ import annotations

from typing import Any

import metagraph as mg
from components.envs.wrappers import task_observations
from metagraph.api import api_specs


def check_preprocessor(agent: str, preprocessor: Any) -> mg.Component | None:
    """`preprocessor` if it is None or a component with a `forward(obs)` API, else a TypeError
    naming the agent and what was expected."""
    if preprocessor is None:
        return None
    if not isinstance(preprocessor, mg.Component) or "forward" not in api_specs(
            type(preprocessor)):
        raise TypeError(f"{agent}: preprocessor must be a Component with an API forward(obs) "
                        f"(and optionally update(obs)), got {type(preprocessor).__name__}")
    return preprocessor


def acting_view(env: mg.Component, preprocessor: mg.Component | None, observation: Any) -> Any:
    """What the policy sees of the task's own observations when an agent acts on them
    (`greedy`, `act`): the environment's wrappers' `observation` applied
    (`components.envs.wrappers.task_observations`), then the preprocessor (not updated)."""
    return preprocess(preprocessor, task_observations(env, observation))


def preprocess(preprocessor: mg.Component | None, obs: Any, update: bool = False) -> Any:
    """The observations the policy sees: `obs` itself without a preprocessor; with one, its
    `forward(obs)`, after `update(obs)` when `update` is True and it has that API."""
    if preprocessor is None:
        return obs
    if update and "update" in api_specs(type(preprocessor)):
        preprocessor.update(obs)
    return preprocessor.forward(obs)
