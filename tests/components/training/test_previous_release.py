"""Code written against the release before still runs, with a DeprecationWarning that says
what to write instead (issue 55, part 2): a user's algorithm whose `distributed` is the
distributed form itself (an attribute; a method now), and a user's component that reads an
environment's step by name (`out["terminated"]`: a step gave a dict; a `StepResult` now)."""

from __future__ import annotations

import shutil
import textwrap

import jax
import numpy as np
import pytest
from command_line import USER_MODULE, metagraph

import metagraph as mg
from backends import xla
from components.envs import Environment
from components.envs.engine.step_result import StepResult
from metagraph.spaces import PRNGKey

OLD_ALGORITHM = textwrap.dedent("""
    from user_reinforce import Reinforce, ReinforceSamplers

    class OldReinforce(Reinforce):
        distributed = ReinforceSamplers()  # the release before: an attribute, not a method
""")


def test_an_algorithm_whose_distributed_is_an_attribute_trains_with_samplers(tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    shutil.copy(USER_MODULE, user / "user_reinforce.py")
    (user / "old_reinforce.py").write_text(OLD_ALGORITHM)
    with pytest.warns(DeprecationWarning, match=r"OldReinforce.distributed is an attribute; it "
                                                r"is a method now: write `def distributed"):
        metagraph(user, "train", "CartPole-v1", "--algo", "old_reinforce:OldReinforce",
                  "--num-samplers", "2", "--out", "run", "--steps", "64", "--set",
                  "num_envs=2", "--set", "num_steps=16", "--set", "hidden=[8]")
    assert (user / "run" / "checkpoint.npz").exists()


class OldStyleStepper(mg.Component):
    """A user's component of the release before: it reads the step's result by name."""

    def __init__(self):
        super().__init__("stepper")
        self.env = Environment("CartPole-v1", 2)

    @mg.api
    def ends(self, key):
        self.env.reset(key)
        out = self.env.step(np.zeros(2, np.int32))
        return out["terminated"] | out["truncated"], out["reward"]


def test_a_step_read_by_name_still_works_and_says_what_to_write():
    with pytest.warns(DeprecationWarning, match=r"StepResult\['terminated'\]: a step's result "
                                                r"is a StepResult now, not a dict; write "
                                                r"\.terminated"):
        exe = xla.lower(mg.build(OldStyleStepper(), {"key": PRNGKey()}))
    done, reward = exe.ends(np.asarray(jax.random.PRNGKey(0)))
    assert np.asarray(done).shape == (2,) and np.asarray(reward).tolist() == [1.0, 1.0]
    with pytest.raises(KeyError, match=r"StepResult has no field 'done'; its fields are "
                                       r"\['state', 'obs', 'reward'"):
        StepResult(None, 0, 0, False, False)["done"]


def test_the_truncation_helpers_old_home_still_gives_them_with_a_warning():
    import components.agents.ppo_agent as ppo_agent
    from components import losses

    for name in ("bootstrap_truncated", "truncated_values"):
        with pytest.warns(DeprecationWarning, match=f"ppo_agent.{name} is now "
                                                    f"components.losses.{name}"):
            assert getattr(ppo_agent, name) is getattr(losses, name)
    with pytest.raises(AttributeError, match="no attribute 'gae_of'"):
        ppo_agent.gae_of  # noqa: B018
