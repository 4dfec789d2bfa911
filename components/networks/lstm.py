"""`LSTM`: a haiku LSTM core whose recurrent state (h, c) for `batch_size` rows is component
state, carried from one `step` to the next and cleared per row by `reset(mask)`."""

from __future__ import annotations

import haiku as hk
import jax.numpy as jnp

import metagraph as mg


class LSTM(mg.Component):
    """An LSTM whose recurrent state is component state, one row per environment.

    Args:
        hidden_size: The width of the hidden and cell state.
        batch_size: The number of rows (environments) the state holds.
        name: The scope name.
    """
    def __init__(self, hidden_size: int, batch_size: int, name: str | None = None):
        super().__init__(name)
        self.hidden_size, self.batch_size = hidden_size, batch_size
        self._core = hk.without_apply_rng(hk.transform(
            lambda x, state: hk.LSTM(hidden_size)(x, state)))

    def _zeros(self) -> tuple:
        z = jnp.zeros((self.batch_size, self.hidden_size), jnp.float32)
        return z, z

    @mg.api
    def step(self, x):
        """One step for every row: x [batch_size, d] -> output [batch_size, hidden]."""
        state = self.get_state("recurrent", self._zeros())
        params = self.get_param(
            "params", lambda key: self._core.init(key, x, hk.LSTMState(*self._zeros())))
        output, state = self._core.apply(params, x, hk.LSTMState(*state))
        self.set_state("recurrent", tuple(state))
        return output

    @mg.api
    def reset(self, mask):
        """Zero the recurrent state of rows where `mask` (bool[batch_size]) is set."""
        hidden, cell = self.get_state("recurrent", self._zeros())
        keep = (~mask)[:, None]
        self.set_state("recurrent", (jnp.where(keep, hidden, 0.0), jnp.where(keep, cell, 0.0)))
        return mask
