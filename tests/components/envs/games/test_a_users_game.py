"""A user's game in one header plays itself (issue 33, part 1): tic-tac-toe
(`tasks/tic_tac_toe.h`), built and registered from outside the package with OpenSpiel's name as
an alias, is a game because its task says so (`num_players()`, legal actions, extras named for
the player to move and each player's reward), not because an id list knows it. Its self-play
batch follows OpenSpiel's own `tic_tac_toe` move by move (legal moves, player to move, boards,
returns); it passes the engine's conformance check; AlphaZero and PPO's self-play train on it
and `evaluate --opponent random` plays it by its own rules; a task that declares players but
misnames its extras is refused at registration."""

import json
from types import SimpleNamespace

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from margin_paths import margin_paths
from user_tasks import TASKS, register_task

import components.envs as envs
from components.envs.engine.in_graph import state_of
from components.envs.engine.spec import check_spec
from components.envs.games.self_play import SelfPlay

pyspiel = pytest.importorskip("pyspiel")

from test_games_vs_openspiel import play_beside_openspiel  # noqa: E402


@pytest.fixture(scope="module")
def game():
    return register_task("TicTacToe-v0", "tic_tac_toe.h", "ttt::TicTacToe",
                         gymnasium.spaces.Box(0, 1, (3, 3, 2), np.bool_), 9,
                         aliases=("tic_tac_toe",))


def test_the_task_declares_a_game_and_every_name_of_it_is_one(game):
    made = envs.spec("tic_tac_toe")
    assert made.env_id == game and made.num_players == 2
    assert made.extras_names == ("player_to_move", "reward_player_0", "reward_player_1")
    assert envs.num_players(game) == envs.num_players("tic_tac_toe") == 2
    assert envs.num_players(f"metagraph/{game}") == 2
    assert envs.num_players("CartPole-v1") == envs.num_players("LunarLander-v3") == 1
    assert envs.spec("CartPole-v1").num_players == 1
    assert envs.observation_shape(game) == (3, 3, 2)


def test_self_play_follows_openspiels_tic_tac_toe_move_by_move(game):
    def same_planes(ours, state, player):
        planes = np.asarray(state.observation_tensor(player)).reshape(3, 3, 3)
        np.testing.assert_array_equal(ours, np.stack([planes[2 - player], planes[1 + player]],
                                                     -1))

    ended, _ = play_beside_openspiel("tic_tac_toe", "tic_tac_toe", 16, 60, same_planes)
    assert ended > 2 * 16


def test_the_users_game_passes_the_engines_conformance_check(game):
    assert "the player to move one of the game's players" in envs.check(game)
    with pytest.raises(envs.ConformanceError, match=r"the player to move one of the game's "
                                                    r"players: FAILED: AssertionError: step 0: "
                                                    r"environment 0 reports player 5 to move"):
        envs.check(game, stray_mover=True)


def test_a_game_without_a_move_that_goes_on_and_a_wrong_random_legal_are_named(game):
    # envs.check tries the game's own random_legal through the playouts
    assert "random playouts draw legal moves to the game's end" in envs.check(game)
    with pytest.raises(envs.ConformanceError,
                       match=r"random playouts draw legal moves to the game's end: FAILED: "
                             r".*TicTacToe-v0: random_legal drew action 99 outside \[0, 9\)"):
        envs.check(game, bad_draw=True)
    door = envs.InGraphEnv(envs.spec(game, bad_draw=True), 1)
    pool = envs.make(game, 2, seed=0, num_threads=1, bad_draw=True)
    pool.reset()
    pool.step(np.array([4, 4]))
    state = jnp.asarray(state_of(pool.records()))
    with pytest.raises(Exception, match=r"random_legal drew action 4, which legal\(\) "
                                        r"refuses in environment 0's state"):
        jax.block_until_ready(door.playout(state, jax.random.PRNGKey(0),
                                           check_draws=True).returns)
    # a position with no legal move whose game goes on: named on every door, not a draw
    with pytest.raises(envs.ConformanceError, match=r"environment 0 offers no legal action, "
                                                    r"though its episode goes on: a game that "
                                                    r"goes on must offer a move"):
        envs.check(game, stuck=True)
    pool = envs.make(game, 2, seed=0, num_threads=1, stuck=True)
    pool.reset()
    pool.step(np.array([0, 1]))
    pool.step(np.array([3, 4]))
    assert not pool.legal_mask().any()
    with pytest.raises(ValueError, match=r"action 5 at index 0 is not legal in its state, "
                                         r"which offers no legal action at all though it is "
                                         r"not an end: a game that goes on must offer a move"):
        pool.step(np.array([5, 5]))
    door = envs.InGraphEnv(envs.spec(game, stuck=True), 1)
    with pytest.raises(Exception, match=r"environment 0 offers no legal action, yet its game "
                                        r"is not over \(player 0 to move\)"):
        jax.block_until_ready(door.playout(jnp.asarray(state_of(pool.records())),
                                           jax.random.PRNGKey(0)).returns)


