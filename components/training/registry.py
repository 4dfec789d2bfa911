"""The algorithm registry: the only place that knows algorithms by name.

`resolve(spec)` turns what `--algo` names into an algorithm: a built-in name (`reweight`,
`ppo`, `dqn`, `sac`, `impala`, `alphazero`), `MODULE:ATTRIBUTE` or `PATH.py:ATTRIBUTE` naming a
subclass of `Algorithm` or `DistributedAlgorithm` (made with no arguments) or an instance of
one. `record(spec)` is the form a run
directory keeps, from which `resolve` finds the same algorithm again (files by absolute path).
"""

from __future__ import annotations

from components.training.algorithm import AlgorithmBase
from components.training.algorithms import DQN, PPO, SAC, AlphaZero, Impala, Reweight
from metagraph.targets import TargetError, canonical_target, load_target

BUILTIN: dict[str, type[AlgorithmBase]] = {"reweight": Reweight, "ppo": PPO, "dqn": DQN,
                                       "sac": SAC, "impala": Impala, "alphazero": AlphaZero}


class AlgorithmError(ValueError):
    """An `--algo` that names no algorithm; the message is one line saying what was
    expected."""


EXPECTED = (f"one of {', '.join(BUILTIN)}, or MODULE:ATTRIBUTE / PATH.py:ATTRIBUTE naming a "
            f"subclass of components.training.Algorithm (or DistributedAlgorithm)")


def resolve(spec: str) -> AlgorithmBase:
    """The algorithm `spec` names (see the module docstring); AlgorithmError otherwise."""
    if not isinstance(spec, str):
        raise AlgorithmError(f"algorithm: expected {EXPECTED}, got {spec!r}")
    if spec in BUILTIN:
        return BUILTIN[spec]()
    if ":" not in spec:
        raise AlgorithmError(f"unknown algorithm {spec!r}; expected {EXPECTED}")
    try:
        obj = load_target(spec)
    except TargetError as error:
        raise AlgorithmError(f"algorithm {spec!r}: {error}") from None
    if isinstance(obj, type) and issubclass(obj, AlgorithmBase):
        missing = set(obj.__abstractmethods__)
        if missing:
            raise AlgorithmError(f"algorithm {spec!r}: {obj.__name__} does not implement "
                                 f"{', '.join(sorted(missing))}")
        obj = obj()
    if not isinstance(obj, AlgorithmBase):
        kind = f"class {obj.__name__}" if isinstance(obj, type) else type(obj).__name__
        raise AlgorithmError(f"algorithm {spec!r} is a {kind}, not an Algorithm; expected "
                             f"{EXPECTED}")
    if not isinstance(getattr(type(obj), "config_class", None), type):  # the one check here
        raise AlgorithmError(f"algorithm {spec!r}: {type(obj).__name__}.config_class must be "
                             f"a config class (with from_dict and to_dict)")
    return obj



def record(spec: str) -> str:
    """The form of `spec` a run directory keeps (file paths made absolute)."""
    return spec if spec in BUILTIN else canonical_target(spec)
