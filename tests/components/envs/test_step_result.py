"""One typed step record on every functional door (issue 33, part 2): `door.step(state, action,
final_obs=..., extras=..., legal_mask=...)` gives a `StepResult` whose optional fields are None
unless asked for, the same on the native door and the pure-JAX twin, through `jax.jit`,
`lax.scan` and `jax.vmap`; what a door cannot give is refused naming the door."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import components.envs as envs
from components.envs import StepResult

N = 4


@pytest.mark.parametrize("door", ["native", "jax"])
def test_every_door_gives_a_step_result_with_what_was_asked_for(door):
    env = envs.make_functional("CartPole-v1", door=door)
    state, _ = env.reset(jax.random.PRNGKey(0), N)
    action = jnp.ones(N, jnp.int32)
    plain = env.step(state, action)
    assert isinstance(plain, StepResult)
    assert plain.final_obs is None and plain.extras is None and plain.legal_mask is None
    assert plain.obs.shape == (N, 4) and plain.reward.dtype == jnp.float32
    full = jax.jit(lambda s, a: env.step(s, a, final_obs=True, extras=True, legal_mask=True))(
        state, action)
    np.testing.assert_array_equal(full.obs, plain.obs)
    np.testing.assert_array_equal(full.final_obs, plain.obs)  # no episode ended
    assert full.extras == {}  # CartPole reports none
    np.testing.assert_array_equal(full.legal_mask, np.ones((N, 2), bool))  # all legal


def test_a_step_result_passes_through_scan_and_vmap():
    env = envs.make_functional("CartPole-v1")

    def rollout(key):
        state, _ = env.reset(key, N)

        def body(state, _):
            out = env.step(state, jnp.zeros(N, jnp.int32), final_obs=True)
            return out.state, out._replace(state=None)

        return jax.lax.scan(body, state, None, length=30)[1]

    keys = jax.random.split(jax.random.PRNGKey(1), 2)
    steps = jax.jit(jax.vmap(rollout))(keys)
    assert steps.obs.shape == (2, 30, N, 4) and steps.final_obs.shape == (2, 30, N, 4)
    assert steps.extras is None and steps.legal_mask is None
    assert bool(steps.terminated.any())  # pushing left ends episodes within 30 steps
    alone = rollout(keys[1])
    np.testing.assert_array_equal(steps.obs[1], alone.obs)


def test_extras_come_by_name_and_games_by_their_players():
    door = envs.make_functional("connect_four")
    state, _ = door.reset(jax.random.PRNGKey(0), N)
    out = door.step(state, jnp.full(N, 3, jnp.int32), extras=True, legal_mask=True)
    assert set(out.extras) == {"player_to_move", "reward_player_0", "reward_player_1"}
    np.testing.assert_array_equal(out.extras["player_to_move"], np.ones(N))
    np.testing.assert_array_equal(out.legal_mask, np.ones((N, 7), bool))


def test_what_a_door_cannot_give_is_refused():
    pendulum = envs.make_functional("Pendulum-v1")
    state, _ = pendulum.reset(jax.random.PRNGKey(0), N)
    with pytest.raises(TypeError, match="Pendulum-v1: continuous actions have no legal mask"):
        pendulum.step(state, jnp.zeros((N, 1), jnp.float32), legal_mask=True)


def test_the_host_pool_and_the_host_door_give_the_in_graph_record():
    """`VectorEnv.step_result` is the in-graph door's step in NumPy (state None), and the
    host door steps through it, so a game on the host door gives its extras by name and its
    legal masks: every field equal to the native door's along games that end."""
    native = envs.make_functional("connect_four")
    pool = envs.make("connect_four", N, seed=0)
    host = envs.Environment("connect_four", N, door="host").functional
    state, obs = native.reset(jax.random.PRNGKey(0), N)
    pool_obs, _ = pool.reset(seed=0)
    host_state, _ = host.reset(jax.random.PRNGKey(0), N)
    np.testing.assert_array_equal(pool_obs, obs)
    host_step = jax.jit(lambda s, a: host.step(s, a, final_obs=True, extras=True,
                                               legal_mask=True))
    rng, mask, ended = np.random.default_rng(0), np.ones((N, 7), bool), 0
    for _ in range(30):
        action = np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int32)
        ours = native.step(state, jnp.asarray(action), final_obs=True, extras=True,
                           legal_mask=True)
        theirs = pool.step_result(action, final_obs=True, extras=True, legal_mask=True)
        through_door = host_step(host_state, jnp.asarray(action))
        assert theirs.state is None and isinstance(theirs.obs, np.ndarray)
        for got in (theirs, through_door):
            for field in ("obs", "reward", "terminated", "truncated", "final_obs",
                          "legal_mask"):
                np.testing.assert_array_equal(getattr(got, field), getattr(ours, field),
                                              err_msg=field)
            assert set(got.extras) == set(ours.extras)
            for name, value in ours.extras.items():
                np.testing.assert_array_equal(got.extras[name], value, err_msg=name)
        state, host_state, mask = ours.state, through_door.state, np.asarray(ours.legal_mask)
        ended += int(ours.terminated.sum())
    assert ended > 0  # final observations of ended games were compared
    plain = pool.step_result(np.zeros(N, np.int32))
    assert plain.final_obs is None and plain.extras is None and plain.legal_mask is None
    with pytest.raises(TypeError, match="Pendulum-v1: continuous actions have no legal mask"):
        envs.make("Pendulum-v1", 2).step_result(np.zeros((2, 1), np.float32), legal_mask=True)
