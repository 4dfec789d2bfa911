"""`HaikuNetwork`: a dm-haiku function as a component. Its parameters are the component's
parameters (one `params` pytree), created at build from the input's shape."""

from __future__ import annotations

from typing import Any

import haiku as hk

import metagraph as mg


class HaikuNetwork(mg.Component):
    """Subclasses define `network(self, x)` with haiku modules inside; `forward(x)` runs it."""

    def network(self, x: Any) -> Any:
        """The haiku function of `x` this component wraps (subclasses define it)."""
        raise NotImplementedError

    @property
    def transformed(self) -> hk.Transformed:
        """`network` under `hk.transform` without an apply key, made once."""
        if "_mg_transformed" not in self.__dict__:
            self.__dict__["_mg_transformed"] = hk.without_apply_rng(hk.transform(self.network))
        return self.__dict__["_mg_transformed"]

    @mg.api(polymorphic=True)
    def forward(self, x):
        """The network applied to `x` with this component's parameters (created from `x` on
        the first build)."""
        return self.transformed.apply(self.current_params(x), x)

    def forward_with(self, params: Any, x: Any) -> Any:
        """The network with other parameters of the same structure (a target network's). A
        plain method, not an API, so a network alone still builds from `x` only."""
        return self.transformed.apply(params, x)

    def current_params(self, x: Any) -> Any:
        """This network's parameters (created from `x`'s shape if they do not exist yet)."""
        return self.get_param("params", lambda key: self.transformed.init(key, x))
