"""The contract's optional parts on both native doors, through a test task (tasks/nim.h, Nim:
take 1-3 stones, the last stone wins): the legal-action mask, illegal actions refused like
out-of-range ones with every state intact, and extra step outputs (the player to move, both
players' rewards) equal on the host pool and in-graph, against the rules written here; the
in-graph step that also gives the next masks (`step(..., legal_mask=True)`) steps alike."""


import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from user_tasks import register_task

import components.envs as envs

N = 6


@pytest.fixture(scope="module")
def nim():
    return register_task("Nim-v0", "nim.h", "nim::Nim",
                         gymnasium.spaces.Box(0, 1, (2,), np.float32), 3)


def reference_mask(physics):
    return np.arange(3)[None, :] + 1 <= physics[:, :1]


def test_legal_mask_and_extras_follow_the_rules_on_both_doors(nim):
    pool = envs.make(nim, N, seed=3)
    door = envs.make_functional(nim)
    state, _ = door.reset(jax.random.PRNGKey(3), N)
    rng = np.random.default_rng(0)
    for _ in range(40):
        physics = pool.physical_state()
        mask = pool.legal_mask()
        np.testing.assert_array_equal(mask, reference_mask(physics))
        np.testing.assert_array_equal(np.asarray(door.legal_mask(state)), mask)
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask], np.int32)
        _, reward, terminated, _, info = pool.step(actions)
        # One call giving the next states' masks, with or without the final observations,
        # steps exactly as the step with extras alone does.
        masked = door.step(state, actions, final_obs=True, extras=True, legal_mask=True)
        lean = door.step(state, actions, extras=True, legal_mask=True)
        out = door.step(state, actions, final_obs=True, extras=True)
        assert lean.final_obs is None and out.legal_mask is None
        for name in ("state", "obs", "reward", "terminated", "truncated", "final_obs"):
            np.testing.assert_array_equal(np.asarray(getattr(masked, name)),
                                          np.asarray(getattr(out, name)))
            if name != "final_obs":
                np.testing.assert_array_equal(np.asarray(getattr(lean, name)),
                                              np.asarray(getattr(out, name)))
        np.testing.assert_array_equal(np.asarray(masked.legal_mask), pool.legal_mask())
        np.testing.assert_array_equal(np.asarray(lean.legal_mask), pool.legal_mask())
        names = door.env_spec.extras_names
        assert out.extras.keys() == lean.extras.keys() == set(names)
        extras = np.stack([np.asarray(out.extras[name]) for name in names], axis=1)
        state, reward_graph = out.state, out.reward
        stones = physics[:, 0] - (actions + 1)
        np.testing.assert_array_equal(terminated, stones == 0)
        np.testing.assert_array_equal(reward, (stones == 0).astype(np.float32))
        mover_is_0 = physics[:, 1] == 0
        winner_0 = np.where(stones == 0, np.where(mover_is_0, 1.0, -1.0), 0.0)
        expected = np.stack([1 - physics[:, 1], winner_0, -winner_0], axis=1)
        np.testing.assert_array_equal(np.stack([info[name] for name in names], axis=1), expected)
        assert all(info[f"_{name}"].all() for name in names)
        np.testing.assert_array_equal(np.asarray(extras), expected)
        np.testing.assert_array_equal(np.asarray(reward_graph), reward)


def test_an_illegal_action_is_refused_on_both_doors_with_nothing_moved(nim):
    pool = envs.make(nim, N, seed=0)
    pool.reset(options={"state": np.tile([2.0, 0.0], (N, 1))})
    before = pool.records()
    actions = np.zeros(N, np.int32)
    actions[4] = 2  # three stones of two
    with pytest.raises(ValueError, match=r"^Nim-v0: action 2 at index 4 is not legal in its "
                                         r"state$"):
        pool.step(actions)
    np.testing.assert_array_equal(pool.records(), before)
    door = envs.make_functional(nim)
    state = jnp.asarray(door.state_from_physical(np.tile([2.0, 0.0], (N, 1))))
    with pytest.raises(ValueError, match=r"^Nim-v0: action 2 at index 4 is not legal in its "
                                         r"state$"):
        jax.block_until_ready(door.step(state, jnp.asarray(actions)))


@pytest.mark.parametrize("text", [
    "INVALID_ARGUMENT: Nim-v0: action 2 at index 4 is not legal in its state",
    # JAX 0.11 (a GPU machine's JAX) names the program after the message
    "INVALID_ARGUMENT: Nim-v0: action 2 at index 4 is not legal in its state "
    "[executable_name='jit_ffi_call']",
])
def test_an_eager_refusal_is_the_engines_message_whatever_jax_adds(text):
    from components.envs.engine.functional import engine_refusal

    refusal = engine_refusal(jax.errors.JaxRuntimeError(text))
    assert type(refusal) is ValueError
    assert str(refusal) == "Nim-v0: action 2 at index 4 is not legal in its state"
    other = jax.errors.JaxRuntimeError("INTERNAL: something else")
    assert engine_refusal(other) is other


def test_nim_conforms(nim):
    assert set(envs.check(nim).values()) == {"ok"}
