"""Games after training: matches against opponents (`opponents.py`: random, OpenSpiel's MCTS,
another run; `game_evaluation.py`, with Wilson intervals from `intervals.py`), and `metagraph
play` against a person (`play.py`, moves and boards named by `notation.py`). How an agent plays
(`components.training.game_player`) is part of the algorithm's contract."""
