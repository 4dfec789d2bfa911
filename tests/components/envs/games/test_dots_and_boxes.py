"""A user's game where a player may move again (examples/games/dots_and_boxes: a line that
completes a box earns the next line) follows OpenSpiel's `dots_and_boxes` move by move on both
boards, the player to move included, and passes the engine's conformance check; the tests'
exact solver of the 2x2 board agrees with OpenSpiel's alpha-beta search."""

import numpy as np
import pytest

import components.envs as envs

pyspiel = pytest.importorskip("pyspiel")

from dots_and_boxes import Solver2x2, box_lines, completed, position_of, register  # noqa: E402
from test_games_vs_openspiel import play_beside_openspiel  # noqa: E402
from user_tasks import assert_forged_positions_refused  # noqa: E402


@pytest.fixture(scope="module")
def game():
    return register()


def expected_lines(state, rows: int, columns: int) -> np.ndarray:
    """The lines OpenSpiel's state has drawn, at their cells of the grid [2R+1, 2C+1]."""
    grid = np.zeros((2 * rows + 1, 2 * columns + 1), bool)
    horizontal = (rows + 1) * columns
    for line in state.history():
        if line < horizontal:
            r, c = divmod(line, columns)
            grid[2 * r, 2 * c + 1] = True
        else:
            r, c = divmod(line - horizontal, columns + 1)
            grid[2 * r + 1, 2 * c] = True
    return grid


@pytest.mark.parametrize("rows", [2, 3])
def test_follows_openspiels_dots_and_boxes_move_by_move(game, rows):
    env_id = f"DotsAndBoxes{rows}x{rows}-v0"
    assert envs.num_players(env_id) == 2
    assert envs.openspiel_name(env_id) == f"dots_and_boxes(num_cols={rows},num_rows={rows})"
    again = []

    def same_planes(ours, state, player):
        lines = expected_lines(state, rows, rows)
        np.testing.assert_array_equal(ours[..., 0] > 0, lines)
        boxes = ours[1::2, 1::2, 1:]  # the mover's, the opponent's
        closed = lines[0:-1:2, 1::2] & lines[2::2, 1::2] & lines[1::2, 0:-1:2] & \
            lines[1::2, 2::2]
        np.testing.assert_array_equal(boxes.sum(-1) > 0, closed)
        history = state.full_history()
        if history:  # the player who drew the last line moves again after closing a box
            again.append(history[-1].player == player)

    ended, _ = play_beside_openspiel(env_id, envs.openspiel_name(env_id), 8,
                                     6 * (2 * rows * (rows + 1)), same_planes)
    assert ended >= 8 * 5
    assert 0.1 < np.mean(again) < 0.9  # many moves again, many pass the turn


def test_passes_the_engines_conformance_check(game):
    envs.check(game)


def test_a_forged_position_is_refused_saying_why(game):
    """A position no game reaches has no legal move, and the step refuses it in the task's
    words (`invalid_reason`); nothing moves."""
    closed = dict.fromkeys(box_lines(0), 1.0)
    assert_forged_positions_refused(game, [
        (closed, "has box 0 closed but unowned"),
        ({**closed, 12: 1.0, 13: 0.0}, "has box 1 owned but not closed"),
        (dict.fromkeys(range(12), 1.0), "has every line drawn"),
        ({16: 2.0}, "has a player to move that is not 0 or 1"),
        ({3: 0.5}, "has a line that is not 0 or 1")], action=5)


def test_the_solver_agrees_with_openspiels_alpha_beta_search(game):
    """Every position of 5 or fewer lines left that random games reach: the solver's value
    equals OpenSpiel's alpha-beta search's on OpenSpiel's game (margins off: +1, 0, -1)."""
    from open_spiel.python.algorithms import minimax

    spiel = pyspiel.load_game("dots_and_boxes(num_cols=2,num_rows=2)")
    solver, rng, checked = Solver2x2(), np.random.default_rng(0), 0
    for _ in range(40):
        state, lines, lead = spiel.new_initial_state(), 0, 0
        for _ in range(7 + rng.integers(0, 4)):
            line = int(rng.choice(state.legal_actions()))
            taken = completed(lines, line)
            player = state.current_player()
            state.apply_action(line)
            lines |= 1 << line
            lead = lead + taken if taken else -lead  # the next mover's lead
            assert (state.current_player() == player) == (taken > 0)
        mover = state.current_player()
        value, _ = minimax.alpha_beta_search(spiel, state=state, maximizing_player_id=mover)
        assert solver.value(lines, lead) == value, (state.history(), lead)
        checked += 1
    assert checked == 40


def test_the_solver_reads_the_observation(game):
    """`position_of` recovers the line set and the mover's lead from our planes."""
    pool = envs.make(game, 1, seed=0)
    obs, _ = pool.reset()
    rng, lines, lead = np.random.default_rng(1), 0, 0
    for _ in range(9):
        legal = np.flatnonzero(pool.legal_mask()[0])
        line = int(rng.choice(legal))
        taken = completed(lines, line)
        obs, *_ = pool.step(np.array([line]))
        lines |= 1 << line
        lead = lead + taken if taken else -lead
        assert position_of(obs[0]) == (lines, lead)
