"""`GameSearch` (Gumbel MuZero from mctx over the native games) against the same search over
pgx's pure-JAX Connect Four (pgx's own AlphaZero example's recurrent function), whose rules and
observations agree with ours: from the same positions, with the same network and key, the
model steps agree (reward, discount, next observation and legal moves) and the searches give
the same moves and improved policies. And no search ever picks an illegal move, even with a
network that prefers illegal ones (an illegal move would fail the whole FFI call)."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from components.envs.games import GAME_IDS
from components.envs.games.self_play import GameState, SelfPlay
from components.networks import PolicyValueNetwork
from components.search import GameSearch, SearchNode, embedding_of, floor_illegal

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from games_search import pgx_recurrent_fn  # noqa: E402  pgx's example, the bench's peer

mctx = pytest.importorskip("mctx")
pgx = pytest.importorskip("pgx")

B, MOVES, SIMULATIONS = 16, 24, 16


@pytest.fixture(scope="module")
def network():
    """A tiny policy-value network and its parameters (random: a search does not care)."""
    net = PolicyValueNetwork(7, hidden=(16,))
    params = net.transformed.init(jax.random.PRNGKey(3), jnp.zeros((1, 6, 7, 2)))
    return net.forward_with, params


@pytest.fixture(scope="module")
def positions():
    """The same B Connect Four positions in both: ours (a SelfPlay batch) and pgx's, each
    reached by its own number of random moves (0 to MOVES) in a game that is not over."""
    games = SelfPlay("ConnectFour-v0", num_threads=1)
    env = pgx.make("connect_four")
    step = jax.jit(games.step)
    pgx_step = jax.jit(jax.vmap(env.step))
    ours = games.init(jax.random.PRNGKey(0), B)
    theirs = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), B))
    rng = np.random.default_rng(0)
    stop = rng.integers(0, MOVES + 1, B)
    kept_ours, kept_theirs = ours, theirs
    for move in range(MOVES):
        mask = np.asarray(ours.legal_action_mask)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int32)
        ours, theirs = step(ours, actions), pgx_step(theirs, jnp.asarray(actions))
        over = np.asarray(theirs.terminated)
        # a game stops at its chosen move, or just before it would end
        keep = jnp.asarray((move + 1 <= stop) & ~over)
        kept_ours = GameState(_where(keep, ours.env_state, kept_ours.env_state, -2),
                              *[_where(keep, new, old, 0) for new, old
                                in zip(ours[1:], kept_ours[1:], strict=True)])
        kept_theirs = jax.tree.map(functools.partial(_where, keep, axis=0), theirs,
                                   kept_theirs)
        stop = np.where(over, np.minimum(stop, move), stop)
    return games, env, kept_ours, kept_theirs


def _where(keep: jax.Array, new: jax.Array, old: jax.Array, axis: int) -> jax.Array:
    """`new` where `keep` along the batch axis `axis`, `old` elsewhere."""
    shape = [1] * new.ndim
    shape[axis] = keep.shape[0]
    return jnp.where(keep.reshape(shape), new, old)


def test_positions_agree(positions):
    _, _, ours, theirs = positions
    np.testing.assert_array_equal(np.asarray(ours.observation), np.asarray(theirs.observation))
    np.testing.assert_array_equal(ours.legal_action_mask, theirs.legal_action_mask)
    assert not np.asarray(theirs.terminated).any()


def test_recurrent_fn_steps_as_pgx(positions, network):
    games, env, ours, theirs = positions
    evaluate, params = network
    search = GameSearch(games, evaluate)
    reference = pgx_recurrent_fn(env, evaluate)
    rng = np.random.default_rng(1)
    model, pgx_model = jax.jit(search.recurrent_fn), jax.jit(reference)
    embedding = SearchNode(embedding_of(ours.env_state), ours.current_player)
    alive = np.ones(B, bool)  # games not over in either (past an end, pgx's stays over)
    endings = 0
    legal = np.asarray(ours.legal_action_mask)
    for _ in range(12):  # a move, then a move from the position it reached, ...
        mask = legal
        action = jnp.asarray([rng.choice(np.flatnonzero(m)) for m in mask], jnp.int32)
        step, embedding = model(params, None, action, embedding)
        expected, theirs = pgx_model(params, None, action, theirs)
        over = np.asarray(theirs.terminated)
        for field in ("reward", "discount", "prior_logits", "value"):
            # past a game's end the next positions differ (ours: the next game; pgx's: none)
            rows = alive if field in ("reward", "discount") else alive & ~over
            np.testing.assert_array_equal(np.asarray(getattr(step, field))[rows],
                                          np.asarray(getattr(expected, field))[rows])
        ended = alive & over  # by this move
        np.testing.assert_array_equal(np.asarray(step.value)[ended], 0.0)
        np.testing.assert_array_equal(np.asarray(step.discount)[ended], 0.0)
        legal = np.asarray(step.prior_logits) > jnp.finfo(jnp.float32).min
        alive &= ~over
        endings += int(ended.sum())
    assert endings > 0  # the moves that end a game were compared too


def test_search_equals_mctx_over_pgx(positions, network):
    games, env, ours, theirs = positions
    evaluate, params = network
    search = GameSearch(games, evaluate)
    reference = pgx_recurrent_fn(env, evaluate)

    @jax.jit
    def over_pgx(params, key, state):
        logits, value = evaluate(params, state.observation.astype(jnp.float32))
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=state)
        return mctx.gumbel_muzero_policy(params, key, root, reference, SIMULATIONS,
                                         invalid_actions=~state.legal_action_mask,
                                         max_num_considered_actions=16)

    for seed in range(3):
        key = jax.random.PRNGKey(seed)
        mine = jax.jit(search, static_argnums=3)(params, key, ours, SIMULATIONS)
        expected = over_pgx(params, key, theirs)
        np.testing.assert_array_equal(mine.action, expected.action)
        np.testing.assert_allclose(mine.action_weights, expected.action_weights, rtol=1e-6,
                                   atol=1e-7)
        np.testing.assert_array_equal(mine.search_tree.summary().visit_counts,
                                      expected.search_tree.summary().visit_counts)


def prefers_illegal(num_actions: int):
    """A 'network' whose logits favour action 0, then 1, ... by wide margins: in Connect Four
    the fullest columns; in Othello and Hex the corner cells, illegal most of the time."""

    def evaluate(params, planes):
        del params
        logits = -10.0 * jnp.arange(num_actions, dtype=jnp.float32)
        values = jnp.tanh(planes.reshape(planes.shape[0], -1).sum(-1) - 3.0)
        return jnp.broadcast_to(logits, (planes.shape[0], num_actions)), values

    return evaluate


@pytest.mark.parametrize("env_id", GAME_IDS)
def test_search_never_picks_an_illegal_move(env_id):
    """Self-play by search over many positions, a game's end and its restart included, with
    a network that favours illegal moves: every chosen move is legal (the FFI step would
    fail the call otherwise) and the improved policy puts no weight on illegal moves."""
    games = SelfPlay(env_id, num_threads=1)
    search = GameSearch(games, prefers_illegal(games.num_actions))
    moves = {"ConnectFour-v0": 60, "Othello-v0": 70, "Hex-v0": 40}[env_id]

    @jax.jit
    def play(key):
        def move(state, key):
            out = search(None, key, state, 8)
            return games.step(state, out.action.astype(jnp.int32)), (
                out.action, out.action_weights, state.legal_action_mask, state.terminated)

        first = games.init(key, 32)
        return jax.lax.scan(move, first, jax.random.split(key, moves))[1]

    actions, weights, legal, _ = jax.tree.map(np.asarray, play(jax.random.PRNGKey(0)))
    assert np.take_along_axis(legal, actions[..., None], -1).all()
    assert (weights[~legal] == 0).all()


def test_floor_illegal():
    logits = jnp.array([[1.0, 5.0, 3.0]])
    floored = floor_illegal(logits, jnp.array([[True, False, True]]))
    np.testing.assert_array_equal(floored[0, [0, 2]], [-4.0, -2.0])
    assert floored[0, 1] == jnp.finfo(jnp.float32).min


@pytest.mark.parametrize("env_id", list(GAME_IDS))
def test_rollouts_mix_the_exact_expected_outcome_into_the_value(env_id):
    """With playouts, an expanded position's value is (1 - w) * the network's + w * the mean
    outcome of random play for the player to move there: checked against the exact expected
    outcome under uniformly random moves, enumerated with OpenSpiel's rules, from positions
    two to five moves before the end of OpenSpiel's random games (both players to move)."""
    pytest.importorskip("pyspiel")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "envs" / "games"))
    from test_games_playout import late_positions
    from test_games_vs_openspiel import openspiel_board

    games = SelfPlay(env_id, num_threads=1)
    rollouts, weight = 2048, 0.25
    search = GameSearch(games, lambda p, x: None, rollouts=rollouts, rollout_weight=weight)
    positions = late_positions(env_id, 4, np.random.default_rng(1))
    physics = np.stack([np.append(openspiel_board(s, env_id), s.current_player())
                        for s, _ in positions])
    embedding = embedding_of(jnp.asarray(games.door.state_from_physical(physics)))
    player = jnp.asarray([s.current_player() for s, _ in positions], jnp.int32)
    net = jnp.asarray([0.5, -0.5, 1.0, 0.0], jnp.float32)
    value = np.asarray(jax.jit(search.value)(net, embedding, player, jax.random.PRNGKey(0)))
    for k, (state, exact) in enumerate(positions):
        sign = 1 if state.current_player() == 0 else -1  # exact: player 0's returns
        mean = sign * sum(p * ret for (ret, _), p in exact.items())
        spread = np.sqrt(sum(p * (sign * ret - mean) ** 2 for (ret, _), p in exact.items()))
        assert abs(value[k] - ((1 - weight) * net[k] + weight * mean)) <= \
            weight * 5 * spread / np.sqrt(rollouts) + 1e-6, (env_id, k, value[k], mean)


