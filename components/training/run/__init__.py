"""The run: a `RunSpec` worked out once (`run_spec.py`, with its `EvaluationSettings`), the loop
of calls (`loop.py`) and its callbacks (`callbacks.py`), the run directory (`run_dir.py`), the
run's keys (`keys.py`), Ctrl-C (`interrupts.py`), the state's memory check (`memory.py`), the
executors by name (`executors.py`), and a run's user code only when named again or trusted
(`trusted_code.py`, `env_module.py`). `components.training.trainer` composes them."""
