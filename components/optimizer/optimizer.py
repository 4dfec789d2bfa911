"""`Optimizer`: any optax `GradientTransformation` applied to the parameters of a component,
minimising one of a target component's APIs (a scalar loss).

    optimizer = Optimizer(model, "loss", optax.adam(3e-4), max_grad_norm=0.5)
    optimizer = Optimizer(ppo_loss, "loss", optax.adam(3e-4), wrt=policy)  # loss elsewhere
    stats = optimizer.step(batch)   # inside an agent's API: one gradient step

The optimizer state (moments, schedule counts) is component state; `steps()` reads the number
of updates applied so far. Learning-rate schedules are optax schedules passed to the
transformation (`optax.adam(optax.linear_schedule(...))`).

With `flat=True` the transformation sees all the parameters as one vector
(`jax.flatten_util.ravel_pytree`): one fused update instead of one per array, which shortens
XLA's compile of a training loop (PPO's by about a fifth) and its kernels per step. Only for
transformations that treat every element alike (sgd, adam, rmsprop, clip_by_global_norm, ...),
not for those that look at each array on its own (masks, LARS/LAMB trust ratios,
multi_transform); the optimizer state is then that of the one vector.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import optax
from jax.flatten_util import ravel_pytree

import metagraph as mg
from metagraph.differentiate import assign, value_and_grad


class Optimizer(mg.Component):
    """An optax transformation minimising a linked target's loss API; `step(...)` is one update.

    Args:
        target: The component whose API `loss_api` is the loss (linked, not owned).
        loss_api: The name of the loss API; it returns the loss, or (loss, aux) with `has_aux`.
        transform: The optax transformation (`optax.adam(3e-4)`, ...).
        max_grad_norm: Clip gradients to this global norm first (None: no clipping).
        has_aux: The loss API returns (loss, aux); `step` returns aux under "aux".
        wrt: The component whose parameters are updated (default: `target`).
        flat: Update the parameters as one flat vector (one fused update instead of one per array).
        name: The scope name.

    Raises:
        TypeError: `target` is not a Component or `transform` not an optax transformation.
        ValueError: `max_grad_norm` is not positive.
    """
    def __init__(self, target: mg.Component, loss_api: str,
                 transform: optax.GradientTransformation, max_grad_norm: float | None = None,
                 has_aux: bool = False, wrt: mg.Component | None = None, flat: bool = False,
                 name: str | None = None):
        super().__init__(name)
        if not isinstance(target, mg.Component):
            raise TypeError(f"Optimizer: target must be a Component, got "
                            f"{type(target).__name__}")
        if not hasattr(transform, "init") or not hasattr(transform, "update"):
            raise TypeError("Optimizer: transform must be an optax GradientTransformation")
        if max_grad_norm is not None and not max_grad_norm > 0:
            raise ValueError(f"Optimizer: max_grad_norm must be > 0, got {max_grad_norm}")
        # target and wrt belong to whoever composed them with this optimizer
        self.link("target", target)
        self.link("wrt", wrt if wrt is not None else target)
        self.loss_api = loss_api
        self.has_aux, self.flat = has_aux, flat
        self.max_grad_norm = max_grad_norm  # (None: unclipped)
        self.transform = (optax.chain(optax.clip_by_global_norm(max_grad_norm), transform)
                          if max_grad_norm is not None else transform)

    @mg.api
    def step(self, *args: Any, **kwargs: Any):
        """One update of the target's parameters against `target.<loss_api>(*args)`; returns
        {"loss", "grad_norm", "step"} (and "aux" when the loss API returns (loss, aux))."""
        loss, aux, grads, params = value_and_grad(self.target, self.loss_api, *args,
                                                  has_aux=self.has_aux, wrt=self.wrt, **kwargs)
        unravel = None
        if self.flat:
            params, unravel = ravel_pytree(params)
            grads = ravel_pytree(grads)[0]
        opt_state = self.get_state("opt_state", lambda key: self.transform.init(params))
        count = self.get_state("count", jnp.zeros((), jnp.int32))
        updates, opt_state = self.transform.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        assign(params if unravel is None else unravel(params))
        self.set_state("opt_state", opt_state)
        self.set_state("count", count + 1)
        out = {"loss": loss, "grad_norm": optax.tree.norm(grads), "step": count + 1}
        if self.has_aux:
            out["aux"] = aux
        return out

    @mg.api
    def steps(self):
        """The number of updates applied so far."""
        return self.get_state("count", jnp.zeros((), jnp.int32))