def test_rollout_settings_are_checked():
    games = SelfPlay("ConnectFour-v0", num_threads=1)
    with pytest.raises(ValueError, match="rollouts must be an int >= 0"):
        GameSearch(games, lambda p, x: None, rollouts=-1)
    with pytest.raises(ValueError, match=r"rollout_weight must be in \[0, 1\]"):
        GameSearch(games, lambda p, x: None, rollouts=4, rollout_weight=1.5)
    with pytest.raises(ValueError, match="prior_temperature must be > 0"):
        GameSearch(games, lambda p, x: None, prior_temperature=0.0)


def test_the_prior_temperature_divides_the_networks_logits():
    """The search reads the network's logits / prior_temperature as its prior (softmax of
    logits / T, NumPy's), its value as it is; with T = 1 the logits are the network's."""
    games = SelfPlay("ConnectFour-v0", num_threads=1)
    logits = np.log(np.array([[0.7, 0.2, 0.05, 0.03, 0.01, 0.005, 0.005]], np.float32))

    def evaluate(params, planes):
        return jnp.asarray(logits), jnp.asarray([0.25])

    planes = jnp.zeros((1, 6, 7, 2))
    for temperature in (1.0, 3.0):
        prior, value = GameSearch(games, evaluate, prior_temperature=temperature).prior(None,
                                                                                         planes)
        expected = np.exp(logits / temperature) / np.exp(logits / temperature).sum()
        np.testing.assert_allclose(np.asarray(jax.nn.softmax(prior)), expected, rtol=1e-5)
        assert float(value[0]) == 0.25
