"""metagraph: reinforcement learning components composed into a meta-graph, lowered to XLA.

    import metagraph as mg
    graph = mg.build(MyAgent(), input_spaces={"obs": mg.spaces.Box((4,), batch=True)})
    print(graph.summary())
"""

from metagraph import spaces
from metagraph.api import api
from metagraph.build import build
from metagraph.component import Component
from metagraph.conditionals import cond
from metagraph.errors import (
    LoadError,
    MetaGraphError,
    MissingExtraError,
    RuntimeCheckError,
    SpaceError,
    StateError,
    TraceError,
)
from metagraph.graph import ApiSignature, MetaGraph
from metagraph.loops import scan

__version__ = "0.1.0"

__all__ = [
    "ApiSignature", "Component", "LoadError", "MetaGraph", "MetaGraphError", "MissingExtraError",
    "RuntimeCheckError", "SpaceError", "StateError", "TraceError", "api", "build", "cond",
    "scan", "spaces",
]
