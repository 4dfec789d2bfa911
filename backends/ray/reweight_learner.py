"""The path-reweighting learner of a distributed run. Reweighting is on-policy, so each
iteration is synchronous: publish the policy, every sampler returns its share of the N paths
with their qualities, the learner reweights all N together (`select`: bits, effective sample
size, the M paths resampled from Q), then fits them for `fit_steps` steps."""

from __future__ import annotations

from typing import Any

import numpy as np

FIT_INPUTS = ("obs", "action", "mask")


class ReweightLearner:
    def __init__(self, exe: Any, pool: Any, config: Any, key_for: Any):
        self.exe, self.pool, self.config, self.key_for = exe, pool, config, key_for
        self.scope = exe.graph.root.policy.scope

    def step(self, version: int) -> list[dict[str, Any]]:
        self.pool.publish(self.exe.get_states(self.scope), version)
        for index in range(self.pool.count):
            self.pool.request(index)
        results = dict(self.pool.next() for _ in range(self.pool.count))
        shares = [results[index]["batch"] for index in range(self.pool.count)]
        paths = {name: np.concatenate([share[name] for share in shares]) for name in shares[0]}
        selected = self.exe.select(paths["quality"], np.asarray(self.key_for(version)))
        chosen = np.asarray(selected["chosen"])
        fit = [paths[name][chosen] for name in FIT_INPUTS]
        weight = np.full((len(chosen),), 1.0 / len(chosen), np.float32)
        for _ in range(self.config.fit_steps):
            fitted = self.exe.fit(*fit, weight)
        return [{"steps": int(paths["mask"].sum()),
                 "episode_return_mean": float(paths["return"].mean()),
                 "episode_return_max": float(paths["return"].max()),
                 "bits": float(selected["bits"]), "ess": float(selected["ess"]),
                 "loss": float(fitted["loss"]), "samplers_replaced": self.pool.replaced}]
