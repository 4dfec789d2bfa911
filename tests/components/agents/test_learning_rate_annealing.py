"""`anneal_lr`: the default optimizer's rate falls linearly from the config's to 0 over the
run's updates (optax's `linear_schedule`, the reference), for every agent that has the
setting, AlphaZero's included; without it the rate is the config's constant."""

import numpy as np
import optax
import pytest

from components.agents import DQNConfig, ImpalaConfig, PPOConfig
from components.agents.alphazero_config import AlphaZeroConfig
from components.agents.parts import learning_rate


@pytest.mark.parametrize("config_class", [AlphaZeroConfig, DQNConfig, ImpalaConfig, PPOConfig])
def test_the_rate_falls_linearly_to_zero_over_the_updates_where_annealed(config_class):
    annealed = learning_rate(config_class(learning_rate=3e-3, anneal_lr=True), 40)
    reference = optax.linear_schedule(3e-3, 0.0, 40)
    for step in (0, 1, 20, 39, 40, 100):
        np.testing.assert_allclose(float(annealed(step)), float(reference(step)), rtol=1e-6)
    assert float(annealed(40)) == 0.0
    assert learning_rate(config_class(learning_rate=3e-3, anneal_lr=False), 40) == 3e-3


def test_alphazero_anneals_over_its_runs_updates():
    """The agent's own optimizer: with a constant gradient Adam's step is the rate itself,
    so its steps are the schedule, reaching 0 after the run's 30 updates (320 moves, 32 an
    iteration, 3 updates each)."""
    import jax.numpy as jnp

    from components.agents.alphazero_agent import AlphaZeroAgent

    config = AlphaZeroConfig(num_envs=4, num_steps=8, num_simulations=2, buffer_size=64,
                             batch_size=8, updates_per_iteration=3, hidden=(8,),
                             learning_rate=3e-3, anneal_lr=True)
    transform = AlphaZeroAgent("ConnectFour-v0", config, total_steps=320).optimizer.transform
    params = {"w": jnp.zeros(1)}
    state = transform.init(params)
    steps = []
    for _ in range(32):
        update, state = transform.update({"w": jnp.full(1, 0.5)}, state, params)
        steps.append(-float(update["w"][0]))
    expected = [3e-3 * max(0.0, 1 - t / 30) for t in range(32)]
    np.testing.assert_allclose(steps, expected, rtol=1e-4, atol=1e-9)
