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
from components.envs.engine.in_graph import InGraphEnv
from components.envs.engine.threads import resolve_threads
from components.envs.games import GAME_IDS, is_game, observation_shape


class GameState(NamedTuple):
    """A batch of games (leading axes [..., n]).

    Attributes:
        env_state: the engine's opaque state, uint32[..., W, n, 2] (the in-graph door's).
        observation: float32[..., n, rows, columns, planes], from the current player's view.
        current_player: int32[..., n], the player to move (0 or 1).
        legal_action_mask: bool[..., n, num_actions], the current player's legal actions.
        rewards: float32[..., n, 2], each player's reward from the last step (zeros after init).
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
    """Batched self-play of a game id ("ConnectFour-v0", "Othello-v0", "Hex-v0").

    Args:
        env_id: the game.
        num_threads: C++ threads stepping inside the program; None: every core.
    """

    env_id: str
    num_threads: int | None = None
    # The in-graph door that steps the games (a SelfPlay hashes by its id and threads: a static
    # argument of jax.jit).
    door: InGraphEnv = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not is_game(self.env_id):
            raise ValueError(f"SelfPlay: {self.env_id!r} is not a two-player game; games: "
                             f"{list(GAME_IDS)} (or OpenSpiel's names)")
        object.__setattr__(self, "env_id", catalogue.canonical_id(self.env_id))
        threads = resolve_threads(self.num_threads, None, f"SelfPlay({self.env_id!r})")
        object.__setattr__(self, "door", InGraphEnv(catalogue.spec(self.env_id), threads))

    @property
    def num_actions(self) -> int:
        """Actions of the game (the legal mask's last axis)."""
        return int(catalogue.spec(self.env_id).action_space.n)

    @property
    def observation_shape(self) -> tuple[int, int, int]:
        """(rows, columns, planes) of an observation."""
        return observation_shape(self.env_id)

    def init(self, key: jax.Array, num_games: int) -> GameState:
        """`num_games` games at their first position (player 0 to move)."""
        door = self.door
        env_state, obs = door.reset(key, num_games)
        batch = obs.shape[:-1]
        return GameState(env_state, self._planes(obs), jnp.zeros(batch, jnp.int32),
                         door.legal_mask(env_state), jnp.zeros(batch + (2,), jnp.float32),
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
        return state, self._planes(final)

    def _step(self, state: GameState, action: Any, final_obs: bool
              ) -> tuple[GameState, jax.Array | None]:
        # One call steps the games and gives the next positions' legal moves; the final
        # observations are written only when asked for.
        env_state, obs, _, terminated, truncated, final, extras, legal = (
            self.door.step_with_legal_mask(state.env_state, action, final_obs=final_obs))
        # A game that ended started again: player 0 moves first in it.
        current = jnp.where(terminated | truncated, 0, extras[..., 0]).astype(jnp.int32)
        return (GameState(env_state, self._planes(obs), current, legal, extras[..., 1:3],
                          terminated, truncated), final)

    def playout(self, state: GameState, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Random playouts, natively, from every game's position (`state` is left as it is):
        uniformly random legal moves to the end, as OpenSpiel's random rollouts play them,
        each game drawing from its own stream of `key`. Returns (`returns` float32[..., n,
        2], each player's outcome: +1 win, -1 loss, 0 draw; `length` int32[..., n], the moves
        played)."""
        _, extras, length = self.door.playout(state.env_state, key)
        return extras[..., 1:3], length

    def _planes(self, obs: jax.Array) -> jax.Array:
        return obs.reshape(obs.shape[:-1] + self.observation_shape)

