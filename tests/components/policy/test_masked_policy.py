"""`MaskedPolicy`: its distribution is the policy's renormalised over the legal actions (a
reference in NumPy from the unmasked policy's logits), it never samples nor picks an illegal
action, and its value ignores the mask; over a game's `Environment` it reads the mask by name
(observations {"obs", "legal"}) and plays only legal moves."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import metagraph as mg
from backends import xla
from components.envs import Environment
from components.policy import MaskedPolicy
from metagraph.spaces import Bool, Box, Dict, Discrete, PRNGKey

N, FEATURES, ACTIONS = 64, 5, 4


def observations(seed=0):
    rng = np.random.default_rng(seed)
    mask = rng.random((N, ACTIONS)) < 0.5
    mask[np.arange(N), rng.integers(0, ACTIONS, N)] = True  # at least one legal action
    features = rng.normal(size=(N, FEATURES)).astype(np.float32)
    return {"obs": features, "legal": mask}, mask


class Probe(mg.Component):
    def __init__(self, value="separate"):
        super().__init__()
        self.policy = MaskedPolicy(Discrete(ACTIONS), hidden=(8,), value=value)

    @mg.api
    def probe(self, obs, key):
        action, log_prob = self.policy.sample_action(obs, key)
        return {"params": self.policy.distribution_params(obs), "action": action,
                "log_prob": log_prob, "greedy": self.policy.greedy_action(obs),
                "entropy": self.policy.entropy(obs), "value": self.policy.value(obs),
                "unmasked": self.policy._distribution_params(obs["obs"]),
                "evaluated": self.policy.evaluate(obs, action)}


@pytest.mark.parametrize("value", ["separate", "shared"])
def test_masked_policy_is_the_policy_over_the_legal_actions(value):
    named = Dict(obs=Box((N, FEATURES)), legal=Bool((N, ACTIONS)))
    exe = xla.lower(mg.build(Probe(value), {"obs": named, "key": PRNGKey()}))
    obs, mask = observations()
    out = exe.probe(obs, np.asarray(jax.random.PRNGKey(1)))
    evaluated = {k: np.asarray(v) for k, v in out.pop("evaluated").items()}
    out = {k: np.asarray(v) for k, v in out.items()}
    # evaluate (PPO's loss: one pass of a shared torso) agrees with the APIs one by one
    for key in ("log_prob", "entropy", "value"):
        np.testing.assert_allclose(evaluated[key], out[key], rtol=1e-5, atol=1e-6)
    logits = np.where(mask, out["unmasked"], -np.inf)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(out["log_prob"], np.log(p[np.arange(N), out["action"]]),
                               rtol=1e-5, atol=1e-5)
    entropy = -np.sum(np.where(mask, p * np.log(np.where(mask, p, 1)), 0), 1)
    np.testing.assert_allclose(out["entropy"], entropy, rtol=1e-5, atol=1e-5)
    assert mask[np.arange(N), out["action"]].all()
    np.testing.assert_array_equal(out["greedy"], np.argmax(logits, 1))
    flipped = {"obs": obs["obs"], "legal": np.ones_like(mask)}  # every action legal: the value
    # does not change
    again = exe.probe(flipped, np.asarray(jax.random.PRNGKey(1)))
    np.testing.assert_allclose(np.asarray(again["value"]), out["value"], rtol=1e-6)


class SelfPlayer(mg.Component):
    """A user's composition, from outside the package: the `Environment` component of a game
    (its observations {"obs", "legal"} by name) and a `MaskedPolicy` reading the mask by
    that name, playing `steps` moves of every game in one compiled loop."""

    def __init__(self, env_id, num_envs, steps):
        super().__init__()
        self.env = Environment(env_id, num_envs)
        self.policy = MaskedPolicy(self.env.action_space, hidden=(8,))
        self.steps = steps

    @mg.api
    def play(self, key):
        reset_key, key = jax.random.split(key)
        obs = self.env.reset(reset_key)

        def move(obs, step_key):
            action, _ = self.policy.sample_action(obs, step_key)
            out = self.env.step(action)
            chosen_legal = jnp.take_along_axis(obs["legal"], action[:, None], 1)[:, 0]
            return out.obs, (chosen_legal, out.terminated, out.legal_mask)

        _, played = mg.scan(move, obs, jax.random.split(key, self.steps))
        return played


def test_a_games_observations_carry_the_legal_moves_by_name_and_the_policy_masks_by_them():
    player = SelfPlayer("Othello-v0", 8, 70)  # Othello: most actions illegal, passes too
    assert player.env.observation_space == Dict(obs=Box((8 * 8 * 2,), low=0.0, high=1.0),
                                                 legal=Bool((65,)))
    exe = xla.lower(mg.build(player, {"key": PRNGKey()}))
    chosen_legal, terminated, legal = (np.asarray(x) for x in
                                       exe.play(np.asarray(jax.random.PRNGKey(3))))
    assert chosen_legal.all()  # and the environment refused none (it would have raised)
    assert terminated.sum() >= 1 and legal.shape == (70, 8, 65)
    assert not legal.all(axis=-1).any() and legal.any(axis=-1).all()


def test_observations_without_the_mask_by_name_are_refused_naming_what_is_expected():
    """The mask appended to the features (the form before games observed by name) is a
    TypeError saying what the policy takes, not features sliced by count."""
    with pytest.raises(TypeError, match=r"MaskedPolicy \(.*policy\): observations must be "
                                        r"\{'obs': features, 'legal': bool mask\} .* got "):
        mg.build(Probe(), {"obs": Box((N, FEATURES + ACTIONS)), "key": PRNGKey()})
