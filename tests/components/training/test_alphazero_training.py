"""AlphaZero end to end, kept tiny: `metagraph train ConnectFour-v0 --algo alphazero` in a
fresh process writes its run (checkpoint, metrics, curve, graph), resumes, and its trained
agent plays by search (`game_player`) against OpenSpiel's random bot; bad config values are
refused naming the field. Its pure parts against references: the value targets
(`game_outcomes`) against a loop over the games, the loss (`policy_value_loss`) against NumPy."""

from __future__ import annotations

import dataclasses
import json
from unittest import mock

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from command_line import metagraph, refusal

from components.agents.alphazero_agent import AlphaZeroAgent
from components.agents.alphazero_config import AlphaZeroConfig
from components.losses import game_outcomes, policy_value_loss

pytest.importorskip("mctx")

TINY = ["--set", "num_envs=8", "--set", "num_steps=8", "--set", "num_simulations=4",
        "--set", "eval_simulations=8", "--set", "buffer_size=256", "--set", "batch_size=16",
        "--set", "updates_per_iteration=2", "--set", "hidden=[16]", "--set", "explore=0.2"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A run of two iterations from the command line."""
    out = tmp_path_factory.mktemp("alphazero") / "run"
    metagraph(out.parent, "train", "ConnectFour-v0", "--algo", "alphazero", "--out", str(out),
              "--steps", "128", "--seed", "1", *TINY)
    return out


def rows(out) -> list[dict]:
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_the_command_line_trains_a_run_directory(run):
    for name in ("checkpoint.npz", "config.json", "metrics.jsonl", "curve.png", "graph.html"):
        assert (run / name).is_file(), name
    metrics = rows(run)
    assert len(metrics) == 2 and metrics[-1]["env_steps"] == 128
    assert all(np.isfinite(m["loss"]) for m in metrics)
    # positions are learnt from once their game has ended (the first iteration's 8 moves
    # may end none: nothing to learn then)
    assert metrics[-1]["episodes"] > 0 and metrics[-1]["policy_loss"] > 0
    assert json.loads((run / "config.json").read_text())["algo"] == "alphazero"


def test_resume_continues_the_run(run):
    metagraph(run.parent, "train", "ConnectFour-v0", "--out", str(run), "--steps", "192",
              "--resume")
    metrics = rows(run)
    assert len(metrics) == 3 and metrics[-1]["env_steps"] == 192


def test_the_trained_agent_plays_by_search_against_random(run):
    from components.training.games.game_evaluation import evaluate_games

    result = evaluate_games(run, "random", games=4)  # every move checked legal by the game
    assert result["games"] == 4 and result["wins"] + result["draws"] + result["losses"] == 4


def test_evaluate_and_load_take_acting_overrides(run, capsys):
    """`metagraph evaluate RUN --set eval_simulations=N` searches N simulations a move (the
    run's config.json unchanged); a setting that is not one of how it acts is refused naming
    the run, and so are absurd opponents, seeds, game counts and a video of a game."""
    from components.training import cli, load

    assert load(run, overrides={"eval_simulations": 3}).config.eval_simulations == 3
    # the playouts' weight when playing reaches the player's search
    from components.training.algorithms import AlphaZero

    played = load(run, overrides={"eval_rollout_weight": 0.25})
    assert played.config.eval_rollout_weight == 0.25
    searches = []
    original = dataclasses.replace

    def recording(obj, **changes):
        searches.append(changes)
        return original(obj, **changes)

    with mock.patch("dataclasses.replace", recording):
        AlphaZero().game_player(played)
        assert searches[-1]["rollout_weight"] == 0.25
        AlphaZero().game_player(load(run))  # Connect Four's own: 0, no playouts
        assert searches[-1]["rollout_weight"] == 0.0
        AlphaZero().game_player(load(run, overrides={"eval_rollout_weight": None}))
        search, config = searches[-1], load(run).config
        assert search["rollout_weight"] == config.rollout_weight  # None: self-play's weight
        # the root's considered moves (None: self-play's) and the prior's temperature too
        assert search["max_num_considered_actions"] == config.max_considered_actions
        assert search["prior_temperature"] == 1.0
        AlphaZero().game_player(load(run, overrides={"eval_max_considered_actions": 7,
                                                     "eval_prior_temperature": 4.0}))
        assert (searches[-1]["max_num_considered_actions"],
                searches[-1]["prior_temperature"]) == (7, 4.0)
    with pytest.raises(ValueError, match="AlphaZeroConfig.eval_rollout_weight"):
        load(run, overrides={"eval_rollout_weight": 1.5})
    with pytest.raises(ValueError, match="AlphaZeroConfig.eval_prior_temperature"):
        load(run, overrides={"eval_prior_temperature": 0.0})
    with pytest.raises(ValueError, match="AlphaZeroConfig.eval_max_considered_actions"):
        load(run, overrides={"eval_max_considered_actions": 1})
    capsys.readouterr()
    cli.main(["evaluate", str(run), "--opponent", "random", "--games", "2", "--json",
              "--set", "eval_simulations=3"])
    assert json.loads(capsys.readouterr().out)["games"] == 2
    assert json.loads((run / "config.json").read_text())["config"]["eval_simulations"] == 8
    for setting in ("hidden=[32]", "simulations=3", "gamma=0.5", "activation=relu"):
        message = refusal(capsys, ["evaluate", str(run), "--set", setting])
        assert str(run) in message and f"--set {setting.split('=')[0]}: not a setting of " \
            f"how alphazero acts (those: eval_simulations, eval_rollouts, " \
            f"eval_rollout_weight, eval_max_considered_actions, eval_prior_temperature)" \
            in message, message
    for command in (["--opponent", "mcts:2147483647"], ["--opponent", "mcts: 5"],
                    ["--seed", "4294967296"], ["--seed", "-1"], ["--games", "1000000000"],
                    ["--set", "eval_simulations=100000000"], ["--set", "eval_rollouts=1e9"],
                    ["--video", "x.mp4"]):
        message = refusal(capsys, ["evaluate", str(run), *command])
        assert command[0] in message, message


def test_greedy_picks_legal_moves_without_search(run):
    """`predict` (the graph's `greedy`: the network's argmax over the legal moves) on the
    games' agent observations, with full columns."""
    from components.envs.games.self_play import SelfPlay
    from components.training import load
    from components.training.game_player import game_observation

    games = SelfPlay("ConnectFour-v0", num_threads=1)
    state = games.init(jax.random.PRNGKey(0), 8)
    step = jax.jit(games.step)
    for column in (0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1):  # columns 0 and 1 full
        state = step(state, jnp.full(8, column, jnp.int32))
    moves = load(run).predict(game_observation(state))
    assert moves.shape == (8,) and (moves >= 2).all()


@pytest.mark.parametrize("setting, field", [
    ("num_simulations=0", "num_simulations"), ("torso=cnn", "torso"),
    ("door=host", "door"), ("buffer_size=8", "buffer_size"),
    ("max_considered_actions=1", "max_considered_actions"), ("l2=-1", "l2"),
    ("explore=1.5", "explore"),
])
def test_bad_config_values_are_refused_naming_the_field(tmp_path, capsys, setting, field):
    message = refusal(capsys, ["train", "ConnectFour-v0", "--algo", "alphazero", "--out",
                               str(tmp_path / "run"), "--set", setting])
    assert f"AlphaZeroConfig.{field}" in message


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["Othello-v0", "Hex-v0", "connect_four"])
def test_one_iteration_of_every_game(env_id):
    """Othello (a pass is a move), Hex (121 moves) and an OpenSpiel name: one iteration of
    70 moves in 4 games, every searched move legal (the door would fail the call)."""
    from components.training.algorithms import AlphaZero
    from components.training.run.executors import lower

    config = AlphaZeroConfig(num_envs=4, num_steps=70, num_simulations=4, buffer_size=512,
                             batch_size=16, updates_per_iteration=1, hidden=(16,))
    algorithm = AlphaZero()
    exe = lower(algorithm.build(env_id, config, 1000, 1), "xla", seed=0)
    algorithm.start(exe, jax.random.PRNGKey(0))
    [row] = algorithm.run(exe, config, jax.random.PRNGKey(1), 1)
    assert row.steps == 280 and np.isfinite(row.extra["loss"])


def test_each_game_ships_its_playouts():
    """`metagraph train GAME --algo alphazero` starts from configs/alphazero.toml: each
    game's playouts, under the user's --set; Hex's self-play searches without them, and its
    playing search takes its values from the playouts alone, considers every move and reads
    the network's prior at temperature 16."""
    from components.training.algorithms import AlphaZero

    c4 = AlphaZero().config("ConnectFour-v0", {"eval_rollouts": 2})
    assert (c4.rollouts, c4.eval_rollouts, c4.rollout_weight) == (4, 2, 0.75)
    # played by the network's search alone, 800 simulations: 96.0% against 88.0%
    assert (c4.eval_simulations, c4.eval_rollout_weight) == (800, 0.0)
    assert AlphaZero().config("ConnectFour-v0", {}).eval_rollouts == 0
    assert c4.num_simulations == 16  # twice the moves of 32 in the same time: 93% against 82%
    assert c4.search_value == 0.5  # the search's value in the target: 91% against 82.3%
    assert c4.anneal_lr  # the last network steadier: 98.0% at the seed that gave 86.7%
    othello = AlphaZero().config("Othello-v0", {})
    assert (othello.num_steps, othello.rollouts, othello.rollout_weight) == (64, 0, 0.0)
    assert (othello.eval_rollouts, othello.eval_rollout_weight) == (16, 0.5)  # 89% vs 83%
    assert othello.search_value == 0.0  # 0.5 made Othello's network alone worse
    assert othello.hidden == (256, 256) and othello.augment  # the network alone 62.0%
    assert not c4.augment  # untried at Connect Four
    hex_ = AlphaZero().config("Hex-v0", {"num_envs": 8})
    # the network alone 36/100 against MCTS-100 where 128 simulations of 8 playouts gave 5
    assert (hex_.num_envs, hex_.num_simulations, hex_.rollouts, hex_.rollout_weight) == \
        (8, 32, 0, 0.0)
    assert (hex_.max_considered_actions, hex_.anneal_lr) == (16, False)  # annealed: 19/100
    # played with playouts over a flattened prior: 40/40 against MCTS-1000 (at 1: 7/20)
    assert (hex_.eval_simulations, hex_.eval_rollouts, hex_.eval_rollout_weight) == \
        (400, 16, 1.0)
    assert (hex_.eval_max_considered_actions, hex_.eval_prior_temperature) == (121, 16.0)


def test_alphazero_plays_only_games():
    with pytest.raises(ValueError, match="not a game"):
        AlphaZeroAgent("CartPole-v1", AlphaZeroConfig())


def test_game_outcomes_are_each_movers_result():
    rng = np.random.default_rng(0)
    terminated = rng.random((40, 5)) < 0.15
    rewards = np.where(terminated, rng.choice([-1.0, 0.0, 1.0], (40, 5)), 0.0)
    alternating = jnp.zeros(terminated.shape, bool)  # no player moves twice in a row
    outcome, complete = game_outcomes(jnp.asarray(rewards, jnp.float32), jnp.asarray(terminated),
                                      alternating)
    with pytest.warns(DeprecationWarning, match="game_outcomes without moves_again"):
        old = game_outcomes(jnp.asarray(rewards, jnp.float32), jnp.asarray(terminated))
    np.testing.assert_array_equal(old[0], outcome)  # the old spelling: alternation
    for game in range(5):  # the reference: walk each column's games forwards
        start = 0
        for t in np.flatnonzero(terminated[:, game]):
            for s in range(start, t + 1):  # the mover at s is the last mover's iff t - s even
                expected = rewards[t, game] * (1 if (t - s) % 2 == 0 else -1)
                assert outcome[s, game] == expected and complete[s, game]
            start = t + 1
        assert not np.asarray(complete[start:, game]).any()


def test_game_outcomes_survive_jax2onnx_replacing_jnp_cumsum():
    """jax2onnx, imported by an ONNX export, replaces `jnp.cumsum` process-wide with a wrapper
    that refuses a positional axis: AlphaZero's targets must not go through it (in a fresh
    process: the replacement is for good)."""
    import subprocess
    import sys

    pytest.importorskip("jax2onnx")
    program = (
        "import jax.numpy as jnp, numpy as np\n"
        "import jax2onnx.plugins.jax.numpy.cumsum\n"
        "from components.losses import game_outcomes\n"
        "ended = jnp.asarray([[0.0], [1.0], [0.0]])\n"
        "outcome, complete = game_outcomes(ended * 1.0, ended > 0, ended < 0)\n"
        "assert np.asarray(complete)[:, 0].tolist() == [True, True, False], complete\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_policy_value_loss_against_numpy():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(6, 4)).astype(np.float32)
    target = rng.dirichlet(np.ones(4), 6).astype(np.float32)
    target[0, 2] = 0.0  # an illegal action's weight
    target[0] /= target[0].sum()
    value, z = rng.uniform(-1, 1, 6).astype(np.float32), rng.choice([-1.0, 0.0, 1.0], 6)
    weight = np.array([1, 0, 1, 1, 0, 1], np.float32)
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    ce = -(target * log_p).sum(-1)
    policy, value_error = jax.jit(policy_value_loss)(logits, value, target,
                                                     z.astype(np.float32), weight)
    np.testing.assert_allclose(policy, (weight * ce).sum() / weight.sum(), rtol=1e-5)
    np.testing.assert_allclose(value_error, (weight * (value - z) ** 2).sum() / weight.sum(),
                               rtol=1e-5)


def test_search_value_learns_every_position_from_the_search_where_its_game_goes_on():
    """`search_value = w`: the value target mixes the search's root value into the outcome,
    and a position whose game has not ended within the iteration is learnt too (weight 1, its
    target the search's value); with 0 (AlphaZero's) such a position has weight 0."""
    from components.training.algorithms import AlphaZero
    from components.training.run.executors import lower

    replays = {}
    for share in (0.0, 1.0):
        config = AlphaZeroConfig(num_envs=4, num_steps=6, num_simulations=4, buffer_size=64,
                                 batch_size=8, updates_per_iteration=1, hidden=(16,),
                                 search_value=share)
        algorithm = AlphaZero()
        graph = algorithm.build("ConnectFour-v0", config, 1000, 1)
        exe = lower(graph, "xla", seed=0)
        algorithm.start(exe, jax.random.PRNGKey(0))
        algorithm.run(exe, config, jax.random.PRNGKey(1), 1)
        storage = exe.state[graph.scope_of(graph.root.replay)]["storage"]
        replays[share] = {name: np.asarray(storage[name])[:24] for name in ("value", "weight")}
    # six moves of Connect Four end no game: nothing to learn from the outcome alone
    assert (replays[0.0]["weight"] == 0).all() and (replays[0.0]["value"] == 0).all()
    searched = replays[1.0]["value"]
    assert (replays[1.0]["weight"] == 1).all()
    assert (np.abs(searched) <= 1).all() and (searched != 0).any()
