"""Self-play on the games through the command line (issue 25, parts 4 and 5): `metagraph
train connect_four --algo reweight|ppo` (OpenSpiel's name of the game) trains a short run
with its checkpoint, curve and graph, resumes, and `metagraph evaluate RUN --opponent random`
plays it against OpenSpiel's random bot; a bad `--opponent` is one line naming the option."""

import json
import re

import jax
import numpy as np
import pytest
from margin_paths import margin_paths

from components.training import load
from components.training.cli import main

pytest.importorskip("pyspiel")

TINY = {
    "reweight": ["--set", "num_envs=8", "--set", "fit_paths=4", "--set", "fit_steps=1",
                 "--set", "hidden=[16]", "--set", "snapshot_every=1", "--set", "pool_size=2",
                 "--steps", "300"],
    "ppo": ["--set", "num_envs=4", "--set", "num_steps=16", "--set", "minibatches=2",
            "--set", "epochs=1", "--set", "hidden=[16]", "--set", "iterations_per_call=2",
            "--steps", "256"],
}


@pytest.fixture(scope="module", params=sorted(TINY))
def run(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param)
    main(["train", "connect_four", "--algo", request.param, "--out", str(out),
          *TINY[request.param]])
    return request.param, out


def test_a_short_self_play_run_writes_what_every_run_does(run):
    algo, out = run
    for name in ("checkpoint.npz", "metrics.jsonl", "curve.png", "config.json"):
        assert (out / name).is_file(), name
    assert json.loads((out / "config.json").read_text())["env_id"] == "ConnectFour-v0"
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert rows and all(np.isfinite(row["loss"]) for row in rows)
    if algo == "reweight":  # D(Q||P) in bits, as the reweight agent reports it
        assert all(0 <= row["bits"] <= np.log2(8) + 1e-6 for row in rows)


