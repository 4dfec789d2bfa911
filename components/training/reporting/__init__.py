"""What a run reports: the reporting child process (`reporter.py`: TensorBoard events,
`tensorboard_log.py`; Weights & Biases, `wandb_log.py`; the learning curve,
`learning_curve.py`) and `metagraph plot` (`plots.py`). `reporter.py` runs as a script beside
its siblings: it imports nothing above this folder."""
