"""Bad input to the board games: an illegal move (a full column, an occupied cell, a stone that
turns nothing over, a pass while a move exists) is refused on the host pool, the in-graph door
and the self-play interface with the engine's message and every state intact; a physical
state that is no position of the game (a floating stone, stone counts that do not match the
player to move, a cell value that is no player) or whose game is over has no legal action and
its step is refused, saying which; records whose words are no position are refused as such."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from toy_components import Roller

import components.envs as envs
import metagraph as mg
from backends import xla
from components.envs import Environment
from components.envs.engine.in_graph import state_of
from components.envs.games import GAME_IDS
from components.envs.games.self_play import SelfPlay
from metagraph.spaces import PRNGKey

N = 4


def connect_four_board(columns: dict[int, list[int]], to_move: float) -> np.ndarray:
    """A physical state: each column's stones from the bottom, by owner."""
    cells = -np.ones((6, 7))
    for col, stones in columns.items():
        for height, owner in enumerate(stones):
            cells[5 - height, col] = owner
    return np.append(cells.reshape(-1), to_move)


FULL_COLUMN_0 = connect_four_board({0: [0, 1, 0, 1, 0, 1]}, 0)


def with_cell(physics: np.ndarray, row: int, col: int, value: float) -> np.ndarray:
    out = physics.copy()
    out[row * 7 + col] = value
    return out


@pytest.mark.parametrize("env_id, physics, action, legal", [
    ("ConnectFour-v0", FULL_COLUMN_0, 0, 3),
    ("Othello-v0", None, 64, 19),  # a pass at the start, where black has four moves
    ("Othello-v0", None, 0, 19),   # a corner that outflanks nothing
    ("Hex-v0", None, 60, 3),       # the centre, taken below by player 0's first move
])
def test_an_illegal_move_is_refused_on_every_door_with_every_state_intact(env_id, physics,
                                                                           action, legal):
    pool = envs.make(env_id, N, seed=0, num_threads=2)
    if physics is not None:
        pool.reset(options={"state": physics})
    elif env_id == "Hex-v0":
        pool.step(np.full(N, 60, np.int32))
    before = pool.records()
    message = rf"^{env_id}: action {action} at index 2 is not legal in its state$"
    actions = np.full(N, legal, np.int32)
    actions[2] = action
    with pytest.raises(ValueError, match=message):
        pool.step(actions)
    np.testing.assert_array_equal(pool.records(), before)
    assert not pool.legal_mask()[2, action]

    door = envs.make_functional(env_id, num_threads=1)
    state = jnp.asarray(door.state_from_physical(pool.physical_state()))
    with pytest.raises(ValueError, match=message):  # eager: the host pool's refusal
        door.step(state, jnp.asarray(actions))
    with pytest.raises(jax.errors.JaxRuntimeError, match=message[1:-1]):  # in a program
        jax.block_until_ready(jax.jit(door.step)(state, jnp.asarray(actions)))
    np.testing.assert_array_equal(door.physical_state(state), pool.physical_state())

    games = SelfPlay(env_id, num_threads=1)
    game_state = games.init(jax.random.PRNGKey(0), N)._replace(env_state=state)
    with pytest.raises(ValueError, match=message):
        jax.block_until_ready(games.step(game_state, jnp.asarray(actions)))


BROKEN = "holds no position of ConnectFour-v0: the physical state it was started from breaks"


