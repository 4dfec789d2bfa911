"""The batched self-play interface (`self_play.SelfPlay`, pgx's shape) inside one compiled
program: random legal playouts under `jax.jit` + `lax.scan` and `jax.vmap` keep the rules'
invariants (players alternate within a game, a game that ends starts again with player 0 to
move, rewards are zero-sum and only at a game's end, each step's mover gets the reward the
engine reports), and its observations, masks and rewards equal the host pool's for the same
moves."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import components.envs as envs
from components.envs.games import GAME_IDS, observation_shape
from components.envs.games.self_play import SelfPlay

N, STEPS = 16, 150


def random_playout(games: SelfPlay, key: jax.Array, num_games: int, steps: int):
    """`steps` random legal moves in `num_games` games, one compiled program: the actions
    and the state before each move, and the final state."""

    def move(state, key):
        action = jax.random.categorical(key, jnp.where(state.legal_action_mask, 0.0, -jnp.inf))
        return games.step(state, action.astype(jnp.int32)), (state, action)

    first = games.init(key, num_games)
    return jax.lax.scan(move, first, jax.random.split(key, steps))


@pytest.mark.parametrize("env_id", GAME_IDS)
def test_random_self_play_keeps_the_rules_invariants_and_equals_the_host_pool(env_id):
    games = SelfPlay(env_id, num_threads=1)
    last, (before, actions) = jax.jit(random_playout, static_argnums=(0, 2, 3))(
        games, jax.random.PRNGKey(0), N, STEPS)
    after = jax.tree.map(lambda b, x: jnp.concatenate([b[1:], x[None]]), before, last)
    before, after, actions = jax.tree.map(np.asarray, (before, after, actions))

    assert before.observation.shape == (STEPS, N, *observation_shape(env_id))
    assert np.take_along_axis(before.legal_action_mask, actions[..., None], -1).all()
    ended = after.terminated
    assert ended.any() and not after.truncated.any()
    np.testing.assert_array_equal(after.rewards.sum(-1), 0)
    assert (after.rewards[~ended] == 0).all()
    np.testing.assert_array_equal(after.current_player, np.where(ended, 0,
                                                                 1 - before.current_player))
    assert (np.abs(after.rewards[ended]) <= 1).all()

    pool = envs.make(env_id, N, seed=0, num_threads=1)
    obs, _ = pool.reset(seed=0)
    for t in range(STEPS):
        np.testing.assert_array_equal(before.observation[t].reshape(N, -1), obs)
        np.testing.assert_array_equal(before.legal_action_mask[t], pool.legal_mask())
        obs, reward, terminated, _, info = pool.step(actions[t])
        np.testing.assert_array_equal(after.rewards[t], np.stack(
            [info["reward_player_0"], info["reward_player_1"]], axis=1))
        np.testing.assert_array_equal(after.terminated[t], terminated)
        movers = before.current_player[t]
        np.testing.assert_array_equal(reward, after.rewards[t][np.arange(N), movers])


def test_self_play_vmaps_over_keys():
    games = SelfPlay("ConnectFour-v0", num_threads=1)
    keys = jax.random.split(jax.random.PRNGKey(1), 3)
    state = jax.vmap(lambda key: games.init(key, 5))(keys)
    assert state.observation.shape == (3, 5, 6, 7, 2)
    assert state.legal_action_mask.shape == (3, 5, 7)
    state = jax.jit(jax.vmap(games.step))(state, jnp.full((3, 5), 3, jnp.int32))
    np.testing.assert_array_equal(state.current_player, 1)
    # the stone dropped in column 3 is the opponent's, at the bottom row, for player 1
    np.testing.assert_array_equal(state.observation[..., 5, 3, 1], 1)
    assert state.observation[..., 0].sum() == 0
