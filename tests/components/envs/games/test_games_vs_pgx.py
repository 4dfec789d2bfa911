"""The board games against pgx's (`pgx.make`, pure JAX) where the rules agree: random playouts
step both side by side and compare, at every step, the legal actions, the observation planes of
the player to move, the game's end and each player's reward. pgx's player ids are shuffled at
init (mapped here through the id of the player who moves first); its Hex has a swap move
(action 121, never played here); its Othello ends a game that neither player can go on with
only after both have passed, where OpenSpiel (and these games) end it at once, so the pgx game
passes until it ends too before the rewards are compared."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import components.envs as envs
from components.envs.games import GAME_IDS, observation_shape

pgx = pytest.importorskip("pgx")

PGX_NAMES = {"ConnectFour-v0": "connect_four", "Othello-v0": "othello", "Hex-v0": "hex"}
PASS = 64  # Othello's


@jax.jit
def select(where: jax.Array, new, old):
    """The pgx states `new` where `where`, `old` elsewhere."""
    return jax.tree.map(lambda a, b: jnp.where(where.reshape(where.shape + (1,) * (a.ndim - 1)),
                                               a, b), new, old)


def play_against_pgx(env_id: str, num_games: int, num_envs: int, seed: int) -> int:
    """Random playouts compared with pgx at every step; returns the games finished."""
    game = pgx.make(PGX_NAMES[env_id])
    init, step = jax.jit(jax.vmap(game.init)), jax.jit(jax.vmap(game.step))
    key = jax.random.PRNGKey(seed)
    theirs = init(jax.random.split(key, num_envs))
    first = np.asarray(theirs.current_player)  # pgx's id of the player who moves first
    pool = envs.make(env_id, num_envs, seed=seed, num_threads=1)
    obs, _ = pool.reset(seed=seed)
    rng = np.random.default_rng(seed)
    planes = observation_shape(env_id)
    finished = move = 0
    while finished < num_games:
        mask = pool.legal_mask()
        where = f"{env_id}, move {move}"
        np.testing.assert_array_equal(mask, np.asarray(theirs.legal_action_mask)[:, :mask.shape[1]],
                                      err_msg=f"{where}: legal actions")
        np.testing.assert_array_equal(obs.reshape(-1, *planes),
                                      np.asarray(theirs.observation)[..., :planes[2]],
                                      err_msg=f"{where}: observations")
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int32)
        obs, _, terminated, _, info = pool.step(actions)
        theirs = step(theirs, jnp.asarray(actions))
        for _ in range(2):  # pgx's Othello: pass until the game ends
            behind = terminated & ~np.asarray(theirs.terminated)
            if not behind.any() or env_id != "Othello-v0":
                break
            assert np.asarray(theirs.legal_action_mask)[behind, PASS].all(), where
            passed = step(theirs, jnp.full(num_envs, PASS, jnp.int32))
            theirs = select(jnp.asarray(behind), passed, theirs)
        np.testing.assert_array_equal(terminated, theirs.terminated, err_msg=f"{where}: end")
        rewards = np.asarray(theirs.rewards)
        by_player = np.stack([rewards[np.arange(num_envs), first],
                              rewards[np.arange(num_envs), 1 - first]], axis=1)
        ours = np.stack([info["reward_player_0"], info["reward_player_1"]], axis=1)
        np.testing.assert_array_equal(ours[terminated], by_player[terminated],
                                      err_msg=f"{where}: rewards")
        if terminated.any():
            fresh = init(jax.random.split(jax.random.fold_in(key, move), num_envs))
            theirs = select(jnp.asarray(terminated), fresh, theirs)
            first = np.where(terminated, np.asarray(theirs.current_player), first)
            finished += int(terminated.sum())
        move += 1
    return finished


@pytest.mark.parametrize("env_id", GAME_IDS)
def test_random_playouts_follow_pgx(env_id):
    play_against_pgx(env_id, 24, 8, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", GAME_IDS)
def test_hundreds_of_random_playouts_follow_pgx(env_id):
    play_against_pgx(env_id, 500, 64, seed=1)
