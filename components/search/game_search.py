"""`GameSearch`: Gumbel MuZero search (`mctx.gumbel_muzero_policy`; Danihelka et al. 2022,
"Policy improvement by planning with Gumbel") over a native two-player game, its model the
game itself: `recurrent_fn` steps the C++ game through the in-graph door (`SelfPlay`'s
`InGraphEnv`, the XLA FFI), so search, game and network are one compiled program.

    search = GameSearch(SelfPlay("ConnectFour-v0"), evaluate)  # evaluate(params, planes)
    out = search(params, key, state, num_simulations=32)     # state: a SelfPlay GameState
    out.action, out.action_weights                           # the move, the improved policy

The conventions are pgx's AlphaZero example's, on the engine's games:

- a node's value is from the view of its player to move; a move's reward is the mover's
  (the door's reward). The discount says whose the next position is, as the task reports it
  (its "player_to_move"): -1 where the opponent moves next (its value counts negated), +1
  where the mover moves again (a capture that earns another move), never the ply's parity;
- a move that ends the game has discount 0 (nothing after it counts). The engine's
  auto-reset makes the child of such a move the next game's first position: the search may
  step on from it (always legally), but with discount 0 none of it reaches the root;
- illegal moves: masked at the root (`invalid_actions`), and at every other node their prior
  logits sit at the float32 floor, so Gumbel MuZero's interior selection (the argmax of the
  improved policy minus the visit share) never picks one. An illegal move would fail the whole
  FFI call; tests search thousands of positions to show it never happens.

The tree keeps one embedding per node, batch first: the engine's state of one game,
uint32[W, 1, 2] (the door treats the leading batch axis as more games), a few words where
pgx keeps its whole state, and its player to move, int32 (a `SearchNode`).

Only two-player zero-sum games: a game of more players is refused by name (`SelfPlay`'s
`num_players`).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import jax
import jax.numpy as jnp

from metagraph.errors import MissingExtraError
from metagraph.install_hints import install_hint


class GameModel(Protocol):
    """What the search steps: a batch of native games through an environment's in-graph door
    (its functional interface: `door.step(state, action, extras=, legal_mask=)` and
    `door.playout(state, key)`), with the game's reading of a step's extras.
    `components.envs.games.SelfPlay` is one (`SelfPlay.of(env, ...)`: the `Environment`'s own
    door)."""

    env_id: str
    door: Any

    @property
    def num_players(self) -> int:
        """The game's players (2 for the search)."""

    def planes(self, obs: jax.Array) -> jax.Array:
        """The door's observations [..., n, *obs_shape] as the network's float32 planes."""

    def player_to_move(self, extras: dict[str, jax.Array]) -> jax.Array:
        """The player to move after a step, int32[...] (-1 where the game ended)."""

    def rewards_of(self, extras: dict[str, jax.Array]) -> jax.Array:
        """Each player's reward from a step's or a playout's extras, float32[..., players]."""


class Position(Protocol):
    """A batch of game positions as `GameModel`'s self-play keeps them (`SelfPlay`'s
    `GameState`): the in-graph state, the planes, the legal moves, the player to move."""

    env_state: jax.Array
    observation: jax.Array
    legal_action_mask: jax.Array
    current_player: jax.Array


Evaluate = Callable[[Any, jax.Array], tuple[jax.Array, jax.Array]]
"""`evaluate(params, planes) -> (logits [B, num_actions], value [B])`: the network, `planes`
float32[B, rows, columns, planes] from the view of the player to move, `value` that player's
expected outcome in [-1, 1]."""


def require_mctx() -> Any:
    """The `mctx` module, or an ImportError saying how to install it (the `games` extra)."""
    try:
        import mctx
    except ImportError as error:
        raise MissingExtraError(f"search over the games needs mctx: {install_hint('games')} "
                          "(or pip install mctx)") from error
    return mctx


def floor_illegal(logits: jax.Array, legal: jax.Array) -> jax.Array:
    """Logits shifted so their maximum is 0, the illegal ones (`legal` false) at the float32
    floor: what mctx's `_mask_invalid_actions` does at the root, for every other node."""
    logits = logits - jnp.max(logits, axis=-1, keepdims=True)
    return jnp.where(legal, logits, jnp.finfo(logits.dtype).min)


