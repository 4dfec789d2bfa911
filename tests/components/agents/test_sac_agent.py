"""The SAC agent: its graph (the environment, the replay, one optimizer step per update),
transitions that bootstrap truncations and not terminations (Hopper's health rule, computed
here in NumPy, says which steps terminated), random actions before `learning_starts`, the
Polyak-averaged target critics (against NumPy), deterministic `greedy` (the squashed mean,
re-derived in NumPy from the actor's parameters), swappable parts, config validation, the
`sac` algorithm and its shipped defaults, and a short run through `train` and `evaluate` (the
learning goals are benchmarks: docs/benchmarks.md, SAC)."""

import dataclasses

import jax
import numpy as np
import optax
import pytest
from jax.flatten_util import ravel_pytree

import metagraph as mg
from backends import xla
from components.agents import SACAgent, SACConfig
from components.losses import SACLoss
from components.networks import QEnsemble
from components.policy import Policy
from components.preprocessing import ObservationNormaliser
from components.training import RunSpec, evaluate, train
from components.training.algorithms import SAC
from components.training.registry import resolve
from metagraph.spaces import Box, Discrete, PRNGKey

GAMMA = 0.97
SMALL = SACConfig(hidden=(8,), batch_size=8, buffer_size=512, learning_starts=64, rollout=32,
                  updates_per_iteration=2, iterations_per_call=4, gamma=GAMMA, tau=0.1)


def spaces(agent, eval_envs=2):
    return {"key": PRNGKey(), "iterations": Discrete(agent.config.iterations_per_call + 1),
            "observation": Box((eval_envs, *agent.rollout.env.observation_space.shape))}


def lowered(agent):
    graph = mg.build(agent, spaces(agent), apis=["start", "train", "greedy"])
    exe = xla.lower(graph)
    exe.start(np.asarray(jax.random.PRNGKey(0)))
    return graph, exe


@pytest.fixture(scope="module")
def hopper():
    """A Hopper agent after two iterations (64 steps: random actions, no update yet)."""
    agent = SACAgent("Hopper-v5", SMALL)
    graph, exe = lowered(agent)
    first = exe.train(np.asarray(jax.random.PRNGKey(1)), np.int32(2))
    return agent, graph, exe, first


def test_the_graph_steps_the_environment_and_learns_from_the_replay(hopper):
    _, graph, _, _ = hopper
    edges = graph.nx.edges
    for callee in ("rollout/env.step", "replay.insert", "replay.sample", "optimizer.step",
                   "model/actor.sample_action"):
        assert ("sac_agent.train", f"sac_agent/{callee}") in edges, callee
    assert ("sac_agent/loss.loss", "sac_agent/model.log_alpha") in edges
    assert ("sac_agent.greedy", "sac_agent/model/actor.greedy_action") in edges


@pytest.mark.parametrize("door", ["native", "jax", "host", "gymnasium"])
def test_every_door_is_stepped_from_the_graph(door):
    agent = SACAgent("Pendulum-v1", dataclasses.replace(SMALL, door=door))
    graph = mg.build(agent, spaces(agent), apis=["start", "train"])  # a build, no compile
    edge = graph.nx.edges["sac_agent.train", "sac_agent/rollout/env.step"]
    assert str(edge["args"]["action"]) == "float32[1,1]"
    assert str(edge["returns"]["final_obs"]) == "float32[1,3]"


def test_transitions_bootstrap_truncations_not_terminations(hopper):
    _, _, exe, first = hopper
    assert (first["steps"][:2] == 32).all() and (first["loss"][:2] == 0).all()
    assert exe.get_state("sac_agent/optimizer")["count"] == 0  # still warming up
    stored = exe.get_state("sac_agent/replay")["storage"]
    obs, next_obs, discount = (np.asarray(stored[k][:64]) for k in ("obs", "next_obs",
                                                                    "discount"))
    # Gymnasium's Hopper-v5 health rule on the observation after the step
    z, angle, rest = next_obs[:, 0], next_obs[:, 1], next_obs[:, 1:]
    healthy = (np.abs(rest) < 100).all(-1) & (z > 0.7) & (np.abs(angle) < 0.2)
    assert (~healthy).sum() >= 1  # random actions topple Hopper within 64 steps
    np.testing.assert_array_equal(discount, np.where(healthy, np.float32(GAMMA), 0.0))
    # the next observation is the following step's unless the episode ended (auto-reset)
    continues = np.all(next_obs[:-1] == obs[1:], -1)
    np.testing.assert_array_equal(continues, healthy[:-1])


