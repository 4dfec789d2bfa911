"""Search over the native games inside the compiled program: `GameSearch` (Gumbel MuZero from
`mctx`, its model the game stepped through an environment's in-graph door: a `GameModel`)."""

from components.search.game_search import (
    Evaluate,
    GameModel,
    GameSearch,
    Position,
    SearchNode,
    embedding_of,
    floor_illegal,
)

__all__ = ["Evaluate", "GameModel", "GameSearch", "Position", "SearchNode", "embedding_of",
           "floor_illegal"]