def test_evaluate_against_random_through_the_command_line(run, capsys):
    _, out = run
    main(["evaluate", str(out), "--opponent", "random", "--games", "4", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["games"] == 4 and result["opponent"] == "random"
    assert result["wins"] + result["draws"] + result["losses"] == 4
    assert sum(result["as_first"]) == 2


def test_evaluate_seed_reaches_the_match(run, capsys, monkeypatch):
    """`--seed` is the match's seed (a long match splits into processes of different seeds);
    its default stays the library's."""
    import components.training.games.game_evaluation as game_evaluation

    _, out = run
    seeds = []
    real = game_evaluation.play_games
    monkeypatch.setattr(game_evaluation, "play_games",
                        lambda *a, **k: seeds.append(a[4]) or real(*a, **k))
    for extra in (["--seed", "7"], []):
        main(["evaluate", str(out), "--opponent", "random", "--games", "2", "--json", *extra])
        assert json.loads(capsys.readouterr().out)["games"] == 2
    assert seeds == [7, 12345]


def test_a_run_against_another_run_sampling(run, capsys):
    """The round-robin's door: `--opponent run:DIR`, both agents sampling."""
    _, out = run
    main(["evaluate", str(out), "--opponent", f"run:{out}", "--games", "4", "--stochastic",
          "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["opponent"] == f"run:{out}"
    assert result["wins"] + result["draws"] + result["losses"] == 4


def test_the_trained_policy_only_plays_legal_moves(run):
    """The masked policy's greedy and sampled moves are legal in random positions."""
    from components.envs.games.self_play import SelfPlay
    from components.training.game_player import game_observation

    _, out = run
    agent = load(out)
    games = SelfPlay("ConnectFour-v0")
    import jax

    state = games.init(jax.random.PRNGKey(0), 16)
    rng = np.random.default_rng(0)
    for _ in range(12):
        obs = game_observation(state)
        mask = np.asarray(state.legal_action_mask)
        for deterministic in (True, False):
            actions = agent.predict(obs, deterministic)
            assert mask[np.arange(16), actions].all()
        state = games.step(state, np.array([rng.choice(np.flatnonzero(m)) for m in mask]))


def test_predict_takes_a_games_observations_by_name_and_says_so_otherwise(run, tmp_path):
    """A game's agent observes {"obs", "legal"}: one observation or a batch, the planes flat or
    as planes, and so does its export; a flat vector with the mask appended, other names, a
    mask that is not bool or entries of different batches are refused saying what predict
    takes."""
    from components.envs.games.self_play import SelfPlay
    from components.training.game_player import game_observation

    _, out = run
    agent = load(out)
    assert agent.observation_shape == {"obs": (6 * 7 * 2,), "legal": (7,)}
    state = SelfPlay("ConnectFour-v0").init(jax.random.PRNGKey(0), 3)
    obs = game_observation(state)
    batch = agent.predict(obs)
    one = agent.predict({"obs": obs["obs"][0], "legal": obs["legal"][0]})
    as_planes = agent.predict({"obs": np.asarray(state.observation), "legal": obs["legal"]})
    assert batch.shape == (3,) and one.shape == () and int(one) == batch[0]
    np.testing.assert_array_equal(as_planes, batch)
    agent.export(tmp_path / "game.mgx")  # the exported greedy takes them by name too
    from backends import xla

    np.testing.assert_array_equal(np.asarray(xla.load(tmp_path / "game.mgx")(obs)), batch)
    appended = np.concatenate([obs["obs"], obs["legal"].astype(np.float32)], 1)
    for wrong, error, words in [
            (appended, ValueError, "predict takes a game's observations by name, {'obs': "
                                   "planes of shape (84,), 'legal': bool of shape (7,)} (or "
                                   "batches of them), got ndarray"),
            ({"obs": obs["obs"]}, ValueError, "got keys ['obs']"),
            ({"obs": obs["obs"], "legal": obs["legal"].astype(np.float32)}, TypeError,
             "the legal moves as bool, got float32"),
            ({"obs": obs["obs"][:2], "legal": obs["legal"]}, ValueError,
             "(or batches of the same size), got (2, 84) and (3, 7)")]:
        with pytest.raises(error, match=re.escape(words)):
            agent.predict(wrong)


def test_resume_continues_a_self_play_run(run):
    algo, out = run
    before = len((out / "metrics.jsonl").read_text().splitlines())
    steps = int(TINY[algo][-1]) * 2
    main(["train", "connect_four", "--out", str(out), "--resume", "--steps", str(steps)])
    assert len((out / "metrics.jsonl").read_text().splitlines()) > before


@pytest.mark.parametrize("spec,words", [("mcts:0", "--opponent mcts:0"),
                                        ("minimax", "--opponent: unknown opponent")])
def test_bad_opponents_are_one_line_naming_the_option(run, spec, words, capsys):
    _, out = run
    with pytest.raises(SystemExit) as info:
        main(["evaluate", str(out), "--opponent", spec])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_an_opponent_for_a_run_that_is_no_game_is_refused(tmp_path, capsys):
    out = tmp_path / "cartpole"
    main(["train", "CartPole-v1", "--algo", "reweight", "--out", str(out), "--steps", "20",
          "--set", "num_envs=2", "--set", "fit_paths=1", "--set", "fit_steps=1",
          "--set", "hidden=[4]"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["evaluate", str(out), "--opponent", "random"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--opponent: CartPole-v1 is not a game (its task declares no num_players())" in err


def test_evaluation_while_training_a_game_is_refused_with_what_to_do(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", "hex", "--algo", "ppo", "--out", str(tmp_path), "--eval-every", "100",
              *TINY["ppo"]])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--eval-every" in err and "--opponent" in err


# `metagraph play` as a terminal's shell starts it: Ctrl-C raising KeyboardInterrupt, whatever
# this test's own parent does with SIGINT (a job started with `&` by a shell without job
# control ignores it, and so would its children: Python keeps an ignored SIGINT ignored).
PLAY = ("import signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "{before}"
        "from components.training.cli import main\n"
        "main(sys.argv[1:])\n")
# ... and with SIGINT blocked in its main thread and a thread started before that to take it:
# the kernel may hand a Ctrl-C to any thread that does not block it (XLA's among them), and
# Python's handler, run there, only sets a flag for the main thread.
SIGNAL_ELSEWHERE = ("import threading, time\n"
                    "threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\n"
                    "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n")


def play_in_a_terminal(out, signal_elsewhere=False):
    """`metagraph play OUT` in a fresh process on a pseudo-terminal: (process, the
    terminal's leader side to read and type on)."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    code = PLAY.format(before=SIGNAL_ELSEWHERE if signal_elsewhere else "")
    process = subprocess.Popen([sys.executable, "-c", code, "play", str(out)], stdin=follower,
                               stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    return process, leader


def test_a_person_plays_the_trained_agent_in_a_terminal(run):
    """`metagraph play RUN` in a fresh process on a pseudo-terminal: the board and the legal
    moves are shown, a move that is not a column is refused with a message and asked again,
    and the person's legal moves (the first listed) are played until the game's result."""
    import os
    import re
    import time

    _, out = run
    process, leader = play_in_a_terminal(out)
    seen, deadline, typed = "", time.monotonic() + 240, 0

    def read_until(pattern: str) -> re.Match:
        nonlocal seen
        while (found := re.search(pattern, seen)) is None:
            assert time.monotonic() < deadline and process.poll() is None, seen[-2000:]
            seen += os.read(leader, 4096).decode()
        seen = seen[found.end():]
        return found

    try:
        read_until(r"you are x")
        prompt = read_until(r"your move \(([a-g ]+)\): ")
        os.write(leader, b"z\n")
        read_until(r"'z' is not a column: type a letter a-g")
        while True:
            os.write(leader, prompt.group(1).split()[0].encode() + b"\n")
            typed += 1
            prompt = read_until(r"your move \(([a-g ]+)\): |You win\.|The agent wins\.|"
                                r"A draw\.")
            if prompt.group(0).endswith("."):
                break
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
        os.close(leader)
    assert 4 <= typed <= 21  # a game of Connect Four: at least 4 moves of each, at most 21


@pytest.mark.parametrize("how", ["ctrl-c at the prompt", "ctrl-c taken by another thread",
                                 "input ends without a newline"])
def test_a_game_in_the_terminal_stops_when_asked(run, how):
    """Ctrl-C at the prompt ends `metagraph play` at once (exit 130, one line), also when the
    kernel hands the signal to another thread than the one reading the terminal (it hung
    there once in CI: the reading thread never woke), and input that ends in the middle of a
    line ends it too (exit 2, saying so); a seed out of range is refused before anything
    loads."""
    import contextlib
    import os
    import signal
    import time

    algo, out = run
    if algo != "ppo":
        pytest.skip("the terminal is the same for every algorithm: one run is enough")
    process, leader = play_in_a_terminal(out, signal_elsewhere="another thread" in how)
    seen, deadline = "", time.monotonic() + 240
    try:
        while "your move" not in seen:
            assert time.monotonic() < deadline and process.poll() is None, seen[-2000:]
            seen += os.read(leader, 4096).decode()
        if how.startswith("ctrl-c"):
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=20) == 130
        else:
            os.write(leader, b"zz\x04\x04")  # ^D sends "zz" unfinished, ^D ends the input
            assert process.wait(timeout=20) == 2
        time.sleep(0.2)
        with contextlib.suppress(OSError):  # the terminal closed with the process
            seen += os.read(leader, 4096).decode()
    finally:
        process.kill()
        os.close(leader)
    expected = "stopped (Ctrl-C)" if how.startswith("ctrl-c") else \
        "the input ended before the game did"
    assert f"metagraph play: {expected}" in seen and "Traceback" not in seen, seen[-2000:]


@pytest.mark.parametrize("seed", ["-1", str(2**64)])
def test_play_refuses_a_seed_out_of_range(tmp_path, capsys, seed):
    from command_line import refusal

    message = refusal(capsys, ["play", str(tmp_path), "--seed", seed])
    assert "--seed: seed must be an int in [0, 4294967295]" in message


def test_each_game_ranks_its_wins_by_default():
    """configs/reweight.toml: Othello fits the widest wins (`margin`), Hex the quickest
    (`quick_outcome`), Connect Four every win (`return`); Hex leaves its exploration moves
    out of the fit; --set still overrides."""
    from components.agents.reweight_config import ReweightConfig

    assert ReweightConfig.for_env("Othello-v0").quality == "margin"
    assert ReweightConfig.for_env("Hex-v0").quality == "quick_outcome"
    assert ReweightConfig.for_env("ConnectFour-v0").quality == "return"
    assert ReweightConfig.for_env("Hex-v0", {"quality": "return"}).quality == "return"
    assert not ReweightConfig.for_env("Hex-v0").fit_explored
    assert ReweightConfig.for_env("Othello-v0").fit_explored
    # Connect Four's paths are the policy improved by a search; the others the policy's own
    assert ReweightConfig.for_env("ConnectFour-v0").search_simulations == 16
    assert ReweightConfig.for_env("Othello-v0").search_simulations == 0


@pytest.mark.parametrize("fit_explored", [True, False])
def test_the_learner_s_random_moves_are_fitted_only_if_asked(fit_explored):
    """Every move random (explore = 1): the fit's mask is 1 on all of the learner's moves
    with `fit_explored` (the default), on none of them without."""
    import metagraph as mg
    from backends import xla
    from components.agents.reweight_agent import ReweightAgent
    from components.agents.reweight_config import ReweightConfig
    from metagraph.spaces import PRNGKey

    config = ReweightConfig(num_envs=4, fit_paths=2, hidden=(8,), explore=1.0,
                            fit_explored=fit_explored)
    exe = xla.lower(mg.build(ReweightAgent("ConnectFour-v0", config), {"key": PRNGKey()},
                             apis=["sample_paths"]))
    out = exe.sample_paths(np.asarray(jax.random.PRNGKey(0)))
    moves = np.asarray(out["mask"]).sum(1)
    if fit_explored:
        assert (moves >= 3).all()  # a game lasts at least 7 plies: 3 of them the learner's
        assert set(np.asarray(out["return"]).tolist()) <= {-1.0, 0.0, 1.0}
    else:
        assert (moves == 0).all()


def test_margin_ranks_games_by_the_final_disc_margin_as_openspiel_counts_it():
    """Random Othello games (explore = 1) with `quality = "margin"`: each path's q is its
    outcome plus half the learner's final disc margin over 64 (the margin Othello's task
    reports, its extra "margin_player_0"), the games replayed in OpenSpiel's Othello from the
    paths' actions and its discs counted there."""
    for path, q, state, side in margin_paths("Othello-v0", "othello"):
        planes = np.asarray(state.observation_tensor(side)).reshape(3, 64)  # empty, own, theirs
        margin = planes[1].sum() - planes[2].sum()
        outcome = state.returns()[side]
        assert np.sign(margin) == outcome
        expected = 0.0 if outcome == 0 else outcome + 0.5 * margin / 64
        assert q == pytest.approx(expected), path


def test_margin_needs_a_game_that_reports_its_stone_margin():
    from components.agents.reweight_agent import ReweightAgent
    from components.agents.reweight_config import ReweightConfig

    with pytest.raises(ValueError, match="reports as the extra 'margin_player_0' .*"
                                         "ConnectFour-v0 reports \\['player_to_move'"):
        ReweightAgent("ConnectFour-v0", ReweightConfig(quality="margin", hidden=(8,)))


def test_search_improved_paths_win_against_the_policy_they_improve():
    """`search_simulations`: the learner's moves are a search's with the policy as its prior
    and random playouts as its values. An untrained policy's learner wins about half its
    games against itself (and as many against random); searched with 16 simulations of 4
    playouts, most of them. Refusals name the setting."""
    import metagraph as mg
    from backends import xla
    from components.agents.reweight_agent import ReweightAgent
    from components.agents.reweight_config import ReweightConfig
    from metagraph.spaces import PRNGKey

    def outcomes(simulations):
        config = ReweightConfig(num_envs=64, fit_paths=2, hidden=(8,), explore=0.0,
                                search_simulations=simulations)
        exe = xla.lower(mg.build(ReweightAgent("ConnectFour-v0", config), {"key": PRNGKey()},
                                 apis=["sample_paths"]))
        return np.asarray(exe.sample_paths(np.asarray(jax.random.PRNGKey(0)))["return"])

    plain, searched = outcomes(0), outcomes(16)
    assert abs(plain.mean()) < 0.4
    assert searched.mean() > 0.6, searched
    with pytest.raises(ValueError, match="search_simulations searches a game's moves; "
                                         "CartPole-v1 is not a game"):
        ReweightAgent("CartPole-v1", ReweightConfig(search_simulations=4))
    with pytest.raises(ValueError, match=r"ReweightConfig.search_rollouts: expected an int in "
                                         r"\[1, 4096\]"):
        ReweightConfig(search_simulations=4, search_rollouts=0)
    from components.agents.policy_search import PolicySearch

    class NoTorso:
        pass

    with pytest.raises(TypeError, match="policy NoTorso has no torso and action_head networks"):
        PolicySearch("ReweightAgent", "ConnectFour-v0", object.__new__(type(
            "Games", (), {"env_state": lambda self: None})), NoTorso(), 4, 4)
    with pytest.raises(TypeError, match="env object has no env_state"):
        PolicySearch("ReweightAgent", "ConnectFour-v0", object(), NoTorso(), 4, 4)
    agent = ReweightAgent("ConnectFour-v0", ReweightConfig(num_envs=4, fit_paths=2,
                                                           hidden=(8,)))
    with pytest.raises(ValueError, match="search_rollouts must be >= 1, got 0"):
        PolicySearch("ReweightAgent", "ConnectFour-v0", agent.rollout.env, agent.policy, 4, 0)
