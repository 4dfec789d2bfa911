"""A batch of games for self-play, in pgx's shape: `init(key, num_games)` and `step(state,
action)` give a `GameState` holding the observation, the current player, the legal-action mask
and each player's reward. It is a thin layer over the in-graph door (`InGraphEnv`: the native
game through the XLA FFI), so it runs under `jax.jit`, `lax.scan` and `jax.vmap`, and any
stored state can be stepped again (tree search):

    games = SelfPlay("ConnectFour-v0")
    state = games.init(jax.random.PRNGKey(0), 256)
    action = policy(state.observation, state.legal_action_mask)  # of state.current_player
    state = games.step(state, action)
    state.rewards  # float32[256, 2]: what the step gave player 0 and player 1

Unlike pgx, a game that ends starts again in the same step (the engine's auto-reset): after a
step with `terminated`, `rewards` and `terminated` are of the game that ended, while
`observation`, `current_player` and `legal_action_mask` are the first of the next game.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from components.envs.engine import catalogue
from components.envs.engine.catalogue import num_players
from components.envs.engine.in_graph import InGraphEnv
from components.envs.engine.spec import frozen
from components.envs.engine.threads import resolve_threads


class GameState(NamedTuple):
    """A batch of games (leading axes [..., n]).

    Attributes:
        env_state: the engine's opaque state, uint32[..., W, n, 2] (the in-graph door's).
        observation: float32[..., n, rows, columns, planes], from the current player's view
            (a game whose task reports no planes: [..., n, *its observation shape]).
        current_player: int32[..., n], the player to move (0 to num_players - 1).
        legal_action_mask: bool[..., n, num_actions], the current player's legal actions.
        rewards: float32[..., n, num_players], each player's reward from the last step (zeros
            after init).
        terminated: bool[..., n], whether the last step ended a game (the next one has begun).
        truncated: bool[..., n], whether the last step reached the step limit (never in a game
            played to its end: the limit is beyond every game's length).
    """

    env_state: jax.Array
    observation: jax.Array
    current_player: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array


@dataclasses.dataclass(frozen=True)
class SelfPlay:
    """Batched self-play of a game: any registered task that declares `num_players()`
    (engine/task.h), the built-in "ConnectFour-v0", "Othello-v0", "Hex-v0" or a user's own.
    Its extras are read by name ("player_to_move", "reward_player_<i>").

    Args:
        env_id: the game.
        num_threads: C++ threads stepping inside the program; None: every core.
        env_kwargs: the game's keyword arguments (a run's `--env-kwargs`), a mapping or its
            items; kept as sorted items (a SelfPlay is hashable).
    """

    env_id: str
    num_threads: int | None = None
    env_kwargs: Any = ()
    # The in-graph door that steps the games (a SelfPlay hashes by its id and threads: a static
    # argument of jax.jit).
    door: InGraphEnv = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if num_players(self.env_id) < 2:
            raise ValueError(f"SelfPlay: {self.env_id!r} is not a game (a task that declares "
                             f"num_players(), engine/task.h: ConnectFour-v0, Othello-v0, "
                             f"Hex-v0, OpenSpiel's names of them, or your own)")
        object.__setattr__(self, "env_id", catalogue.canonical_id(self.env_id))
        object.__setattr__(self, "env_kwargs", frozen(dict(self.env_kwargs)))
        threads = resolve_threads(self.num_threads, None, f"SelfPlay({self.env_id!r})")
        object.__setattr__(self, "door", InGraphEnv(
            catalogue.spec(self.env_id, **dict(self.env_kwargs)), threads))

    @classmethod
    def of(cls, env: Any, env_id: str, env_kwargs: Any = ()) -> SelfPlay:
        """The games an `Environment` steps, searched through the same door: its in-graph
        door where it lends one (the native door: `env.functional`, with the run's keyword
        arguments and threads), so that a run has one door per game; else a door of its own
        for `env_id` with `env_kwargs`."""
        door = getattr(env, "functional", None)
        if not isinstance(door, InGraphEnv):
            return cls(env_id, env_kwargs=env_kwargs)
        lent = object.__new__(cls)
        for name, value in (("env_id", door.env_spec.env_id),
                            ("num_threads", door.num_threads),
                            ("env_kwargs", door.env_spec.kwargs), ("door", door)):
            object.__setattr__(lent, name, value)
        if num_players(lent.env_id) < 2:
            raise ValueError(f"SelfPlay: {lent.env_id!r} is not a game")
        return lent

    @property
    def num_players(self) -> int:
        """The game's players (the rewards' last axis)."""
        return self.door.env_spec.num_players

    def rewards_of(self, extras: dict[str, jax.Array]) -> jax.Array:
        """Each player's reward, float32[..., num_players], from a step's or a playout's
        extras by name ("reward_player_<i>")."""
        return jnp.stack([extras[f"reward_player_{i}"] for i in range(self.num_players)], -1)

    @staticmethod
    def player_to_move(extras: dict[str, jax.Array]) -> jax.Array:
        """The player to move after a step, int32[...] (-1 where the game ended), from its
        extras by name."""
        return extras["player_to_move"].astype(jnp.int32)

    @property
    def num_actions(self) -> int:
        """Actions of the game (the legal mask's last axis)."""
        return int(self.door.env_spec.action_space.n)

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """(rows, columns, planes) of a board's observation (`EnvSpec.planes`); for a game
        whose task reports no planes, its observation space's own shape."""
        spec = self.door.env_spec
        return spec.planes or tuple(int(d) for d in spec.observation_space.shape)

    def init(self, key: jax.Array, num_games: int) -> GameState:
        """`num_games` games at their first position (player 0 to move)."""
        door = self.door
        env_state, obs = door.reset(key, num_games)
        batch = self._batch(obs)
        return GameState(env_state, self.planes(obs), jnp.zeros(batch, jnp.int32),
                         door.legal_mask(env_state),
                         jnp.zeros(batch + (self.num_players,), jnp.float32),
                         jnp.zeros(batch, jnp.bool_), jnp.zeros(batch, jnp.bool_))

    def step(self, state: GameState, action: Any) -> GameState:
        """One move in every game: `action` int32[..., n], each legal for its game's current
        player (an illegal one fails the call, naming its index; no game moves)."""
        return self._step(state, action, final_obs=False)[0]

    def step_with_final_observation(self, state: GameState, action: Any
                                    ) -> tuple[GameState, jax.Array]:
        """`step`, also returning each game's board after the move as planes: for a game that
        ended, its last position (from the view of the player who would have moved next),
        which the new game's `observation` has replaced."""
        state, final = self._step(state, action, final_obs=True)
        return state, self.planes(final)

    def _step(self, state: GameState, action: Any, final_obs: bool
              ) -> tuple[GameState, jax.Array | None]:
        # One call steps the games and gives the next positions' legal moves; the final
        # observations are written only when asked for.
        out = self.door.step(state.env_state, action, final_obs=final_obs, extras=True,
                             legal_mask=True)
        # A game that ended started again: player 0 moves first in it.
        current = jnp.where(out.terminated | out.truncated, 0,
                            self.player_to_move(out.extras))
        return (GameState(out.state, self.planes(out.obs), current, out.legal_mask,
                          self.rewards_of(out.extras), out.terminated, out.truncated),
                out.final_obs)

    def playout(self, state: GameState, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Random playouts, natively, from every game's position (`state` is left as it is):
        uniformly random legal moves to the end, as OpenSpiel's random rollouts play them,
        each game drawing from its own stream of `key`. Returns (`returns` float32[..., n,
        num_players], each player's outcome: +1 win, -1 loss, 0 draw; `length` int32[..., n],
        the moves played)."""
        playout = self.door.playout(state.env_state, key)
        return self.rewards_of(playout.extras), playout.length

    def planes(self, obs: jax.Array) -> jax.Array:
        """The in-graph door's observations [..., n, *obs_shape] as float32 planes [..., n,
        rows, columns, planes]."""
        return obs.reshape(self._batch(obs) + self.observation_shape).astype(jnp.float32)

    def _batch(self, obs: jax.Array) -> tuple[int, ...]:
        # the leading axes of the door's observations, flat [..., obs_dim] or shaped
        return obs.shape[:obs.ndim - len(self.door.env_spec.observation_space.shape)]

