"""The built-in games' symmetries (`EnvSpec.symmetries`) against the engine's own rules: from
positions reached by random play, the board transformed (its physical state's cells moved) and
set in a fresh pool gives the transformed observation and legal mask, and a move stepped in the
original leads where its transformed move leads in the transformed game. A learner that trains
on transformed positions (AlphaZero's `augment`) learns positions of the same game."""

import numpy as np
import pytest

import components.envs as envs
from components.envs.engine.symmetry import (
    Symmetry,
    board_symmetries,
    cell_map,
    symmetry_problems,
    transform,
)
from components.envs.games import GAME_IDS

N = 8  # games played at once; their positions are taken every few moves


def transformed_physics(physics: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Physical states [n, cells + 1] (each cell's owner, then the player to move) of the
    boards moved by `cells`."""
    return np.concatenate([physics[:, :-1][:, cells], physics[:, -1:]], axis=1)


def random_positions(env_id: str, seed: int) -> np.ndarray:
    """Physical states of positions of N random games (a game that ended starts again), taken
    every 7 moves over twice the longest game: openings, middles and last moves."""
    pool = envs.make(env_id, N, seed=seed)
    pool.reset(seed=seed)
    rng = np.random.default_rng(seed)
    taken = []
    for t in range(2 * pool.env_spec.max_episode_steps):
        if t % 7 == 6:
            taken.append(pool.physical_state())
        legal = pool.legal_mask()
        pool.step(np.array([rng.choice(np.flatnonzero(m)) for m in legal], np.int32))
    return np.concatenate(taken)


@pytest.mark.parametrize("env_id", GAME_IDS)
def test_a_transformed_position_is_the_engines_transformed_position(env_id):
    spec = envs.spec(env_id)
    assert spec.symmetries and all(isinstance(s, Symmetry) for s in spec.symmetries)
    for seed in (1, 2):
        physics = random_positions(env_id, seed)
        n = len(physics)
        original = envs.make(env_id, n, seed=0)
        obs, _ = original.reset(options={"state": physics})
        legal = original.legal_mask()
        rng = np.random.default_rng(seed)
        for s in spec.symmetries:
            moved = envs.make(env_id, n, seed=0)
            moved_obs, _ = moved.reset(options={"state": transformed_physics(physics, s.cells)})
            np.testing.assert_array_equal(moved_obs, obs.reshape(n, -1)[:, s.observation],
                                          err_msg=f"{env_id} {s.name}")
            np.testing.assert_array_equal(moved.legal_mask(), legal[:, s.actions])
            # a legal move in the transformed game, and the original's move it stands for
            action = np.array([rng.choice(np.flatnonzero(m)) for m in moved.legal_mask()],
                              np.int32)
            replay = envs.make(env_id, n, seed=0)
            replay.reset(options={"state": physics})
            after, reward, *_ = replay.step(s.actions[action])
            moved_after, moved_reward, *_ = moved.step(action)
            np.testing.assert_array_equal(moved_reward, reward)
            np.testing.assert_array_equal(moved_after, after.reshape(n, -1)[:, s.observation])
            assert reward.any(), "some of the moves end their game"


def test_board_maps_are_permutations_and_the_mirrors_undo_themselves():
    for name in ("flip_lr", "flip_ud", "rot180", "transpose", "antitranspose"):
        cells = cell_map(5, 5, name)
        np.testing.assert_array_equal(np.sort(cells), np.arange(25))
        np.testing.assert_array_equal(cells[cells], np.arange(25))
    turn = cell_map(4, 4, "rot90")
    np.testing.assert_array_equal(turn[cell_map(4, 4, "rot270")], np.arange(16))
    np.testing.assert_array_equal(turn[turn], cell_map(4, 4, "rot180"))
    with pytest.raises(ValueError, match="square board only"):
        cell_map(6, 7, "transpose")
    with pytest.raises(ValueError, match="'flip_lr' only"):
        board_symmetries(6, 7, 2, ("rot180",), actions="columns")


def test_a_spec_with_symmetries_that_are_no_permutations_is_refused():
    good = board_symmetries(3, 3, 2, ("rot180",))[0]
    assert symmetry_problems((good,), 18, 9) == []
    short = Symmetry("cut", good.observation[:-1], good.actions)
    twice = Symmetry("twice", good.observation, np.zeros(9, np.int32))
    problems = symmetry_problems((short, twice, "rot180"), 18, 9)
    assert problems == ["symmetry 'cut': its observation is no permutation of range(18)",
                        "symmetry 'twice': its actions is no permutation of range(9)",
                        "symmetries holds 'rot180', not a Symmetry"]
    import dataclasses

    from components.envs.engine.spec import check_spec

    spec = envs.spec("ConnectFour-v0")
    wrong = dataclasses.replace(spec, symmetries=board_symmetries(6, 7, 2, ("flip_ud",)))
    with pytest.raises(ValueError, match=r"register\('ConnectFour-v0'\).*symmetry 'flip_ud': "
                                         r"its actions is no permutation of range\(7\)"):
        check_spec("ConnectFour-v0", wrong)


def test_transform_moves_each_position_and_its_policy_together():
    import jax

    s = board_symmetries(2, 3, 1, ("flip_lr",))[0]
    obs = np.arange(4 * 6, dtype=np.float32).reshape(4, 6)
    policy = obs / obs.sum(1, keepdims=True)  # each cell's probability follows its content
    moved_obs, moved_policy = transform(jax.random.PRNGKey(0), obs, policy, (s,))
    moved_obs, moved_policy = np.asarray(moved_obs), np.asarray(moved_policy)
    flipped = [np.array_equal(o, x[s.observation]) for o, x in zip(moved_obs, obs, strict=True)]
    kept = [np.array_equal(o, x) for o, x in zip(moved_obs, obs, strict=True)]
    assert all(f or k for f, k in zip(flipped, kept, strict=True))
    np.testing.assert_allclose(moved_policy, moved_obs / obs.sum(1, keepdims=True))
    many = np.asarray(transform(jax.random.PRNGKey(1), np.repeat(obs[:1], 400, 0),
                                np.repeat(policy[:1], 400, 0), (s,))[0])
    assert 150 < sum(np.array_equal(o, obs[0][s.observation]) for o in many) < 250


def test_alphazero_learns_under_the_games_symmetries_only_when_asked_and_where_declared():
    from types import SimpleNamespace

    from components.agents.alphazero_agent import AlphaZeroAgent
    from components.agents.alphazero_config import AlphaZeroConfig
    from components.agents.parts import learnt_symmetries

    small = dict(num_envs=2, num_steps=4, num_simulations=2, eval_simulations=2,
                 buffer_size=64, batch_size=8, hidden=(8,))
    agent = AlphaZeroAgent("ConnectFour-v0", AlphaZeroConfig(augment=True, **small))
    assert agent.symmetries == envs.spec("ConnectFour-v0").symmetries
    assert AlphaZeroAgent("ConnectFour-v0", AlphaZeroConfig(**small)).symmetries == ()
    plain = SimpleNamespace(env_spec=SimpleNamespace(env_id="Mine-v0", symmetries=()))
    with pytest.raises(ValueError, match="AlphaZeroAgent: augment = true, and Mine-v0 "
                                         "declares no symmetries"):
        learnt_symmetries("AlphaZeroAgent", plain, True)
