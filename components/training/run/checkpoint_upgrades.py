"""Run directories written by earlier versions, loaded by today's agents
(`metagraph.checkpoint.load(..., upgrade=older_checkpoint)`): what changed, and how an older
checkpoint is brought to it without changing a value.

- An environment now wrapped (`components.envs.wrappers`: an MLP's observations flattened by
  `FlattenObservation`) keeps its state one scope deeper, under the wrapper's attribute `env`
  (`agent/rollout/env/env` where it was `agent/rollout/env`): moved there.
- PPO's normalisers are now wrappers of its environment (`NormalizeObservation`,
  `NormalizeReward`): their running statistics, kept at `agent/preprocessor` and
  `agent/reward_normaliser`, move to the wrappers' `observation_normaliser` and
  `reward_normaliser` under `agent/rollout/env`. (A rollout's current observations were kept
  as the task gave them and are now kept normalised: a run resumed from such a checkpoint acts
  on one step of observations unnormalised, then as before.)
- Observations now keep the task's shape and dtype (MinAtar's bool planes [10, 10, C], where
  they were float32 vectors [400] of 0.0 and 1.0): a rollout's or a replay's stored
  observations are reshaped, and made bool where every value is 0 or 1.
- A rollout now also counts the length of every running episode (`episode_length`, beside
  `episode_return`): an older checkpoint has none, and its running episodes' lengths are
  counted from 0 (only the first episode a resumed run finishes in each environment reports
  fewer steps than it took).

Anything else that differs is left as it is, for `load` to refuse by name.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from components.envs.wrappers import EPISODE_LENGTH, EPISODE_RETURN

WRAPPED = "/env"  # the attribute under which a wrapper keeps the environment it wraps
# a rollout's running episodes: their returns, and (counted since) their lengths
RUNNING_RETURN, RUNNING_LENGTH = f"['{EPISODE_RETURN}']", f"['{EPISODE_LENGTH}']"
_PATH = re.compile(r"^\['(?P<scope>[^']*)'\](?P<rest>.*)$")
# a normaliser inside the rollout's wrappers, and the scope it had before, beside the policy
_NORMALISER = re.compile(r"^(?P<agent>.*)/rollout(/env)+/"
                         r"(?P<part>observation_normaliser|reward_normaliser)$")
_NORMALISER_THEN = {"observation_normaliser": "preprocessor",
                    "reward_normaliser": "reward_normaliser"}


def older_checkpoint(expected: list[dict[str, Any]], found: list[dict[str, Any]],
                     leaves: list[np.ndarray]) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
    """`found` and its `leaves` brought to `expected` where an earlier version differs (see
    the module docstring); in `expected`'s order, with what matches nothing after it."""
    want = {d["path"]: d for d in expected}
    have = {d["path"]: leaf for d, leaf in zip(found, leaves, strict=True)}
    for path in [p for p in want if p not in have]:
        old = _unwrapped_path(path, have, want) or _normaliser_path(path, have, want)
        if old is not None:
            have[path] = have.pop(old)
        elif _counted_later(path, have):
            have[path] = np.zeros(want[path]["shape"], want[path]["dtype"])
    upgraded = {path: _reshaped(leaf, want[path]) if path in want else leaf
                for path, leaf in have.items()}
    order = [p for p in want if p in upgraded] + [p for p in upgraded if p not in want]
    return ([{"path": p, "shape": list(upgraded[p].shape), "dtype": str(upgraded[p].dtype)}
             for p in order], [upgraded[p] for p in order])


def _unwrapped_path(path: str, have: dict[str, Any], want: dict[str, Any]) -> str | None:
    """Where a checkpoint from before its environment's wrappers keeps the state `path`
    names: its scope without the wrappers' `/env` levels; None where it has no such entry."""
    match = _PATH.match(path)
    if match is None:
        return None
    scope, rest = match["scope"], match["rest"]
    while scope.endswith(WRAPPED + WRAPPED):
        scope = scope[:-len(WRAPPED)]
        old = f"['{scope}']{rest}"
        if old in have and old not in want:
            return old
    return None


def _normaliser_path(path: str, have: dict[str, Any], want: dict[str, Any]) -> str | None:
    """Where a checkpoint from before the normalisers were wrappers keeps the state `path`
    names (a wrapper's normaliser's): beside the policy; None where it has no such entry."""
    match = _PATH.match(path)
    moved = None if match is None else _NORMALISER.match(match["scope"])
    if moved is None:
        return None
    old = f"['{moved['agent']}/{_NORMALISER_THEN[moved['part']]}']{match['rest']}"
    return old if old in have and old not in want else None


def _counted_later(path: str, have: dict[str, Any]) -> bool:
    """`path` is a rollout's running episodes' lengths, which a checkpoint from before they
    were counted lacks (it has their returns beside them)."""
    match = _PATH.match(path)
    return (match is not None and match["rest"] == RUNNING_LENGTH
            and f"['{match['scope']}']{RUNNING_RETURN}" in have)


def _reshaped(leaf: np.ndarray, want: dict[str, Any]) -> np.ndarray:
    """`leaf` [..., d] as `want`'s [..., *shape] where the shape's elements are the d of a
    stored vector (observations that keep their shape now), and then as bool where `want`
    says bool and every value is 0 or 1; anything else as it is."""
    shape, lead = tuple(want["shape"]), leaf.shape[:-1]
    if leaf.ndim == 0 or len(shape) <= leaf.ndim or shape[:len(lead)] != lead \
            or int(np.prod(shape[len(lead):])) != leaf.shape[-1]:
        return leaf
    leaf = leaf.reshape(shape)
    if want["dtype"] == "bool" and leaf.dtype.kind == "f" and np.isin(leaf, (0.0, 1.0)).all():
        leaf = leaf.astype(np.bool_)
    return leaf
