"""Native random playouts (`SelfPlay.playout`, the in-graph door's `playout`): uniformly random
legal moves to the end of each game, as OpenSpiel's random rollouts play them. From positions
two to five moves before the end of OpenSpiel's own random games, the exact probability of every
(outcome, length) under uniformly random play is enumerated with OpenSpiel's rules; thousands
of our playouts from the same position must land within five standard errors of each. From
the first position, the mean length and the first player's win rate agree with OpenSpiel's
random games. The state is left as it was; the same key gives the same playouts; a forged
state is refused as a step refuses it."""

from __future__ import annotations

import collections
import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from components.envs.games import GAME_IDS, OPENSPIEL_NAMES
from components.envs.games.self_play import SelfPlay

pyspiel = pytest.importorskip("pyspiel")

from test_games_vs_openspiel import openspiel_board  # noqa: E402

COPIES = 2048  # playouts of each position
NODES = 5000  # the most nodes of a position's tree of continuations enumerated


class TooLarge(Exception):
    """The position's tree of random continuations has more nodes than the budget."""


def exact_outcomes(state, budget: list[int]) -> dict[tuple[int, int], float]:
    """{(player 0's return, moves played): probability} under uniformly random legal moves,
    enumerating every continuation (TooLarge past `budget[0]` nodes)."""
    budget[0] -= 1
    if budget[0] < 0:
        raise TooLarge
    if state.is_terminal():
        return {(int(state.returns()[0]), 0): 1.0}
    legal = state.legal_actions()
    out: dict[tuple[int, int], float] = collections.defaultdict(float)
    for action in legal:
        child = state.clone()
        child.apply_action(action)
        for (ret, length), p in exact_outcomes(child, budget).items():
            out[(ret, length + 1)] += p / len(legal)
    return out


def late_positions(env_id: str, count: int, rng: np.random.Generator) -> list:
    """(OpenSpiel state, its exact outcomes) for positions a few moves before the end of
    random games, whose trees of continuations are small enough to enumerate."""
    game = pyspiel.load_game(OPENSPIEL_NAMES[env_id])
    positions = []
    while len(positions) < count:
        state, history = game.new_initial_state(), []
        while not state.is_terminal():
            history.append(state.clone())
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
        back = int(rng.integers(2, 6))
        if len(history) > back:
            with contextlib.suppress(TooLarge):  # too many continuations: another game
                positions.append((history[-back], exact_outcomes(history[-back], [NODES])))
    return positions


@pytest.fixture(scope="module", params=list(GAME_IDS))
def game(request):
    games = SelfPlay(request.param, num_threads=2)
    return request.param, games, jax.jit(games.playout)


def test_playouts_follow_the_exact_outcome_distribution(game):
    env_id, games, playout = game
    positions = late_positions(env_id, 6, np.random.default_rng(0))
    physics = np.stack([np.append(openspiel_board(s, env_id), s.current_player())
                        for s, _ in positions])
    start = games.door.state_from_physical(np.repeat(physics, COPIES, axis=0))
    returns, length = (np.asarray(x) for x in playout(_state(games, start), jax.random.PRNGKey(3)))
    np.testing.assert_array_equal(returns[:, 0], -returns[:, 1])  # zero-sum
    for k, (_, exact) in enumerate(positions):
        rows = slice(k * COPIES, (k + 1) * COPIES)
        seen = collections.Counter(zip(returns[rows, 0].astype(int).tolist(),
                                       length[rows].tolist(), strict=True))
        assert set(seen) <= set(exact), f"{env_id} position {k}: {seen} outside {exact}"
        for outcome, p in exact.items():
            f = seen.get(outcome, 0) / COPIES
            assert abs(f - p) <= 5 * np.sqrt(p * (1 - p) / COPIES) + 1e-9, \
                f"{env_id} position {k}, outcome {outcome}: {f:.4f} against exactly {p:.4f}"


def assert_like_openspiels_random_games(spiel_name: str, returns: np.ndarray,
                                        length: np.ndarray) -> None:
    """Native random playouts from the first position (`returns` [n, 2], `length` [n]) have
    the mean length and player 0's win rate of 400 of OpenSpiel's random games of
    `spiel_name`, within five standard errors."""
    spiel = pyspiel.load_game(spiel_name)
    rng, lengths, wins = np.random.default_rng(1), [], []
    for _ in range(400):
        s = spiel.new_initial_state()
        while not s.is_terminal():
            legal = s.legal_actions()
            s.apply_action(legal[int(rng.integers(len(legal)))])
        lengths.append(s.move_number())
        wins.append(s.returns()[0] > 0)
    for ours, theirs in ((length, np.array(lengths)), (returns[:, 0] > 0, np.array(wins))):
        error = np.sqrt(ours.var() / ours.size + theirs.var() / theirs.size)
        assert abs(ours.mean() - theirs.mean()) <= 5 * error, \
            (spiel_name, ours.mean(), theirs.mean())


def test_playouts_from_the_first_position_are_openspiels_random_games(game):
    env_id, games, playout = game
    state = games.init(jax.random.PRNGKey(0), 4096)
    returns, length = (np.asarray(x) for x in playout(state, jax.random.PRNGKey(1)))
    assert_like_openspiels_random_games(OPENSPIEL_NAMES[env_id], returns, length)


def test_the_state_stays_and_a_key_gives_the_same_playouts(game):
    env_id, games, playout = game
    state = games.init(jax.random.PRNGKey(0), 64)
    words = np.asarray(state.env_state).copy()
    first = [np.asarray(x) for x in playout(state, jax.random.PRNGKey(5))]
    np.testing.assert_array_equal(np.asarray(state.env_state), words)
    again = [np.asarray(x) for x in playout(state, jax.random.PRNGKey(5))]
    other = [np.asarray(x) for x in playout(state, jax.random.PRNGKey(6))]
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[1], other[1])


def test_a_forged_state_is_refused_as_a_step_refuses_it(game):
    env_id, games, playout = game
    state = games.init(jax.random.PRNGKey(0), 4)
    # game 2's header word (a float64, low half first) set to 2.0: player 0 won, a game over
    header = jnp.array([0, 0x40000000], jnp.uint32)
    forged = state._replace(env_state=state.env_state.at[..., 0, 2, :].set(header))
    with pytest.raises(Exception, match=rf"{env_id} step: environment 2 holds a game that is "
                                        r"over"):
        jax.block_until_ready(playout(forged, jax.random.PRNGKey(0)))


def _state(games: SelfPlay, env_state) -> object:
    """A GameState around engine words (playout reads only env_state)."""
    state = games.init(jax.random.PRNGKey(0), 1)
    return state._replace(env_state=jnp.asarray(env_state))


def test_a_key_that_is_no_prng_key_is_refused():
    games = SelfPlay("ConnectFour-v0", num_threads=1)
    state = games.init(jax.random.PRNGKey(0), 2)
    with pytest.raises(TypeError, match=r"ConnectFour-v0.playout: key must be a raw PRNG key "
                                        r"uint32\[2\], got float32\[3\]"):
        games.playout(state, jnp.zeros(3))