@pytest.mark.parametrize("what, physics, why", [
    ("a floating stone", with_cell(connect_four_board({}, 1), 3, 2, 0), BROKEN),
    ("stone counts that do not match the player to move", connect_four_board({0: [0, 1]}, 1),
     BROKEN),
    ("a cell value that is no player", with_cell(connect_four_board({0: [0]}, 1), 5, 3, 2),
     BROKEN),
    ("a player to move that is no player", connect_four_board({}, 0.5), BROKEN),
    ("a game already won", connect_four_board({0: [0, 0, 0, 0], 1: [1, 1, 1]}, 1),
     "holds a game that is over"),
])
def test_a_position_that_cannot_be_played_has_no_legal_move_and_is_refused(what, physics, why):
    pool = envs.make("ConnectFour-v0", N, seed=0, num_threads=1)
    rows = np.tile(connect_four_board({}, 0), (N, 1))
    rows[1] = physics
    pool.reset(options={"state": rows})
    mask = pool.legal_mask()
    assert not mask[1].any(), what
    assert mask[[0, 2, 3]].all()
    with pytest.raises(ValueError, match=f"^ConnectFour-v0 step: environment 1 {why}"):
        pool.step(np.zeros(N, np.int32))
    door = envs.make_functional("ConnectFour-v0", num_threads=1)
    state = jnp.asarray(door.state_from_physical(rows))
    assert not np.asarray(door.legal_mask(state))[1].any()
    with pytest.raises(Exception, match=f"ConnectFour-v0 step: environment 1 {why}"):
        jax.block_until_ready(door.step(state, jnp.zeros(N, jnp.int32)))


@settings(max_examples=60, deadline=None)
@given(env_id=st.sampled_from(GAME_IDS), data=st.data())
def test_any_finite_physical_state_is_played_or_refused_alike_on_both_doors(env_id, data):
    """Whatever numbers a physical state holds, the doors agree on its legal actions, a legal
    one steps and any action in a state without one is refused."""
    dim = envs.spec(env_id).physical_dim
    cells = st.sampled_from([-1.0, -1.0, -1.0, 0.0, 1.0, 2.0, 0.5, -1e300])
    physics = data.draw(arrays(np.float64, dim, elements=cells))
    pool = envs.make(env_id, 1, seed=0, num_threads=1)
    pool.reset(options={"state": physics})
    mask = pool.legal_mask()[0]
    door = envs.make_functional(env_id, num_threads=1)
    state = jnp.asarray(door.state_from_physical(physics[None]))
    np.testing.assert_array_equal(np.asarray(door.legal_mask(state))[0], mask)
    if mask.any():
        pool.step(np.flatnonzero(mask)[:1].astype(np.int32))
    else:
        with pytest.raises(ValueError, match=f"^{env_id} step: environment 0 holds (no position "
                                             f"of {env_id}|a game that is over)"):
            pool.step(np.zeros(1, np.int32))


@pytest.mark.parametrize("words", [
    {1: 1 << 6},               # a stone on the guard bit above column 0: off the board
    {1: 1, 2: 1},              # the bottom-left cell held by both players
    {0: np.float64(0.5).view(np.uint64)},  # a header that is no player to move
])
def test_forged_records_are_refused_as_no_position(words):
    pool = envs.make("ConnectFour-v0", N, seed=0, num_threads=1)
    records = pool.records()
    for word, value in words.items():
        records[3, word] = value
    message = (r"^ConnectFour-v0 step: environment 3 holds words that are no position of "
               r"ConnectFour-v0 \(they did not come from reset or step\)$")
    with pytest.raises(ValueError, match=message):
        pool.set_records(records)
    door = envs.make_functional("ConnectFour-v0", num_threads=1)
    with pytest.raises(Exception, match=message[1:-1]):
        jax.block_until_ready(door.step(jnp.asarray(state_of(records)),
                                        jnp.zeros(N, jnp.int32)))


def test_self_play_refuses_what_is_no_game():
    with pytest.raises(ValueError, match=r"^SelfPlay: 'CartPole-v1' is not a game \(a task that "
                                         r"declares num_players\(\), engine/task.h"):
        SelfPlay("CartPole-v1")


def finished_board(env_id: str) -> np.ndarray:
    """A physical state whose game is over: player 0 has won."""
    if env_id == "ConnectFour-v0":
        return connect_four_board({0: [0, 0, 0, 0], 1: [1, 1, 1]}, 1)
    if env_id == "Othello-v0":
        return np.append(np.zeros(64), 0)  # every disc black: nobody can move
    cells = -np.ones((11, 11))  # Hex: player 0 joins the top row to the bottom one
    cells[:, 0], cells[:10, 2] = 0, 1
    return np.append(cells.reshape(-1), 1)