def embedding_of(env_state: jax.Array) -> jax.Array:
    """A batch of games' in-graph state uint32[W, n, 2] as search embeddings, batch first:
    uint32[n, W, 1, 2] (n games of one game each, to the door)."""
    return jnp.moveaxis(env_state, -2, 0)[:, :, None, :]


class SearchNode(NamedTuple):
    """A search tree node's embedding (batch first): the game's in-graph state
    (`embedding_of`) and its player to move, int32 (what the next move's discount compares
    with the player to move after it)."""

    state: jax.Array
    to_move: jax.Array


@dataclasses.dataclass(frozen=True)
class GameSearch:
    """Gumbel MuZero over `game` with the network `evaluate` (see the module docstring).

    Args:
        game: the native games (a `GameModel`: `SelfPlay`), stepped inside the search.
        evaluate: `evaluate(params, planes) -> (logits, value)` (`Evaluate`).
        max_num_considered_actions: actions sequential halving considers at the root.
        rollouts: random playouts (`SelfPlay.playout`, native) from every position the
            search expands; their mean outcome for the player to move is mixed into the
            network's value (AlphaGo's leaf evaluation: Silver et al. 2016; the root keeps
            the network's). 0: none.
        rollout_weight: the playouts' share of a position's value, in [0, 1] (AlphaGo's
            lambda), with `rollouts` > 0.
        prior_temperature: the network's logits are divided by it before the search reads
            them as its prior (> 0; 1: as they are; larger: a flatter prior, which leaves more
            of the choice to the search's values).
    """

    game: GameModel
    evaluate: Evaluate
    max_num_considered_actions: int = 16
    rollouts: int = 0
    rollout_weight: float = 0.5
    prior_temperature: float = 1.0

    def __post_init__(self) -> None:
        if self.game.num_players != 2:
            raise ValueError(f"GameSearch: {self.game.env_id} is a game of "
                             f"{self.game.num_players} players; the search values a position "
                             f"for its player to move and the opponent's negated, which holds "
                             f"for two-player zero-sum games")
        if isinstance(self.rollouts, bool) or not isinstance(self.rollouts, int) \
                or self.rollouts < 0:
            raise ValueError(f"GameSearch: rollouts must be an int >= 0, got "
                             f"{self.rollouts!r}")
        if not 0.0 <= self.rollout_weight <= 1.0:
            raise ValueError(f"GameSearch: rollout_weight must be in [0, 1], got "
                             f"{self.rollout_weight!r}")
        if not self.prior_temperature > 0.0:
            raise ValueError(f"GameSearch: prior_temperature must be > 0, got "
                             f"{self.prior_temperature!r}")

    def prior(self, params: Any, planes: jax.Array) -> tuple[jax.Array, jax.Array]:
        """The network's (logits / `prior_temperature`, value) of `planes`."""
        logits, value = self.evaluate(params, planes)
        if self.prior_temperature != 1.0:
            logits = logits / self.prior_temperature
        return logits, value

    def value(self, net_value: jax.Array, embedding: jax.Array, player: jax.Array,
              key: jax.Array) -> jax.Array:
        """A position's value for its player to move: the network's `net_value` [B], mixed
        with the mean outcome of `rollouts` random playouts from `embedding` [B, W, 1, 2]
        for `player` [B] (int32, 0 or 1) where the search has rollouts."""
        if self.rollouts == 0:
            return net_value
        states = jnp.repeat(embedding, self.rollouts, axis=-2)  # [B, W, rollouts, 2]
        playout = self.game.door.playout(states, key)  # [B, rollouts]
        outcome = jnp.take_along_axis(self.game.rewards_of(playout.extras),
                                      player[:, None, None], axis=-1)
        mixed = (1.0 - self.rollout_weight) * net_value + \
            self.rollout_weight * outcome[..., 0].mean(axis=-1)
        return mixed.astype(net_value.dtype)

    def recurrent_fn(self, params: Any, rng_key: jax.Array, action: jax.Array,
                     embedding: SearchNode) -> tuple[Any, SearchNode]:
        """mctx's model step (a `RecurrentFnOutput` and the next embeddings): move `action`
        [B] in each game `embedding` (a `SearchNode` of [B] games) through the native door;
        the mover's reward, the discount +1 where the mover moves again, -1 where the
        opponent moves next, 0 where the game ended (the task's player to move after the
        move against the node's), the next position's floored prior logits and value (0
        past a game's end). An embedding of the state alone (before `SearchNode`) is taken
        as a position whose opponent always moves next (a DeprecationWarning)."""
        plain = not isinstance(embedding, SearchNode)
        if plain:
            warnings.warn("GameSearch.recurrent_fn of a state alone takes every next position "
                          "as the opponent's; give it SearchNode(state, to_move) embeddings "
                          "(GameSearch.search makes them). It becomes required in the next "
                          "release.", DeprecationWarning, stacklevel=2)
            embedding = SearchNode(embedding, jnp.full(action.shape, -1, jnp.int32))
        out = self.game.door.step(embedding.state, action[:, None].astype(jnp.int32),
                                  extras=True, legal_mask=True)
        logits, value = self.prior(params, self.game.planes(out.obs[:, 0]))
        over = (out.terminated | out.truncated)[:, 0]
        # the player to move after the move (-1 where the game ended; those nodes' value is 0
        # below, whatever their playouts give, and their discount 0)
        player = jnp.maximum(self.game.player_to_move(out.extras)[:, 0], 0)
        value = self.value(value, out.state, player, rng_key)
        discount = jnp.where(over, 0.0, jnp.where(player == embedding.to_move, 1.0, -1.0))
        return require_mctx().RecurrentFnOutput(
            reward=out.reward[:, 0], discount=discount.astype(jnp.float32),
            prior_logits=floor_illegal(logits, out.legal_mask[:, 0]),
            value=jnp.where(over, 0.0, value)), (out.state if plain
                                                  else SearchNode(out.state, player))

    def __call__(self, params: Any, key: jax.Array, state: Position, num_simulations: int,
                 gumbel_scale: float = 1.0) -> Any:
        """Search every game of `state` (a batch of n) with `num_simulations` simulations:
        mctx's `PolicyOutput` (`action` int32[n], legal; `action_weights` [n, num_actions],
        the improved policy, 0 on illegal actions; `search_tree`). `gumbel_scale=0` searches
        without Gumbel noise (deterministic play)."""
        return self.search(params, key, state.env_state, state.observation,
                           state.legal_action_mask, num_simulations, gumbel_scale,
                           to_move=state.current_player)

    def search(self, params: Any, key: jax.Array, env_state: jax.Array, planes: jax.Array,
               legal: jax.Array, num_simulations: int, gumbel_scale: float = 1.0, *,
               to_move: jax.Array | None = None) -> Any:
        """`__call__` on a batch's parts: its in-graph state uint32[W, n, 2], its planes
        [n, rows, columns, planes], legal actions bool[n, num_actions] and players to move
        int32[n] (as the task reports them: `Rollout.run_with_turns`'s `to_move`). Without
        `to_move` every root is taken as player 0's, which is right for the first move only
        where a player may move twice (a DeprecationWarning: pass it)."""
        mctx = require_mctx()
        if to_move is None:
            warnings.warn("GameSearch.search without to_move takes every root as player 0's; "
                          "pass to_move (the task's player to move of each game) so that a "
                          "game where a player moves again is searched right. It becomes "
                          "required in the next release.", DeprecationWarning, stacklevel=2)
            to_move = jnp.zeros(legal.shape[:1], jnp.int32)
        logits, value = self.prior(params, planes)  # (the root's value: the network's)
        root = mctx.RootFnOutput(
            prior_logits=logits, value=value,
            embedding=SearchNode(embedding_of(env_state),
                                 jnp.broadcast_to(jnp.asarray(to_move, jnp.int32),
                                                  legal.shape[:1])))
        return mctx.gumbel_muzero_policy(
            params, key, root, self.recurrent_fn, num_simulations, invalid_actions=~legal,
            max_num_considered_actions=self.max_num_considered_actions,
            gumbel_scale=gumbel_scale)

__all__ = ["Evaluate", "GameModel", "GameSearch", "Position", "SearchNode", "embedding_of",
           "floor_illegal", "require_mctx"]
