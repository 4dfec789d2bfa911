"""`metagraph play` (issue 25 part 7), without a terminal: the board it draws is OpenSpiel's
board of the same game after every move (the last position too, after the engine has started
the next game), and the moves it names and reads are OpenSpiel's spellings. The game against a
trained agent through a pseudo-terminal is in test_self_play_training.py."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from components.envs.games import GAME_IDS, OPENSPIEL_NAMES
from components.envs.games.self_play import SelfPlay
from components.training.games.notation import board_cells, board_text, move_text, parse_move

pyspiel = pytest.importorskip("pyspiel")


def openspiel_cells(state) -> str:
    """The cells of OpenSpiel's drawing of `state`, row by row: x, o or . (Othello's `-`)."""
    lines = str(state).splitlines()
    if state.get_game().get_type().short_name == "othello":  # rows start with their number
        lines = [line for line in lines if line[:1].isdigit()]
    return "".join(ch for line in lines for ch in line if ch in "xo.-").replace("-", ".")


def drawn_cells(env_id, planes, mover) -> str:
    """The cells of our drawing, row by row (its first and last lines are the letters)."""
    rows = board_text(env_id, board_cells(planes, mover)).splitlines()[1:-1]
    return "".join(ch for line in rows for ch in line if ch in "xo.")


@pytest.mark.parametrize("env_id", GAME_IDS)
def test_the_board_drawn_is_openspiels_after_every_move(env_id):
    games, spiel = SelfPlay(env_id, num_threads=1), pyspiel.load_game(OPENSPIEL_NAMES[env_id])
    step = jax.jit(games.step_with_final_observation)
    rng = np.random.default_rng(0)
    state, reference, ended = games.init(jax.random.PRNGKey(0), 1), spiel.new_initial_state(), 0
    for _ in range(150 if env_id == "Othello-v0" else 120):
        mover = int(state.current_player[0])
        assert drawn_cells(env_id, np.asarray(state.observation[0]), mover) == \
            openspiel_cells(reference)
        action = int(rng.choice(reference.legal_actions()))
        state, final = step(state, jnp.asarray([action], jnp.int32))
        reference.apply_action(action)
        if bool(state.terminated[0]):  # the last position, from the next mover's planes
            assert drawn_cells(env_id, np.asarray(final[0]), 1 - mover) == \
                openspiel_cells(reference)
            reference, ended = spiel.new_initial_state(), ended + 1
    assert ended >= 1


@pytest.mark.parametrize("env_id", GAME_IDS)
def test_moves_are_named_and_read_as_openspiel_writes_them(env_id):
    spiel = pyspiel.load_game(OPENSPIEL_NAMES[env_id])
    state, rng = spiel.new_initial_state(), np.random.default_rng(1)
    for _ in range(12):
        legal = np.zeros(spiel.num_distinct_actions(), bool)
        legal[state.legal_actions()] = True
        for action in state.legal_actions():
            text = move_text(env_id, action)
            if env_id != "ConnectFour-v0":  # OpenSpiel writes "x3" for column 3 there
                assert text == state.action_to_string(state.current_player(), action)
            assert parse_move(env_id, text.upper(), legal) == action
        state.apply_action(int(rng.choice(state.legal_actions())))
    assert parse_move("ConnectFour-v0", "4", np.ones(7, bool)) == 3


@pytest.mark.parametrize(("env_id", "text", "message"), [
    ("ConnectFour-v0", "h", "'h' is not a column: type a letter a-g"),
    ("ConnectFour-v0", "0", "'0' is not a column"),
    ("Othello-v0", "i1", "'i1' is not a cell: type a column a-h and a row 1-8"),
    ("Othello-v0", "a9", "'a9' is not a cell"),
    ("Othello-v0", "a1", "a1 is not a legal move here"),
    ("Othello-v0", "pass", "pass is not a legal move here"),
    ("Hex-v0", "", "'' is not a cell: type a column a-k and a row 1-11"),
    ("ConnectFour-v0", "\u00b2", "'\u00b2' is not a column"),  # a digit to isdigit, no number
    ("Othello-v0", "a\u0661", "'a\u0661' is not a cell"),
])
def test_a_move_that_is_not_legal_says_why(env_id, text, message):
    legal = np.zeros({"ConnectFour-v0": 7, "Othello-v0": 65, "Hex-v0": 121}[env_id], bool)
    legal[3] = True
    with pytest.raises(ValueError, match=f"^{message}"):
        parse_move(env_id, text, legal)


def test_a_game_written_as_openspiel_writes_it_also_takes_move_numbers():
    """Issue 55: `play` of a user's game took only OpenSpiel's full move names (P1(h,0,0) at
    Dots and Boxes), and every refusal spoke of "a capture's *" (Breakthrough's notation)."""
    from components.training.games.notation import NumberNotation, OpenSpielNotation

    dots = OpenSpielNotation(pyspiel.load_game("dots_and_boxes"))
    legal = np.zeros(12, bool)
    legal[[0, 5]] = True
    assert dots.parse("5", legal) == 5 and dots.parse(dots.move(0), legal) == 0
    with pytest.raises(ValueError, match=r"^3 is not the number of a legal move here \(those "
                                         r"listed are 0, 5\)"):
        dots.parse("3", legal)
    with pytest.raises(ValueError, match=r"'h9' is not a legal move here: type one of those "
                                         r"listed, or its number$"):
        dots.parse("h9", legal)
    breakthrough = OpenSpielNotation(pyspiel.load_game("breakthrough"))
    opening = np.zeros(breakthrough.state.get_game().num_distinct_actions(), bool)
    opening[breakthrough.state.legal_actions()] = True  # no capture among them
    with pytest.raises(ValueError) as refused:
        breakthrough.parse("z9", opening)
    assert "capture" not in str(refused.value)

    class Capturing:  # a position where a capture ("*") is legal
        def current_player(self):
            return 0

        def action_to_string(self, player, action):
            return ["a5b4*", "a5a4"][action]

    capturing = OpenSpielNotation.__new__(OpenSpielNotation)
    capturing.state = Capturing()
    assert capturing.parse("a5b4", np.ones(2, bool)) == 0  # the * left out
    with pytest.raises(ValueError, match=r"a capture's \* may be left out\), or its number"):
        capturing.parse("z9", np.ones(2, bool))
    with pytest.raises(ValueError, match=r"^'\u00b2' is not a move: type an action number"):
        NumberNotation("ConnectFour-v0").parse("\u00b2", np.ones(7, bool))
