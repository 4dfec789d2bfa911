"""Spaces: the types of the values that flow through a meta-graph.

Leaf spaces (`Box`, `Discrete`, `Bool`, `PRNGKey`) describe one array; containers (`Dict`,
`Tuple`, `Record` for a NamedTuple type) nest them. Every space has explicit batch and time
ranks (`batch=True` adds a leading `B`, `time=True` a `T`), converts to `jax.ShapeDtypeStruct`
pytrees (`to_abstract`), and offers `sample`, `contains` and `zeros` on NumPy values.
"""

from metagraph.spaces.array_space import ArraySpace
from metagraph.spaces.boolean import Bool
from metagraph.spaces.box import Box
from metagraph.spaces.containers import Container, Dict, Record, Tuple
from metagraph.spaces.dims import BATCH, TIME
from metagraph.spaces.discrete import Discrete
from metagraph.spaces.flowed import abstract_of, same_signature, space_of
from metagraph.spaces.prng_key import PRNGKey
from metagraph.spaces.space import Space

__all__ = [
    "BATCH", "TIME", "ArraySpace", "Bool", "Box", "Container", "Dict", "Discrete", "PRNGKey",
    "Record", "Space", "Tuple", "abstract_of", "same_signature", "space_of",
]