def test_updates_after_learning_starts_and_polyak_targets(hopper):
    _, _, exe, _ = hopper
    actions = exe.get_state("sac_agent/replay")["storage"]["action"][:64]
    assert (np.abs(actions) <= 1).all() and np.abs(actions).max() > 0.5  # uniform in [-1, 1]
    state = exe.get_state("sac_agent")
    exe.set_state({**state, "target_params": jax.tree.map(np.zeros_like,
                                                          state["target_params"])}, "sac_agent")
    out = exe.train(np.asarray(jax.random.PRNGKey(2)), np.int32(1))
    assert exe.get_state("sac_agent/optimizer")["count"] == SMALL.updates_per_iteration
    assert np.isfinite(out["loss"][0]) and out["loss"][0] != 0 and 0 < out["alpha"][0] < 1
    online = ravel_pytree(exe.get_states("sac_agent/model/critic"))[0]
    target = ravel_pytree(exe.get_state("sac_agent")["target_params"])[0]
    # two Polyak steps from zero targets: tau o2 + (1 - tau) tau o1, and o1 is o2 up to one
    # Adam step (~3e-4 a parameter, weighted by (1 - tau) tau here)
    tau = SMALL.tau
    np.testing.assert_allclose(target, (tau + (1 - tau) * tau) * online, atol=1e-4)
    assert np.abs(online).max() > 0.1


