"""A complete two-player game from outside the package (issue 33, part 6):
examples/games/breakthrough (Breakthrough 6x6 in one header and a short Python file) follows
OpenSpiel's `breakthrough(rows=6,columns=6)` move by move, passes the engine's conformance
check, and docs/your-own-game.md runs as written: its commands train the game with AlphaZero
and path reweighting, evaluate the runs against OpenSpiel's MCTS on OpenSpiel's game (which
checks every move), and `play` shows OpenSpiel's board and move names."""

import dataclasses
import json
import re
import shlex
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

import components.envs as envs
from components.envs.games.self_play import SelfPlay

pyspiel = pytest.importorskip("pyspiel")
pytest.importorskip("mctx")

from test_games_playout import assert_like_openspiels_random_games  # noqa: E402
from test_games_vs_openspiel import play_beside_openspiel  # noqa: E402
from user_tasks import assert_forged_positions_refused  # noqa: E402

ROOT = Path(__file__).resolve().parents[4]
GAME = ROOT / "examples" / "games" / "breakthrough"
PAGE = ROOT / "docs" / "your-own-game.md"
ENV_ID = "Breakthrough6x6-v0"


@pytest.fixture(scope="module")
def game():
    sys.path.insert(0, str(GAME))
    try:
        import breakthrough_env  # noqa: F401  (builds and registers Breakthrough6x6-v0)
    finally:
        sys.path.remove(str(GAME))
    return ENV_ID


def test_self_play_follows_openspiels_breakthrough_move_by_move(game):
    assert envs.num_players(game) == 2
    assert envs.openspiel_name(game) == "breakthrough(rows=6,columns=6)"

    def same_planes(ours, state, player):
        planes = np.asarray(state.observation_tensor(player)).reshape(3, 6, 6)  # b, w, empty
        np.testing.assert_array_equal(ours[..., 0], planes[player])
        np.testing.assert_array_equal(ours[..., 1], planes[1 - player])
        assert (ours[..., 2] == player).all()

    ended, moves = play_beside_openspiel(game, envs.openspiel_name(game), 16, 200, same_planes)
    assert ended > 2 * 16 and (moves % 2).sum() > 100  # captures among the moves


def test_random_playouts_are_openspiels_random_games(game):
    """The header's own `random_legal` (a search's playouts): from the first position, the
    mean length of native random games and player 0's win rate agree with OpenSpiel's."""
    games = SelfPlay(game, num_threads=1)
    returns, length = (np.asarray(x) for x in jax.jit(games.playout)(
        games.init(jax.random.PRNGKey(0), 4096), jax.random.PRNGKey(1)))
    np.testing.assert_array_equal(returns[:, 0], -returns[:, 1])  # no draws: one side wins
    assert set(np.unique(returns[:, 0])) == {-1.0, 1.0}
    assert_like_openspiels_random_games(envs.openspiel_name(game), returns, length)


def test_breakthrough_passes_the_engines_conformance_check(game):
    envs.check(game)


def test_a_forged_position_is_refused_saying_why(game):
    """A position no game reaches has no legal move, and the step refuses it in the task's
    words (`invalid_reason`); nothing moves."""
    assert_forged_positions_refused(game, [
        ({0: -1, 30: 0}, "has a piece on its far row"),
        ({30: 0}, "gives player 0 13 pieces"),
        ({36: 2}, "has a player to move that is not 0 or 1"),
        ({5: 0.5}, "has a cell that is not -1, 0 or 1")], action=74)


def test_a_users_game_takes_the_games_shipped_defaults(game):
    """The agents' shipped defaults for games (`[groups.games]` of their TOML) reach a game
    the library does not know, as they reach Connect Four: its task declares the game."""
    from components.agents.alphazero_config import AlphaZeroConfig
    from components.agents.ppo_config import PPOConfig
    from components.agents.reweight_config import ReweightConfig

    for config in (ReweightConfig, PPOConfig, AlphaZeroConfig):
        ours, theirs = config.for_env(game), config.for_env("ConnectFour-v0")
        if config is ReweightConfig:  # Connect Four's own: its search-improved paths
            theirs = dataclasses.replace(theirs, search_simulations=0)
        if config is AlphaZeroConfig:  # Connect Four's own: the search's value in the target,
            # played by the network's search alone, its rate annealed
            theirs = dataclasses.replace(theirs, search_value=0.0, eval_simulations=200,
                                         eval_rollouts=16, eval_rollout_weight=None,
                                         anneal_lr=False)
        assert ours == dataclasses.replace(theirs, env_kwargs={}), config.__name__
        assert ours != config.for_env("CartPole-v1")
    assert ReweightConfig.for_env(game).num_envs == 256
    assert ReweightConfig.for_env(game, {"num_envs": 512}).num_envs == 512  # the user's first
    recipe = AlphaZeroConfig.for_env(game)  # the games recipe, not AlphaZero's plain defaults
    assert (recipe.num_simulations, recipe.rollouts, recipe.eval_simulations) == (16, 4, 200)
    assert AlphaZeroConfig() != recipe


