"""The IMPALA learner of a distributed run: one V-trace update per sampled batch, in the
order batches arrive, each of them maybe a few policy versions old; the new weights are
published after every update and the sampler that delivered the batch is asked for another."""

from __future__ import annotations

from typing import Any

LEARN_INPUTS = ("obs", "action", "reward", "done", "behaviour_log_prob", "last_obs")


class ImpalaLearner:
    def __init__(self, exe: Any, pool: Any, version: int):
        self.exe, self.pool = exe, pool
        self.scope = exe.graph.root.policy.scope
        pool.publish(exe.get_states(self.scope), version)
        for index in range(pool.count):
            for _ in range(pool.depth):
                pool.request(index)

    def step(self, version: int) -> list[dict[str, Any]]:
        """Learn from the next batch; `version` is the number of updates so far."""
        index, result = self.pool.next()
        batch = result["batch"]
        stats = self.exe.learn(*(batch[name] for name in LEARN_INPUTS))
        self.pool.publish(self.exe.get_states(self.scope), version + 1)
        self.pool.request(index)
        episodes = int(batch["episodes"])
        return [{"steps": int(batch["reward"].size),
                 "episode_return_mean": (float(batch["episode_return_sum"]) / episodes
                                         if episodes else None),
                 "episodes": episodes, "loss": float(stats["loss"]),
                 "policy_lag": version - result["version"],
                 "sample_seconds": round(result["sample_seconds"], 5),
                 "samplers_replaced": self.pool.replaced}]
