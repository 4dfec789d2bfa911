"""Search over the native games inside the compiled program: `GameSearch` (Gumbel MuZero from
`mctx`, its model the game stepped through the in-graph door)."""

from components.search.game_search import (
    Evaluate,
    GameSearch,
    SearchNode,
    embedding_of,
    floor_illegal,
)

__all__ = ["Evaluate", "GameSearch", "SearchNode", "embedding_of", "floor_illegal"]
