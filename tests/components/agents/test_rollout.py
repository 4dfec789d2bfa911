"""`Rollout` alone: it steps its environments through their `step` API, continues episodes
across calls, returns a typed `Trajectory`, and counts every finished episode whatever its
return, 0 and negative ones included (the old count, `finished != 0`, lost episodes whose
return was exactly 0). Compared with a plain Python loop over the same environments."""

import jax
import jax.numpy as jnp
import numpy as np

import metagraph as mg
from components.agents import Rollout, Trajectory
from components.envs import StepResult
from metagraph.spaces import Box, PRNGKey
from metagraph.testing import ComponentTest

# environment i's episodes last LENGTHS[i] steps; step t of an episode pays REWARDS[i][t]
LENGTHS = np.array([2, 3, 2, 1])
REWARDS = np.array([[0.0, 0.0, 0.0],     # return 0
                    [-1.0, -1.0, -1.0],  # return -3
                    [1.0, -1.0, 0.0],    # return 0, not 0 on the way
                    [-0.5, 0.0, 0.0]],   # return -0.5, one step
                   np.float32)
N = len(LENGTHS)


class Countdown(mg.Component):
    """N scripted environments (see LENGTHS, REWARDS): the observation is the step count; the
    last step of an episode terminates it (environment 1's is truncated instead)."""

    num_envs = N
    observation_space = Box((1,))

    def _t(self):
        return self.get_state("t", jnp.zeros((N,), jnp.int32))

    @mg.api
    def reset(self, key):
        self._t()
        self.set_state("t", jnp.zeros((N,), jnp.int32))
        return jnp.zeros((N, 1), jnp.float32)

    @mg.api
    def step(self, action):
        t = self._t()
        reward = jnp.asarray(REWARDS)[jnp.arange(N), t]
        done = t + 1 >= jnp.asarray(LENGTHS)
        truncated = done & (jnp.arange(N) == 1)
        following = jnp.where(done, 0, t + 1)
        self.set_state("t", following)
        return StepResult(None, following[:, None].astype(jnp.float32), reward,
                          done & ~truncated, truncated,
                          final_obs=(t + 1)[:, None].astype(jnp.float32))


class Stepper(mg.Component):
    """A root over a rollout: `collect(key)` runs STEPS steps with the action 7 everywhere."""

    def __init__(self, steps):
        super().__init__()
        self.rollout = Rollout(Countdown())
        self.steps = steps

    @mg.api
    def start(self, key):
        return self.rollout.reset(key)

    @mg.api
    def collect(self, key):
        trajectory = self.rollout.run(
            lambda obs, k: (jnp.full((N,), 7, jnp.int32), {"seen": obs * 2.0}), key,
            self.steps)
        return {**trajectory._asdict(), **trajectory.episode_statistics(),
                "done": trajectory.done, "moves_again": trajectory.moves_again}


def reference(steps, calls):
    """A plain loop: per call, the finished episodes' count, return sum and length sum."""
    t, running, stats = np.zeros(N, int), np.zeros(N), []
    for _ in range(calls):
        count, total, length = 0, 0.0, 0
        for _ in range(steps):
            running += REWARDS[np.arange(N), t]
            t += 1
            done = t >= LENGTHS
            count += int(done.sum())
            total += float(running[done].sum())
            length += int(t[done].sum())
            running[done], t[done] = 0.0, 0
        stats.append((count, total, length))
    return stats


def test_every_finished_episode_counts_whatever_its_return():
    test = ComponentTest(Stepper(steps=5), {"key": PRNGKey()})
    key = np.asarray(jax.random.PRNGKey(0))
    test.start(key)
    expected = reference(5, 3)
    for count, total, length in expected:  # episodes continue across calls
        out = test.collect(key)
        assert int(out["episodes"]) == count
        np.testing.assert_allclose(out["episode_return_sum"], total, atol=1e-6)
        assert int(out["episode_length_sum"]) == length
    # in 15 steps environments 0, 1, 2, 3 end 7, 5, 7, 15 episodes; the 14 of environments 0
    # and 2 have return 0, and were the ones `finished != 0` lost
    assert sum(count for count, _, _ in expected) == 7 + 5 + 7 + 15
    assert sum(length for _, _, length in expected) == 7 * 2 + 5 * 3 + 7 * 2 + 15 * 1


def test_the_trajectory_is_typed_and_time_major():
    test = ComponentTest(Stepper(steps=4), {"key": PRNGKey()})
    test.start(np.asarray(jax.random.PRNGKey(0)))
    out = test.collect(np.asarray(jax.random.PRNGKey(1)))
    assert set(Trajectory._fields) <= set(out)
    assert out["observations"].shape == (4, N, 1) and out["rewards"].shape == (4, N)
    assert out["last_observations"].shape == (N, 1)
    np.testing.assert_array_equal(out["actions"], np.full((4, N), 7))
    np.testing.assert_array_equal(out["extras"]["seen"], 2.0 * out["observations"])
    # environment 1 is truncated at its third step, never terminated
    assert out["truncated"][2, 1] and not out["terminated"][:, 1].any()
    np.testing.assert_array_equal(out["done"], out["terminated"] | out["truncated"])
    # the step that ends an episode records its final observation and its return
    np.testing.assert_array_equal(out["final_observations"][1, :, 0], [2, 2, 2, 1])
    np.testing.assert_allclose(out["episode_returns"][:, 1], [0.0, 0.0, -3.0, 0.0])
    np.testing.assert_allclose(out["episode_returns"][:, 3], [-0.5] * 4)
    np.testing.assert_array_equal(out["episode_lengths"][:, 1], [0, 0, 3, 0])


