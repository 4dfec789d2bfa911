"""A trained run: `load(RUN)` and its `TrainedAgent` (`loading.py`), greedy or sampled
episodes of it (`episodes.py`: `evaluate`), and evaluation while training
(`periodic_evaluation.py`, its settings in `evaluation_settings.py`)."""
