"""Gradients of an API with respect to the parameters of a component (and its sub-components).

Inside an API (an optimizer's, typically):

    loss, aux, grads, params = value_and_grad(self.policy, "loss", batch)

`grads` and `params` are `{scope: {name: array}}` for every trainable variable at or below the
component's scope. The loss API may also write non-trainable state (running statistics); those
writes are kept, as if the API had been called once.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from metagraph import context
from metagraph.component import Component
from metagraph.errors import MetaGraphError, SpaceError
from metagraph.spaces import abstract_of, same_signature, space_of

Tree = dict[str, dict[str, Any]]


def _under(scope: str, root: str) -> bool:
    return scope == root or scope.startswith(root + "/")


def parameters(component: Component) -> Tree:
    """The current trainable variables at or below `component`'s scope."""
    frame = _frame(component, "parameters")
    root = component.scope
    return {scope: {name: value for name, value in variables.items()
                    if frame.trainable.get((scope, name), False)}
            for scope, variables in frame.state.items() if _under(scope, root)
            if any(frame.trainable.get((scope, name), False) for name in variables)}


def value_and_grad(component: Component, api: str, *args: Any, has_aux: bool = False,
                   wrt: Component | None = None, **kwargs: Any) -> tuple[Any, Any, Tree, Tree]:
    """(loss, aux, grads, params) of `component.<api>(*args)`, a scalar loss (or, with
    `has_aux`, a pair (scalar loss, aux)), differentiated with respect to the parameters of
    `wrt` (default: the component itself). aux is None without `has_aux`."""
    frame = _frame(component)
    method = getattr(component, api, None)
    if method is None or not hasattr(method, "__wrapped__"):
        raise MetaGraphError(f"value_and_grad: {component.scope} has no API {api!r}")
    if frame.mode == context.INIT:
        method(*args, **kwargs)  # create the variables the loss reads, from the shapes
    wrt = component if wrt is None else wrt
    params = parameters(wrt)
    if not params:
        raise MetaGraphError(f"value_and_grad: {component.scope}.{api}: {wrt.scope} has no "
                             f"parameters to differentiate")
    before = {scope: dict(variables) for scope, variables in frame.state.items()}

    def loss_fn(p: Tree) -> tuple[Any, tuple[Any, Tree]]:
        for scope, variables in p.items():
            frame.state[scope].update(variables)
        try:
            out = method(*args, **kwargs)
            written = {scope: {name: value for name, value in variables.items()
                               if not frame.trainable.get((scope, name), False)}
                       for scope, variables in frame.state.items()}
        finally:  # leave no tracer of this trace in the frame
            for scope, variables in before.items():
                frame.state[scope] = dict(variables)
        loss, aux = out if has_aux else (out, None)
        if getattr(loss, "shape", None) != ():
            raise SpaceError(f"{component.scope}.{api}: a loss to differentiate must be a "
                             f"scalar, got shape {getattr(loss, 'shape', None)}",
                             component=component.scope, api=api)
        return loss, (aux, written)

    (loss, (aux, written)), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    if frame.mode == context.APPLY:
        for scope, variables in written.items():
            frame.state[scope].update(variables)
    return loss, aux, grads, params


def _frame(component: Component, caller: str = "value_and_grad") -> context.Frame:
    frame = context.current()
    if frame is None:
        raise MetaGraphError(f"{caller}({type(component).__name__}) called outside a graph: "
                             f"use it inside an API")
    return frame


def assign(tree: Tree) -> None:
    """Replace variables `{scope: {name: value}}` (new parameters after an update), keeping
    each variable's shape and dtype."""
    frame = context.current()
    if frame is None:
        raise MetaGraphError("assign called outside a graph: use it inside an API")
    for scope, variables in tree.items():
        for name, value in variables.items():
            old = frame.state[scope][name]
            if not same_signature(abstract_of(old), abstract_of(value)):
                raise SpaceError(f"{scope}: update of {name!r} changes {space_of(old)} to "
                                 f"{space_of(value)}", component=scope, api="assign",
                                 argument=name)
            if frame.mode == context.APPLY:
                frame.state[scope][name] = value


def copy_parameters(source: Component, target: Component, where: Any = True) -> None:
    """Inside an API: `target`'s trainable variables become `source`'s, scope for scope below
    each (a policy's snapshot into an opponent pool, a target network), where `where` (a bool,
    traced or not) holds; otherwise `target` keeps its own. The two must hold the same
    parameters: the same scopes below each, names, shapes and dtypes.

    Raises:
        MetaGraphError: outside an API, or the two components hold different parameters
            (the message names the first difference).
        SpaceError: a parameter of another shape or dtype.
    """
    frame = _frame(source, "copy_parameters")
    mine = {scope[len(source.scope):]: variables
            for scope, variables in parameters(source).items()}
    theirs = {scope[len(target.scope):]: variables
              for scope, variables in parameters(target).items()}
    for below in sorted(set(mine) | set(theirs)):
        names = (set(mine.get(below, {})), set(theirs.get(below, {})))
        if names[0] != names[1]:
            raise MetaGraphError(f"copy_parameters: {source.scope}{below} holds parameters "
                                 f"{sorted(names[0])}, {target.scope}{below} "
                                 f"{sorted(names[1])}: not the same parameters")
        for name in names[0]:
            new, old = mine[below][name], theirs[below][name]
            if not same_signature(abstract_of(new), abstract_of(old)):
                raise SpaceError(f"copy_parameters: {source.scope}{below}'s {name!r} is "
                                 f"{space_of(new)}, {target.scope}{below}'s {space_of(old)}: "
                                 f"not the same parameters", component=target.scope + below,
                                 api="copy_parameters", argument=name)
    if frame.mode == context.INIT:
        return
    assign({target.scope + below: {
        name: value if where is True else jax.tree.map(
            lambda new, old: jnp.where(where, new, old), value, theirs[below][name])
        for name, value in variables.items()} for below, variables in mine.items()})