def test_the_one_player_of_a_task_moves_again_until_its_episode_ends():
    """`Trajectory.moves_again` of a task of one player is every step but an episode's last,
    so that the negamax discounts PPO takes for every task (`turn_discounts`) are GAE's own,
    1 - done, to the bit (an agent's advantage needs no switch on "is a game")."""
    from components.losses import gae, turn_discounts

    test = ComponentTest(Stepper(steps=6), {"key": PRNGKey()})
    test.start(np.asarray(jax.random.PRNGKey(0)))
    out = test.collect(np.asarray(jax.random.PRNGKey(1)))
    np.testing.assert_array_equal(out["moves_again"], ~out["done"])
    assert out["done"].any() and (~out["done"]).any()
    signs = np.asarray(turn_discounts(jnp.asarray(out["done"]), jnp.asarray(out["moves_again"])))
    np.testing.assert_array_equal(signs, 1.0 - out["done"].astype(np.float32))
    values = jax.random.normal(jax.random.PRNGKey(2), (7, N))
    plain = gae(out["rewards"], 0.99 * (1.0 - out["done"].astype(np.float32)), values, 0.95)
    turned = gae(out["rewards"], 0.99 * signs, values, 0.95)
    np.testing.assert_array_equal(np.asarray(turned), np.asarray(plain))


def test_the_environment_is_a_node_under_the_rollout():
    graph = mg.build(Stepper(steps=2), {"key": PRNGKey()})
    assert ("stepper.collect", "stepper/rollout/env.step") in graph.nx.edges
    assert ("stepper.start", "stepper/rollout.reset") in graph.nx.edges


class ConnectFourSelfPlay(mg.Component):
    """A root over a `SelfPlayRollout` of `num_games` Connect Four games."""

    def __init__(self, num_games):
        super().__init__()
        from components.agents.self_play_rollout import SelfPlayRollout
        from components.envs import Environment

        self.rollout = SelfPlayRollout(Environment("ConnectFour-v0", num_games))


class SchedulePlayer(ConnectFourSelfPlay):
    """`SelfPlayRollout` over 4 Connect Four games, the learner player
    0 in the even games and 1 in the odd ones, every move the first legal column."""

    def __init__(self):
        super().__init__(4)

    @mg.api
    def play(self, key):
        self.rollout.reset(key)

        def act(obs, step_key, learner_moves):
            first_legal = jnp.argmax(obs["legal"], axis=-1).astype(jnp.int32)
            return first_legal, learner_moves.astype(jnp.int32) * 10

        trajectory = self.rollout.play(act, key, 9, jnp.arange(4) % 2)
        return {"learner": trajectory.learner, "extras": trajectory.extras,
                "actions": trajectory.actions}


def test_self_play_rollout_follows_the_player_schedule():
    """Step t is player t % 2's move from the games' start: `learner` is true at the learner's
    moves (even steps in games where it is player 0, odd ones where player 1), `act` sees the
    same mask, and its own extras come back as the trajectory's."""
    from components.agents.self_play_rollout import SelfPlayRollout
    from components.envs import Environment

    out = ComponentTest(SchedulePlayer(), {"key": PRNGKey()}).play(
        np.asarray(jax.random.PRNGKey(0)))
    t = np.arange(9)[:, None]
    expected = (t % 2) == (np.arange(4) % 2)[None, :]
    np.testing.assert_array_equal(out["learner"], expected)
    np.testing.assert_array_equal(out["extras"], expected * 10)
    np.testing.assert_array_equal(out["actions"][:6], 0)  # the first column fills up first
    try:
        SelfPlayRollout(Environment("CartPole-v1", 2))
    except ValueError as error:
        assert str(error) == ("SelfPlayRollout: CartPole-v1 is no game (its task declares no "
                              "num_players())")
    else:
        raise AssertionError("a task that is no game was taken")


class RandomPlayer(ConnectFourSelfPlay):
    """`SelfPlayRollout` over 8 Connect Four games, random legal moves by every player, the
    learner player 0 in the even games and 1 in the odd ones; `play` continues the games."""

    def __init__(self):
        super().__init__(8)

    @mg.api
    def reset(self, key):
        self.rollout.reset(key)
        return key

    @mg.api
    def play(self, key):
        def act(obs, step_key, learner_moves):
            logits = jnp.where(obs["legal"], 0.0, -jnp.inf)
            return jax.random.categorical(step_key, logits).astype(jnp.int32), learner_moves

        trajectory = self.rollout.play(act, key, 15, jnp.arange(8) % 2)
        return {"learner": trajectory.learner, "seen": trajectory.extras,
                "done": trajectory.done}


def test_self_play_rollout_follows_whose_turn_it_is_across_calls_and_games():
    """Three calls of 15 moves (odd: a call starts with player 1 to move in some games) in which
    games end and restart: the learner's mask is true exactly where the player to move, counted
    from each game's first move (Connect Four alternates, no passes), is the learner's side."""
    player = ComponentTest(RandomPlayer(), {"key": PRNGKey()})
    player.reset(np.asarray(jax.random.PRNGKey(0)))
    calls = [player.play(np.asarray(jax.random.PRNGKey(k))) for k in range(1, 4)]
    learner = np.concatenate([c["learner"] for c in calls])
    done = np.concatenate([c["done"] for c in calls])
    np.testing.assert_array_equal(np.concatenate([c["seen"] for c in calls]), learner)
    assert done.any(axis=0).all() and done[:15].sum() < done.sum()  # games restarted
    moves = np.zeros(8, int)  # moves made in each running game
    side = np.arange(8) % 2
    for t in range(len(learner)):
        np.testing.assert_array_equal(learner[t], moves % 2 == side, err_msg=f"step {t}")
        moves = np.where(done[t], 0, moves + 1)
