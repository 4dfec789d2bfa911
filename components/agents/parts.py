"""The swappable parts of a built-in agent: its environments, its policy, its loss and its
optimizer, given by the user or made from the agent's defaults.

- `env`: the environments the agent steps, a component with `reset(key)` and `step(action)`
  APIs as `Environment` has them (a `StepResult`), and its `num_envs`, `observation_space`
  and `action_space`: an `Environment` made otherwise (its threads, its door), or a user's
  component around one (reward shaping, a curriculum). It must step the agent's environment
  (its `env_spec`, where it has one, names the agent's id) and as many copies as the config
  asks for (`num_envs`); the config's switches may wrap it further (`wrapped`). A game's
  `num_players`, its mask by name and the agents' self-play follow from the id, whichever
  component steps it.

- `policy`: any component with the APIs the agent calls. A `Policy` given by the user keeps
  its constructor's settings and takes the agent's (its config's) for the others
  (`Policy.set_defaults`): `policy=Policy(space, torso=MyTorso())` has the config's hidden
  widths, activation, initialisation and log std.
- `loss`: a component with a `loss(...)` API returning `(total, stats)`, or a function of the
  agent's model (policy or Q-network) returning one: `loss=lambda policy: PPOLoss(policy,
  clip=0.1)`. A loss component given as such must be over the model the agent trains, so it
  needs the model to be given too (`policy=` / `q_network=`).
- `optimizer`: an optax `GradientTransformation` (`optax.rmsprop(1e-3)`), wrapped in the
  agent's `Optimizer` component over the loss, with the config's `max_grad_norm` clipping.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import optax

import metagraph as mg
from components.agents.agent_settings import AgentSettings
from components.envs.engine.catalogue import resolved_id
from components.envs.engine.symmetry import Symmetry
from components.envs.environment import Environment
from components.envs.wrappers import (
    ActionRepeat,
    ClipAction,
    FlattenObservation,
    FrameStack,
    NormalizeObservation,
    NormalizeReward,
    wrapper_of,
)
from components.optimizer import Optimizer
from components.policy import MaskedPolicy, Policy
from metagraph.api import api_specs
from metagraph.spaces import Dict, Space

LossPart = mg.Component | Callable[[mg.Component], mg.Component] | None


def make_env(agent: str, env: mg.Component | None, env_id: str, config: AgentSettings,
             count: str = "num_envs", vectors: bool = True) -> mg.Component:
    """The agent's environments: `Environment(env_id, n, door=config.door,
    **config.env_kwargs)` by default, n the config's field `count`; a user's component is
    checked to have what the agents call and to step `env_id` n times over. Either takes
    each action `config.action_repeat` times (`ActionRepeat`) and stacks the last
    `config.frame_stack` observations (`FrameStack`) where those are above 1. With `vectors`
    (an agent whose network reads vectors) observations of more than one axis come through
    `FlattenObservation` (`vector_observations`).

    Raises:
        TypeError: `env` is no component, or lacks an API or attribute the agents use.
        ValueError: `env` steps another environment or another number of copies.
    """
    if isinstance(config, tuple):  # the old spelling: (count, door, env_kwargs)
        warnings.warn("make_env(agent, env, env_id, (field, n), door, env_kwargs) is "
                      "deprecated: pass the config, make_env(agent, env, env_id, config, "
                      "field)", DeprecationWarning, stacklevel=2)
        (field, n), door, env_kwargs = config, count, vectors
        made = _environments(agent, env, env_id, field, n, door, env_kwargs)
        return made
    made = _environments(agent, env, env_id, count, getattr(config, count), config.door,
                         config.env_kwargs)
    if getattr(config, "action_repeat", 1) > 1:
        made = ActionRepeat(made, config.action_repeat)
    if getattr(config, "frame_stack", 1) > 1:
        made = FrameStack(made, config.frame_stack)
    return vector_observations(made) if vectors else made


def _environments(agent: str, env: mg.Component | None, env_id: str, field: str, n: int,
                  door: str, env_kwargs: dict[str, Any]) -> mg.Component:
    if env is None:
        return Environment(env_id, n, door=door, **env_kwargs)
    if not isinstance(env, mg.Component):
        raise TypeError(f"{agent}: env must be a Component with reset(key) and step(action) "
                        f"APIs (an Environment, or yours around one), got "
                        f"{type(env).__name__}")
    missing = [f"API {name}" for name in ("reset", "step") if name not in api_specs(type(env))]
    missing += [name for name in ("num_envs", "observation_space", "action_space")
                if not hasattr(env, name)]
    if missing:
        raise TypeError(f"{agent}: env {type(env).__name__} has no {', '.join(missing)}; an "
                        f"agent's environments have what Environment has")
    if env.num_envs != n:
        raise ValueError(f"{agent}: env steps {env.num_envs} environments; the config's "
                         f"{field} is {n}")
    spec = getattr(env, "env_spec", None)
    if spec is not None and resolved_id(spec.env_id) != resolved_id(env_id):
        raise ValueError(f"{agent}: env steps {spec.env_id}; the agent is for {env_id}")
    return env


def wrapped(env: mg.Component, config: Any) -> mg.Component:
    """`env` in the wrappers a config's switches ask for (each off where the config has no
    such field), innermost first: `ClipAction` (`clip_actions`), `NormalizeObservation`
    (`normalise_observations`, `clip_observations`), `NormalizeReward` (`normalise_rewards`,
    its `gamma`, `clip_rewards`), as PureJaxRL stacks them for continuous control."""
    if getattr(config, "clip_actions", False):
        env = ClipAction(env)
    if getattr(config, "normalise_observations", False):
        env = NormalizeObservation(env, clip=config.clip_observations)
    if getattr(config, "normalise_rewards", False):
        env = NormalizeReward(env, config.gamma, clip=config.clip_rewards)
    return env


def vector_observations(env: mg.Component) -> mg.Component:
    """`env` for a network that reads vectors (an MLP): itself where its observations are
    vectors already (a game's "obs" entry), else `FlattenObservation(env)`, whose space says
    so."""
    space = env.observation_space
    observed = space.spaces["obs"] if isinstance(space, Dict) else space
    return env if len(observed.shape) == 1 else FlattenObservation(env)


def cnn_input_shape(agent: str, env_id: str, env: mg.Component) -> tuple[int, int, int] | None:
    """What a CNN over the agent's observations needs to know of their layout: None where
    they are images already ([H, W, C], or Atari's [C, H, W]) or a `FrameStack`'s stacks of
    them (`stacked_images`); the planes a task declares for vectors (`EnvSpec.planes`: rows,
    columns, planes) otherwise.

    Raises:
        ValueError: the observations are neither images nor planes.
    """
    shape = tuple(int(d) for d in env.observation_space.shape)
    if len(shape) == 3:
        return None
    if stacked_images(env):
        return None  # the CNN folds the stacks into its channels (`stacked`)
    planes = getattr(getattr(env, "env_spec", None), "planes", None)
    if planes is None:
        raise ValueError(f"{agent}: cnn_channels needs images [H, W, C] or planes; "
                         f"{env_id}'s observations have shape {shape} and its task declares "
                         f"no planes (rows, columns, planes in its info)")
    return planes


def stacked_images(env: mg.Component) -> bool:
    """Whether the agent's observations are a `FrameStack`'s stacks of images [k, *image],
    which a CNN folds into its channels (`CNN(stacked=True)`)."""
    return len(env.observation_space.shape) == 4 and wrapper_of(env, FrameStack) is not None


def learnt_symmetries(agent: str, env: mg.Component, augment: bool) -> tuple[Symmetry, ...]:
    """The symmetries an agent learns each position under (`augment`): its environment's
    game's (`EnvSpec.symmetries`); none without `augment`. A ValueError naming the agent
    where `augment` is asked of a game that declares none."""
    if not augment:
        return ()
    spec = getattr(env, "env_spec", None)
    symmetries = tuple(getattr(spec, "symmetries", ()))
    if not symmetries:
        what = spec.env_id if spec is not None else type(env).__name__
        raise ValueError(f"{agent}: augment = true, and {what} declares no symmetries of its "
                         f"board (EnvSpec.symmetries: components.envs.board_symmetries makes "
                         f"them); set augment = false")
    return symmetries


def make_policy(policy: mg.Component | None, action_space: Space, value: str | None,
                observation_space: Space | None = None, **settings: Any) -> mg.Component:
    """The agent's policy: by default the one its observations call for
    (`policy_for(observation_space)`: a `MaskedPolicy` where they carry a legal-action mask,
    a game's {"obs", "legal"}; else a `Policy`) of `action_space`, `value` and `settings`;
    a user's `Policy` takes `settings` for those its constructor was not given
    (`Policy.set_defaults`); any other component is the agent's as it is."""
    if policy is None:
        return policy_for(observation_space)(action_space, value=value, **settings)
    if isinstance(policy, Policy):
        policy.set_defaults(**settings)
    return policy


def policy_for(observation_space: Space | None) -> type[Policy]:
    """The policy class for observations of `observation_space`: `MaskedPolicy` for a `Dict`
    with a "legal" mask (one policy plays every side of a game, the mask by name), `Policy`
    otherwise."""
    if isinstance(observation_space, Dict) and "legal" in observation_space.spaces:
        return MaskedPolicy
    return Policy


def make_loss(agent: str, loss: LossPart, model: mg.Component, model_given: bool,
              default: Callable[[mg.Component], mg.Component]) -> mg.Component:
    """The agent's loss component: `default(model)`, the user's component, or the user's
    factory called with the model."""
    if loss is None:
        made = default(model)
    elif isinstance(loss, mg.Component):
        if not model_given:
            raise TypeError(f"{agent}: a loss component must be over the model this agent "
                            f"trains: pass the model too, or the loss as a function of it "
                            f"(loss=lambda model: MyLoss(model))")
        made = loss
    elif callable(loss):
        made = loss(model)
    else:
        raise TypeError(f"{agent}: loss must be a Component or a function of the model "
                        f"returning one, got {type(loss).__name__}")
    if not isinstance(made, mg.Component) or "loss" not in api_specs(type(made)):
        raise TypeError(f"{agent}: the loss must be a Component with a loss(...) API returning "
                        f"(total, stats), got {type(made).__name__}")
    return made


def learning_rate(config: Any, updates: int) -> float | optax.Schedule:
    """The default optimizer's step size: `config.learning_rate`, falling linearly to 0 over
    the run's `updates` optimizer steps where `config.anneal_lr` (PPO's, DQN's, IMPALA's and
    AlphaZero's annealing, as PureJaxRL and CleanRL anneal)."""
    if getattr(config, "anneal_lr", False):
        return optax.linear_schedule(config.learning_rate, 0.0, max(1, updates))
    return config.learning_rate


def make_optimizer(agent: str, optimizer: optax.GradientTransformation | None,
                   loss: mg.Component, model: mg.Component,
                   default: optax.GradientTransformation, max_grad_norm: float | None,
                   flat: bool = True) -> Optimizer:
    """The agent's `Optimizer` component minimising `loss.loss` over `model`'s parameters with
    `optimizer` (the default transformation when None), gradients clipped to `max_grad_norm`
    first (0 or None: unclipped). The default runs flat (one fused
    update, see `Optimizer(flat=True)`) unless `flat=False`; a user's transformation runs per
    array, which every optax transformation supports."""
    if optimizer is not None and not isinstance(optimizer, optax.GradientTransformation):
        raise TypeError(f"{agent}: optimizer must be an optax GradientTransformation (e.g. "
                        f"optax.rmsprop(1e-3)), got {type(optimizer).__name__}")
    transform = default if optimizer is None else optimizer
    return Optimizer(loss, "loss", transform, max_grad_norm=max_grad_norm or None, has_aux=True,
                     wrt=model, flat=flat and optimizer is None)