def test_greedy_is_the_squashed_mean(hopper):
    _, _, exe, _ = hopper
    obs = np.random.default_rng(0).normal(size=(2, 11)).astype(np.float32)
    torso = exe.get_state("sac_agent/model/actor/torso")["params"]["mlp/~/linear_0"]
    head = exe.get_state("sac_agent/model/actor/action_head")["params"]["mlp/~/linear_0"]
    hidden = np.maximum(obs @ torso["w"] + torso["b"], 0.0)
    mean = (hidden @ head["w"] + head["b"])[:, :3]
    greedy = exe.greedy(obs)
    np.testing.assert_allclose(greedy, np.tanh(mean), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(exe.greedy(obs), greedy)  # deterministic


def test_parts_can_be_swapped():
    """A three-critic ensemble, a fixed temperature, plain SGD and an observation normaliser,
    all given as keyword arguments."""
    config = dataclasses.replace(SMALL, learning_starts=0, alpha_init=0.3)
    agent = SACAgent("Pendulum-v1", config, actor=Policy(
        Box((1,), low=-2.0, high=2.0), hidden=(4,), value=None),
        critic=QEnsemble((8,), critics=3), preprocessor=ObservationNormaliser(),
        loss=lambda model: SACLoss(model, target_entropy=-1.0, autotune=False),
        optimizer=optax.sgd(1e-3))
    graph, exe = lowered(agent)
    assert graph.nx.nodes["sac_agent/model/critic"]["cls"] == "QEnsemble"
    assert ("sac_agent.train", "sac_agent/preprocessor.update") in graph.nx.edges
    critic = exe.get_states("sac_agent/model/critic")
    assert critic["sac_agent/model/critic"]["params"]["q_2/~/linear_1"]["w"].shape == (8, 1)
    out = exe.train(np.asarray(jax.random.PRNGKey(1)), np.int32(2))
    # not tuned: with SGD any gradient would move it, so the critic and actor terms of
    # SACLoss do not reach log alpha
    np.testing.assert_allclose(out["alpha"][:2], 0.3, rtol=1e-6)
    assert exe.get_state("sac_agent/model")["log_alpha"] == pytest.approx(np.log(0.3))
    assert exe.get_state("sac_agent/preprocessor")["count"] == pytest.approx(64, abs=1e-3)
    assert exe.greedy(np.zeros((2, 3), np.float32)).shape == (2, 1)


def test_an_algorithm_gives_the_agent_its_parts_through_agent():
    class ThreeCritics(SAC):
        def agent(self, env_id, config, total_steps):
            return SACAgent(env_id, config, total_steps, critic=QEnsemble((8,), critics=3))

    graph = ThreeCritics().build("Pendulum-v1", SMALL, 1000, 2)  # a build, no compile
    assert graph.root.model.critic.critics == 3 and set(graph.apis) == {"start", "train",
                                                                        "greedy", "act"}


def test_clear_errors_for_parts_and_environments():
    with pytest.raises(TypeError, match="the loss as a function of it"):
        SACAgent("Pendulum-v1", SMALL, loss=SACLoss(mg.Component(), -1.0))
    with pytest.raises(TypeError, match="optax GradientTransformation"):
        SACAgent("Pendulum-v1", SMALL, optimizer="adam")
    with pytest.raises(ValueError, match="SAC needs a bounded Box action space"):
        SACAgent("CartPole-v1", SMALL)
    with pytest.raises(ValueError, match="QEnsemble: critics must be an int >= 1"):
        QEnsemble((8,), critics=0)


@pytest.mark.parametrize("values, message", [
    ({"tau": 0.0}, r"SACConfig.tau: expected a number in \(0, 1\]"),
    ({"learning_starts": -1}, r"SACConfig.learning_starts: expected an int >= 0"),
    ({"buffer_size": 3, "rollout": 4}, r"SACConfig.buffer_size: expected an int >= num_envs"),
    ({"gamma": 1.5}, r"SACConfig.gamma: expected a number in \[0, 1\]"),
    ({"alpha_init": 0.0}, r"SACConfig.alpha_init: expected a number > 0"),
    ({"autotune": "yes"}, r"SACConfig.autotune: expected true or false"),
    ({"hidden": [256, 0]}, r"SACConfig.hidden: expected positive ints"),
    ({"learning_rate": float("nan")}, r"SACConfig.learning_rate: expected a finite number"),
    ({"updates": 2}, r"SACConfig: unknown keys \['updates'\]"),
])
def test_bad_config_values_are_refused(values, message):
    with pytest.raises(ValueError, match=message):
        SACConfig.from_dict(values)


def test_the_algorithm_and_its_shipped_defaults():
    assert isinstance(resolve("sac"), SAC)
    cheetah = SAC().config("HalfCheetah-v5", {})
    assert (cheetah.learning_starts, cheetah.buffer_size, cheetah.batch_size,
            cheetah.learning_rate, cheetah.hidden, cheetah.tau, cheetah.gamma) == \
        (10_000, 1_000_000, 256, 3e-4, (256, 256), 0.005, 0.99)
    assert SACConfig.for_env("metagraph/Hopper-v5") == SACConfig.for_env("Hopper-v5")
    pendulum = SAC().config("Pendulum-v1", {"batch_size": 64})
    assert (pendulum.learning_rate, pendulum.learning_starts, pendulum.batch_size) == \
        (1e-3, 1000, 64)
    assert SACConfig.for_env("MountainCarContinuous-v0") == SACConfig()
    assert SAC().steps_per_iteration(SMALL) == 32


def test_a_short_run_through_train_and_evaluate(tmp_path):
    """The path of `metagraph train Pendulum-v1 --algo sac` at a tiny budget (learning to the
    goal takes minutes: docs/benchmarks.md, SAC): rows with the temperature, a checkpoint that
    `evaluate` acts greedily from."""
    config = SAC().config("Pendulum-v1", {"hidden": [16], "learning_starts": 100,
                                          "iterations_per_call": 150, "batch_size": 32})
    rows = train(RunSpec.make("Pendulum-v1", "sac", config, steps=300), tmp_path, progress=False)
    assert len(rows) == 300 and all(np.isfinite(row["loss"]) for row in rows)
    assert rows[0]["alpha"] == 0.0 and 0.5 < rows[-1]["alpha"] < 1.0  # tuned once learning
    assert {"entropy", "episode_return_mean"} <= set(rows[-1])
    result = evaluate(tmp_path, episodes=2)
    assert result["episodes"] == 2 and -2000 < result["return_mean"] <= 0
