"""The board games play exactly OpenSpiel's rules (`pyspiel.load_game`, the `open-spiel` wheel):
random playouts step the engine's games and OpenSpiel's side by side, and at every step they
have the same legal actions, the same board (OpenSpiel's observation tensor mapped onto the
physical state's cells), the same player to move, the same observation planes from that
player's point of view, and, at the end, the same terminal step and returns (the step's reward,
the extras). Both doors: the host pool for hundreds of games per game, the self-play interface
over the in-graph door for a few dozen; `-m slow` plays thousands."""

from __future__ import annotations

import collections
import functools

import jax
import numpy as np
import pytest

import components.envs as envs
from components.envs.games import EXTRAS, GAME_IDS, OPENSPIEL_NAMES, observation_shape
from components.envs.games.self_play import SelfPlay

pyspiel = pytest.importorskip("pyspiel")


def play_beside_openspiel(env_id: str, spiel_name: str, n: int, moves: int,
                          check_observation) -> tuple[int, np.ndarray]:
    """`moves` random legal moves (NumPy's, seed 0) in `n` native games of `env_id` (`SelfPlay`,
    the in-graph door) and in `n` of OpenSpiel's `spiel_name`, the same moves in both: before
    each move the same legal moves, player to move and observation
    (`check_observation(ours [...], openspiel_state, player)`), after it the same end and
    returns (the engine starts the next game in the same step). Returns the number of games
    ended and the moves played [moves, n]."""
    games = SelfPlay(env_id, num_threads=1)
    step = jax.jit(games.step)
    state = games.init(jax.random.PRNGKey(0), n)
    reference = pyspiel.load_game(spiel_name)
    theirs = [reference.new_initial_state() for _ in range(n)]
    rng, ended, played = np.random.default_rng(0), 0, []
    for _ in range(moves):
        mask, observation = np.asarray(state.legal_action_mask), np.asarray(state.observation)
        for i, s in enumerate(theirs):
            assert np.flatnonzero(mask[i]).tolist() == s.legal_actions()
            assert int(state.current_player[i]) == s.current_player()
            check_observation(observation[i], s, s.current_player())
        actions = np.array([rng.choice(s.legal_actions()) for s in theirs], np.int32)
        played.append(actions)
        state = step(state, actions)
        for i, s in enumerate(theirs):
            s.apply_action(int(actions[i]))
            assert bool(state.terminated[i]) == s.is_terminal()
            np.testing.assert_array_equal(np.asarray(state.rewards[i]),
                                          s.returns() if s.is_terminal() else [0.0, 0.0])
            if s.is_terminal():
                ended += 1
                theirs[i] = reference.new_initial_state()
    return ended, np.stack(played)


def openspiel_board(state, env_id: str) -> np.ndarray:
    """OpenSpiel's board as the physical state's cells: row-major from the top row, 0 or 1 for
    whose stone, -1 for an empty cell."""
    rows, cols, _ = observation_shape(env_id)
    tensor = np.asarray(state.observation_tensor(0), np.float32)
    if env_id == "ConnectFour-v0":  # [x, o, empty] x [row from the bottom, column]
        planes = tensor.reshape(3, rows, cols)[:, ::-1]
        first, second = planes[0], planes[1]
    elif env_id == "Othello-v0":  # [empty, player 0's (the viewer's), player 1's] x cells
        planes = tensor.reshape(3, rows, cols)
        first, second = planes[1], planes[2]
    else:  # Hex: one plane per cell state, from -4 (white won) to 4 (black won)
        planes = tensor.reshape(9, rows, cols)
        first, second = planes[5:].sum(0), planes[:4].sum(0)
    return (np.where(first > 0, 0, np.where(second > 0, 1, -1))).reshape(-1).astype(np.float64)


def expected_planes(board: np.ndarray, viewer: int, env_id: str) -> np.ndarray:
    """The observation the rules promise: own stones, the opponent's, and for Hex a plane of
    ones when the viewer is player 1, flattened [rows, columns, planes]."""
    planes = [board == viewer, board == 1 - viewer]
    if observation_shape(env_id)[2] == 3:
        planes.append(np.full(board.shape, viewer == 1))
    return np.stack(planes, axis=-1).astype(np.float32).reshape(-1)


