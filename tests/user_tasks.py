"""A test's own C++ task (tests/components/envs/tasks/), built and registered from outside the
package as a user does it (docs/your-own-environment.md): `register_task`."""

from pathlib import Path

import gymnasium

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