@pytest.mark.parametrize("name", ["", 5, b"breakthrough"])
def test_an_openspiel_name_that_is_no_name_is_refused(game, name):
    with pytest.raises(ValueError, match="register\\('Mine-v0'\\): openspiel must be the name "
                                         "of a game as pyspiel.load_game takes it"):
        envs.register("Mine-v0", lambda env_id, kwargs: None, openspiel=name)
    assert "Mine-v0" not in envs.env_ids()


def walked(page: str, capsys) -> list[str]:
    """Run the page as written in `workdir`: its Python blocks in this process, the
    `metagraph ...` lines of its bash blocks through the command line's `main`; the outputs
    of the commands, in order."""
    from components.training.cli import main

    outputs = []
    for kind, block in re.findall(r"```(python|bash)\n(.*?)```", page, re.S):
        if kind == "python":
            exec(compile(block, str(PAGE), "exec"), {"__name__": "your_own_game"})
            continue
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line)
            if words and words[0] == "metagraph":
                capsys.readouterr()
                main(words[1:])
                outputs.append(capsys.readouterr().out)
    return outputs


def test_your_own_game_page_runs_as_written(game, tmp_path, monkeypatch, capsys):
    """The page's short runs of both algorithms, their evaluations against OpenSpiel's MCTS
    (every move checked against OpenSpiel's rules) and a game played through `play`'s
    notation, which is OpenSpiel's."""
    from components.training import load
    from components.training.games.notation import notation_of
    from components.training.games.play import play_game

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(GAME))
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    outputs = walked(PAGE.read_text(), capsys)
    results = [json.loads(out.strip().splitlines()[-1]) for out in outputs
               if out.lstrip().startswith("{")]
    assert [r["opponent"] for r in results] == ["mcts:100", "mcts:100"]
    for result in results:
        assert result["games"] == 4 and result["wins"] + result["losses"] == 4  # no draws
    for algo in ("alphazero", "reweight"):
        run = tmp_path / "runs" / f"breakthrough-{algo}"
        assert json.loads((run / "config.json").read_text())["env_id"] == ENV_ID
        assert (run / "checkpoint.npz").is_file()

    # a person plays the reweight run: the board and the moves are OpenSpiel's
    agent = load(tmp_path / "runs" / "breakthrough-reweight", trust_code=True)
    reference = pyspiel.load_game("breakthrough(rows=6,columns=6)").new_initial_state()
    shown: list[str] = []

    def read(prompt: str) -> str:
        listed = re.fullmatch(r"your move \((.*)\): ", prompt).group(1).split()
        assert listed == [reference.action_to_string(a) for a in reference.legal_actions()]
        return listed[-1].rstrip("*")  # a capture may be typed without its *

    def write(text: str) -> None:
        shown.append(text)
        if text.startswith("the agent plays "):
            move = text.removeprefix("the agent plays ")
            reference.apply_action(reference.string_to_action(move))
        elif "\n" in text:
            assert text == str(reference).rstrip("\n")

    notation = notation_of(ENV_ID)
    with pytest.raises(ValueError, match="'a1a2' is not a legal move here: type one"):
        notation.parse("a1a2", np.zeros(432, bool))

    original_parse = type(notation).parse

    def parse_and_follow(self, text, legal):
        action = original_parse(self, text, legal)
        reference.apply_action(action)
        return action

    monkeypatch.setattr(type(notation), "parse", parse_and_follow)
    result = play_game(agent, human=0, read=read, write=write)
    assert result in (1.0, -1.0) and reference.is_terminal()
    assert reference.returns()[0] == result
    assert shown[0].startswith(f"{ENV_ID}: you are player 0, moving first")