def openspiel_mask(state, num_actions: int) -> np.ndarray:
    mask = np.zeros(num_actions, bool)
    mask[state.legal_actions()] = True
    return mask


class HostGames:
    """The host pool behind the comparison's small interface."""

    def __init__(self, env_id: str, num_envs: int, seed: int):
        self.env = envs.make(env_id, num_envs, seed=seed, num_threads=1)
        self.obs, _ = self.env.reset(seed=seed)

    def position(self):
        return self.env.legal_mask(), self.env.physical_state(), self.obs

    def step(self, actions):
        self.obs, reward, terminated, truncated, info = self.env.step(actions)
        names = self.env.env_spec.extras_names
        return (reward, terminated, truncated, info.get("final_obs", self.obs),
                np.stack([info[name] for name in names], axis=1))


class InGraphGames:
    """The self-play interface (in-graph door) behind the comparison's small interface."""

    def __init__(self, env_id: str, num_envs: int, seed: int):
        self.games = SelfPlay(env_id, num_threads=1)
        self.state = self.games.init(jax.random.PRNGKey(seed), num_envs)
        self._step = jax.jit(functools.partial(self.games.door.step, final_obs=True,
                                               extras=True))
        self._mask = jax.jit(self.games.door.legal_mask)

    def position(self):
        obs = np.asarray(self.state.observation).reshape(self.state.observation.shape[0], -1)
        physics = self.games.door.physical_state(self.state.env_state)
        mask = np.asarray(self.state.legal_action_mask)
        np.testing.assert_array_equal(self.state.current_player, physics[:, -1])
        return mask, physics, obs

    def step(self, actions):
        # The door's own outputs (final observations included) and the self-play state.
        out = self._step(self.state.env_state, actions)
        self.state = self.games.step(self.state, actions)
        reward, terminated, truncated, final_obs = map(np.asarray, (
            out.reward, out.terminated, out.truncated, out.final_obs))
        extras = np.stack([np.asarray(out.extras[name])
                           for name in self.games.door.env_spec.extras_names], axis=1)
        np.testing.assert_array_equal(np.asarray(out.state), self.state.env_state)
        np.testing.assert_array_equal(extras[:, 1:3], self.state.rewards)
        np.testing.assert_array_equal(terminated, self.state.terminated)
        return reward, terminated, truncated, final_obs, extras


def play_against_openspiel(games, env_id: str, num_games: int, num_envs: int,
                           seed: int) -> collections.Counter:
    """Random playouts of `num_games` games, `num_envs` at a time, compared with OpenSpiel at
    every step; returns how the games ended (OpenSpiel's returns for player 0)."""
    game = pyspiel.load_game(OPENSPIEL_NAMES[env_id])
    num_actions = game.num_distinct_actions()
    states = [game.new_initial_state() for _ in range(num_envs)]
    rng = np.random.default_rng(seed)
    outcomes: collections.Counter = collections.Counter()
    move = 0
    while sum(outcomes.values()) < num_games:
        mask, physics, obs = games.position()
        boards = np.stack([openspiel_board(s, env_id) for s in states])
        players = np.array([s.current_player() for s in states])
        where = f"{env_id}, move {move}"
        np.testing.assert_array_equal(mask, [openspiel_mask(s, num_actions) for s in states],
                                      err_msg=f"{where}: legal actions")
        np.testing.assert_array_equal(physics[:, :-1], boards, err_msg=f"{where}: boards")
        np.testing.assert_array_equal(physics[:, -1], players, err_msg=f"{where}: to move")
        np.testing.assert_array_equal(
            obs, [expected_planes(b, p, env_id) for b, p in zip(boards, players, strict=True)],
            err_msg=f"{where}: observations")
        actions = np.array([rng.choice(s.legal_actions()) for s in states], np.int32)
        reward, terminated, truncated, final_obs, extras = games.step(actions)
        for state, action in zip(states, actions, strict=True):
            state.apply_action(int(action))
        ended = np.array([s.is_terminal() for s in states])
        np.testing.assert_array_equal(terminated, ended, err_msg=f"{where}: terminal")
        assert not truncated.any(), f"{where}: a game reached the step limit"
        returns = np.array([s.returns() for s in states], np.float32)
        names = envs.spec(env_id).extras_names
        assert names[:3] == EXTRAS
        expected_extras = np.zeros((len(states), len(names)), np.float32)
        expected_extras[:, 0] = np.where(ended, -1, 1 - players)
        expected_extras[ended, 1:3] = returns[ended]
        if "margin_player_0" in names:  # Othello's disc margin, counted on OpenSpiel's board
            after = np.stack([openspiel_board(s, env_id) for s in states])
            expected_extras[:, 3] = (after == 0).sum(1) - (after == 1).sum(1)
        np.testing.assert_array_equal(extras, expected_extras, err_msg=f"{where}: extras")
        np.testing.assert_array_equal(reward, returns[np.arange(len(states)), players],
                                      err_msg=f"{where}: rewards of the movers")
        for i in np.flatnonzero(ended):
            final_board = openspiel_board(states[i], env_id)
            np.testing.assert_array_equal(final_obs[i],
                                          expected_planes(final_board, 1 - players[i], env_id),
                                          err_msg=f"{where}: final observation of game {i}")
            outcomes[returns[i, 0]] += 1
            states[i] = game.new_initial_state()
        move += 1
    return outcomes


