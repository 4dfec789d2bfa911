"""A test's own C++ task (tests/components/envs/tasks/), built and registered from outside the
package as a user does it (docs/your-own-environment.md): `register_task`."""

from pathlib import Path

import gymnasium
import numpy as np
import pytest

import components.envs as envs

TASKS = Path(__file__).resolve().parent / "components" / "envs" / "tasks"


def register_task(env_id: str, header: str, task: str, observation_space: gymnasium.Space,
                  num_actions: int, **register_kwargs) -> str:
    """Build `TASKS/header` for the C++ class `task` ("ns::Class") and register `env_id` with
    `observation_space` and `Discrete(num_actions)` (and `register_kwargs`: aliases); returns
    `env_id`."""
    module = envs.build_extension(TASKS / header, task)
    cls = getattr(module, task.rsplit("::", 1)[-1])

    def make_spec(made_id, kwargs):
        made = cls(made_id, kwargs)
        return envs.EnvSpec(made_id, observation_space, gymnasium.spaces.Discrete(num_actions),
                            int(made.max_steps), made)

    envs.register(env_id, make_spec, **register_kwargs)
    return env_id


def assert_forged_positions_refused(env_id: str, forgeries: list[tuple[dict, str]],
                                    action: int) -> None:
    """Each forgery ({physical index: value}, the task's words) changes the first position of
    `env_id` into one no game reaches: the host pool takes it (`reset(options={"state"})`)
    with no legal move, and a step of `action` is refused in the task's words
    (`invalid_reason`) with nothing moved."""
    pool = envs.make(env_id, 1, seed=0)
    pool.reset()
    start = pool.physical_state()
    for change, words in forgeries:
        forged = start.copy()
        for index, value in change.items():
            forged[0, index] = value
        pool.reset(options={"state": forged})
        assert not pool.legal_mask().any()
        with pytest.raises(ValueError, match=f"environment 0 {words}"):
            pool.step(np.array([action]))
        np.testing.assert_array_equal(pool.physical_state(), forged)