def test_alphazero_and_ppo_self_play_train_on_the_users_game_and_it_is_evaluated(
        game, tmp_path, capsys):
    pytest.importorskip("mctx")
    from components.agents.alphazero_config import AlphaZeroConfig
    from components.training.algorithms import AlphaZero
    from components.training.cli import main
    from components.training.run.executors import lower

    config = AlphaZeroConfig(num_envs=4, num_steps=12, num_simulations=4, buffer_size=128,
                             batch_size=8, updates_per_iteration=1, hidden=(16,))
    algorithm = AlphaZero()
    exe = lower(algorithm.build("tic_tac_toe", config, 1000, 1), "xla", seed=0)
    algorithm.start(exe, jax.random.PRNGKey(0))
    [row] = algorithm.run(exe, config, jax.random.PRNGKey(1), 1)
    assert row.steps == 48 and np.isfinite(row.extra["loss"])

    main(["train", "tic_tac_toe", "--algo", "ppo", "--out", str(tmp_path / "ppo"),
          "--set", "num_envs=4", "--set", "num_steps=16", "--set", "minibatches=2",
          "--set", "epochs=1", "--set", "hidden=[16]", "--set", "iterations_per_call=2",
          "--steps", "128"])
    assert (tmp_path / "ppo" / "checkpoint.npz").is_file()

    # evaluated against a random player by its own rules (no OpenSpiel twin is asked for)
    main(["evaluate", str(tmp_path / "ppo"), "--opponent", "random", "--games", "6", "--json"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["games"] == 6 and result["wins"] + result["draws"] + result["losses"] == 6
    assert sum(result["as_first"]) == 3
    with pytest.raises(SystemExit) as info:  # OpenSpiel's MCTS searches OpenSpiel's games
        main(["evaluate", str(tmp_path / "ppo"), "--opponent", "mcts:5", "--games", "2"])
    assert info.value.code == 2
    assert "TicTacToe-v0 has no OpenSpiel twin" in capsys.readouterr().err


@pytest.fixture(scope="module")
def game_with_margin():
    """The same header with `margin=True`: its own signal, "margin_player_0", beside the
    protocol's extras."""
    module = envs.build_extension(TASKS / "tic_tac_toe.h", "ttt::TicTacToe")

    def make_spec(made_id, kwargs):
        made = module.TicTacToe(made_id, {**kwargs, "margin": True})
        return envs.EnvSpec(made_id, gymnasium.spaces.Box(0, 1, (3, 3, 2), np.bool_),
                            gymnasium.spaces.Discrete(9), int(made.max_steps), made)

    envs.register("TicTacToeMargin-v0", make_spec)
    return "TicTacToeMargin-v0"


def test_path_reweighting_ranks_a_users_games_by_the_margin_its_task_reports(
        game, game_with_margin):
    """`quality = "margin"` reads a user's game's own extra, as Othello's: random games
    (explore = 1), each path's q its outcome plus half the learner's final margin over the 9
    cells, the margin counted again from OpenSpiel's `tic_tac_toe` replaying the paths'
    moves (one plus the empty cells, the winner's)."""
    from components.agents.reweight_agent import ReweightAgent
    from components.agents.reweight_config import ReweightConfig

    assert envs.spec(game_with_margin).extras_names[-1] == "margin_player_0"
    outcomes = set()
    for path, q, state, side in margin_paths(game_with_margin, "tic_tac_toe"):
        outcome = state.returns()[side]
        empty = str(state).count(".")  # OpenSpiel's board: "x", "o" and "." a cell
        expected = 0.0 if outcome == 0 else outcome + 0.5 * outcome * (1 + empty) / 9
        assert q == pytest.approx(expected), path
        outcomes.add(outcome)
    assert len(outcomes) > 1  # the ranking met more than one kind of game

    with pytest.raises(ValueError, match="TicTacToe-v0 reports \\['player_to_move'"):
        ReweightAgent(game, ReweightConfig(quality="margin", hidden=(8,)))


def _task(**changes):
    """A stand-in for a compiled game task's sizes, as check_spec reads them."""
    sizes = dict(obs_shape=(4,), bool_observations=False, discrete=True, num_actions=3,
                 max_steps=10, extras_dim=3, num_players=2,
                 extras_names=("player_to_move", "reward_player_0", "reward_player_1"))
    return SimpleNamespace(**{**sizes, **changes})


@pytest.mark.parametrize("changes, words", [
    ({"extras_names": ("player_to_move", "reward_player_0", "score")},
     "missing: ['reward_player_1']"),
    ({"extras_names": ("a", "a", "b")}, "not distinct non-empty names"),
    ({"extras_names": ("player_to_move", "reward_player_0")}, "it names 2 extras"),
    ({"num_players": 0}, "num_players() is 0"),
])
def test_a_game_that_misnames_its_extras_is_refused(changes, words):
    made = envs.EnvSpec("Mine-v0", gymnasium.spaces.Box(0, 1, (4,), np.float32),
                        gymnasium.spaces.Discrete(3), 10, _task(**changes))
    with pytest.raises(ValueError, match="register\\('Mine-v0'\\)") as error:
        check_spec("Mine-v0", made)
    assert words in str(error.value)
    check_spec("Mine-v0", envs.EnvSpec("Mine-v0", made.observation_space, made.action_space,
                                       10, _task()))


@pytest.fixture(scope="module")
def three_players():
    return register_task("ThreePlayerNim-v0", "three_player_nim.h", "nim3::ThreePlayerNim",
                         gymnasium.spaces.Box(0, 1, (4,), np.float32), 3)


def test_a_game_of_three_plays_itself_and_two_player_self_play_refuses_it(three_players):
    """SelfPlay reads any number of players by name (each player's reward); the agents' one
    policy with the mover's value negated is for two-player games and each says so."""
    from components.agents import PPOAgent, ReweightAgent
    from components.agents.alphazero_agent import AlphaZeroAgent

    assert envs.spec(three_players).num_players == envs.num_players(three_players) == 3
    games, n = SelfPlay(three_players, num_threads=1), 8
    state = games.init(jax.random.PRNGKey(0), n)
    assert state.rewards.shape == (n, 3) and state.observation.shape == (n, 4)
    stones = np.asarray(games.door.physical_state(state.env_state))[:, 0]
    step, ended = jax.jit(games.step), 0
    for _ in range(30):
        mover = np.asarray(state.current_player)
        np.testing.assert_array_equal(np.asarray(state.observation)[np.arange(n), 1 + mover], 1)
        state = step(state, jnp.zeros(n, jnp.int32))  # take one stone
        stones = stones - 1
        over = stones == 0
        np.testing.assert_array_equal(np.asarray(state.terminated), over)
        rewards = np.asarray(state.rewards)
        expected = np.where(over[:, None], -0.5, 0.0) + 1.5 * (
            over[:, None] & (np.arange(3) == mover[:, None]))
        np.testing.assert_array_equal(rewards, expected)
        ended += over.sum()
        stones = np.where(over, np.asarray(games.door.physical_state(state.env_state))[:, 0],
                          stones)
    assert ended >= n
    for agent in (PPOAgent, ReweightAgent, AlphaZeroAgent):
        with pytest.raises(ValueError, match=f"{agent.__name__}: ThreePlayerNim-v0 is a game of "
                                             f"3 players; one policy playing every side"):
            agent(three_players)


def test_a_users_game_declares_its_symmetries_and_alphazero_learns_under_them(tmp_path):
    """A user's spec (the header of this file's games) declares the square's eight
    symmetries through the public `envs.board_symmetries`; AlphaZero's `augment` takes them
    and trains; a declaration of the wrong sizes is refused, naming the id."""
    from components.agents.alphazero_config import AlphaZeroConfig
    from components.training import RunSpec, train

    module = envs.build_extension(TASKS / "tic_tac_toe.h", "ttt::TicTacToe")
    names = ("flip_lr", "flip_ud", "rot180", "transpose", "antitranspose", "rot90", "rot270")

    def make_spec(made_id, kwargs, planes=2):
        made = module.TicTacToe(made_id, kwargs)
        return envs.EnvSpec(made_id, gymnasium.spaces.Box(0, 1, (3, 3, 2), np.bool_),
                            gymnasium.spaces.Discrete(9), int(made.max_steps), made,
                            symmetries=envs.board_symmetries(3, 3, planes, names))

    envs.register("TicTacToeSymmetric-v0", make_spec)
    assert [s.name for s in envs.spec("TicTacToeSymmetric-v0").symmetries] == list(names)
    config = AlphaZeroConfig(num_envs=4, num_steps=9, num_simulations=2, eval_simulations=2,
                             buffer_size=64, batch_size=8, hidden=(8,), augment=True)
    rows = train(RunSpec.make("TicTacToeSymmetric-v0", "alphazero", config, steps=36),
                 tmp_path, progress=False)
    assert rows[-1]["env_steps"] == 36 and np.isfinite(rows[-1]["loss"])
    envs.register("TicTacToeMisdeclared-v0",
                  lambda made_id, kwargs: make_spec(made_id, kwargs, planes=3))
    with pytest.raises(ValueError, match=r"TicTacToeMisdeclared-v0.*symmetry 'flip_lr': its "
                                         r"observation is no permutation of range\(18\)"):
        envs.spec("TicTacToeMisdeclared-v0")