# (games on the host pool, games in-graph) per game: each game's test stays within seconds.
PLAYOUTS = {"ConnectFour-v0": (600, 48), "Othello-v0": (300, 32), "Hex-v0": (160, 24)}


@pytest.mark.parametrize("env_id", GAME_IDS)
def test_random_playouts_follow_openspiel_on_the_host_pool(env_id):
    outcomes = play_against_openspiel(HostGames(env_id, 32, seed=1), env_id,
                                      PLAYOUTS[env_id][0], 32, seed=1)
    assert outcomes[1.0] > 0 and outcomes[-1.0] > 0, outcomes  # both players won games


@pytest.mark.parametrize("env_id", GAME_IDS)
def test_random_playouts_follow_openspiel_in_graph(env_id):
    play_against_openspiel(InGraphGames(env_id, 8, seed=2), env_id, PLAYOUTS[env_id][1], 8,
                           seed=2)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", GAME_IDS)
def test_thousands_of_random_playouts_follow_openspiel(env_id):
    outcomes = play_against_openspiel(HostGames(env_id, 128, seed=3), env_id, 3000, 128,
                                      seed=3)
    if env_id != "Hex-v0":
        assert outcomes[0.0] > 0, outcomes  # draws happen too


@pytest.mark.parametrize("env_id", GAME_IDS)
def test_positions_set_from_openspiel_boards_have_its_legal_actions(env_id):
    """Positions of random OpenSpiel games, the final ones included, set as physical states:
    the same legal actions (none once the game is over) and observations."""
    game = pyspiel.load_game(OPENSPIEL_NAMES[env_id])
    rng = np.random.default_rng(4)
    positions = []
    for _ in range(40):
        state = game.new_initial_state()
        while not state.is_terminal():
            if rng.random() < 0.1:
                positions.append(state.clone())
            state.apply_action(rng.choice(state.legal_actions()))
        positions.append(state)
    boards = np.stack([openspiel_board(s, env_id) for s in positions])
    # the players alternate (an Othello pass is a move): at a game's end, where OpenSpiel has no
    # player to move, the next would have been the last mover's opponent
    players = np.array([len(s.history()) % 2 for s in positions])
    assert all(p == s.current_player() for p, s in zip(players, positions, strict=True)
               if not s.is_terminal())
    pool = envs.make(env_id, len(positions), seed=0, num_threads=1)
    obs, _ = pool.reset(options={"state": np.c_[boards, players]})
    expected = np.stack([openspiel_mask(s, game.num_distinct_actions()) for s in positions])
    np.testing.assert_array_equal(pool.legal_mask(), expected)
    np.testing.assert_array_equal(obs, [expected_planes(b, p, env_id)
                                        for b, p in zip(boards, players, strict=True)])