@pytest.mark.parametrize("env_id", GAME_IDS)
def test_words_that_say_a_finished_game_goes_on_are_refused_on_every_door(env_id):
    """A finished game's records with the header word changed to "playing" (a state set from
    outside): not stepped on, no legal move, refused alike by the host pool's `set_records`,
    the in-graph door and self-play."""
    pool = envs.make(env_id, N, seed=0, num_threads=1)
    rows = np.tile(pool.physical_state()[0], (N, 1))
    rows[2] = finished_board(env_id)
    pool.reset(options={"state": rows})
    records = pool.records()
    records[2, 0] = np.float64(rows[2, -1]).view(np.uint64)  # the player to move, "playing"
    message = (rf"^{env_id} step: environment 2 holds a board on which the game is over "
               r"\(player 0 won\) though its words say it goes on")
    with pytest.raises(ValueError, match=message):
        pool.set_records(records)
    door = envs.make_functional(env_id, num_threads=1)
    state = jnp.asarray(state_of(records))
    mask = np.asarray(door.legal_mask(state))
    assert not mask[2].any() and mask[[0, 1, 3]].any(axis=1).all()
    actions = jnp.asarray(np.argmax(mask, axis=1).astype(np.int32))
    with pytest.raises(Exception, match=message[1:]):
        jax.block_until_ready(door.step(state, actions))
    games = SelfPlay(env_id, num_threads=1)
    game_state = games.init(jax.random.PRNGKey(0), N)._replace(env_state=state)
    with pytest.raises(Exception, match=message[1:]):
        jax.block_until_ready(games.step(game_state, actions))



@pytest.mark.parametrize("make", [
    lambda: Environment("ConnectFour-v0", N),
    lambda: Environment("connect_four", N, door="host"),
], ids=["native", "host"])
def test_the_environment_component_refuses_an_illegal_move_after_the_call_with_every_game_kept(
        make):
    """One exception type and one message for an illegal move on every door of the component
    (`mg.RuntimeCheckError` after the call, the engine's words), the games as they were and
    stepping on; its step record carries the next positions' legal moves and the game's
    extras by name."""
    env = make()
    exe = xla.lower(mg.build(Roller(env), {"key": PRNGKey(),
                                          "action": env.batch_action_space()}))
    exe.start(np.asarray(jax.random.PRNGKey(0)))
    for _ in range(6):  # column 0 filled, both players in turn
        out = exe.act(np.zeros(N, np.int32))
    assert out.legal_mask.shape == (N, 7) and not out.legal_mask[:, 0].any()
    assert out.legal_mask[:, 1:].all()
    assert set(out.extras) == {"player_to_move", "reward_player_0", "reward_player_1"}
    np.testing.assert_array_equal(out.extras["player_to_move"], np.zeros(N))  # six moves made
    np.testing.assert_array_equal(out.extras["reward_player_1"], np.zeros(N))
    scope = exe.graph.scope_of(env)
    before = exe.get_states(env)[scope]
    actions = np.array([3, 3, 0, 3], np.int32)
    with pytest.raises(mg.RuntimeCheckError,
                       match=r"ConnectFour-v0: action 0 at index 2 is not legal in its state"):
        exe.act(actions)
    after = exe.get_states(env)[scope]
    np.testing.assert_array_equal(after["env_state"], before["env_state"])
    np.testing.assert_array_equal(after["legal"], before["legal"])
    if env.door == "host":  # the pool was not stepped
        np.testing.assert_array_equal(env.functional.pool.legal_mask(), before["legal"])
    out = exe.act(np.full(N, 3, np.int32))  # and the games go on
    assert out.legal_mask[:, 1:].all() and not out.legal_mask[:, 0].any()
