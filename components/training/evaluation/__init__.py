"""A trained run, and its policy watched while training: `load(RUN)` and its `TrainedAgent`
(`loading.py`), greedy or sampled episodes of it (`episodes.py`: `evaluate`), videos of it
(`video.py`); evaluation and videos while training (`periodic_evaluation.py`,
`periodic_video.py`, workers of the trainer's `Periodic` callbacks)."""
