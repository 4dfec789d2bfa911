"""Run by test_device_placement.py in a fresh process with two XLA host devices standing for an
actor and a learner device: programs and state placed with `device=`, a native task stepped
inside a program placed on the second device, the pipelined runner (fused rollouts, and two
host-door actors) sampling on one device and learning on the other, and the errors for
devices this process lacks.
Prints a JSON report."""

import json

import jax
import numpy as np
from toy_components import Model, Stepper

import metagraph as mg
from backends import xla
from components.envs import Environment
from metagraph.spaces import Box, Discrete, PRNGKey

X = np.arange(12, dtype=np.float32).reshape(3, 4)
report = {"devices": [str(d) for d in jax.devices()]}
second = jax.devices()[1]


def devices_of(tree):
    return sorted({str(d) for leaf in jax.tree.leaves(tree) for d in leaf.devices()})


model = mg.build(Model(), {"x": Box((4,), batch=True), "key": PRNGKey()})
on_default, on_second = xla.lower(model, seed=1), xla.lower(model, seed=1, device="cpu:1")
out = on_second.predict(X)
report["model"] = {"out": devices_of(out), "state": devices_of(on_second.state),
                   "default_state": devices_of(on_default.state),
                   "same": bool(np.allclose(out, on_default.predict(X), rtol=1e-6)),
                   "by_object": devices_of(xla.lower(model, device=second).predict(X))}
seeded = xla.lower(model, seeds=2, device="cpu:1")
report["seeds"] = {"out": devices_of(seeded.predict(np.stack([X, X]))),
                   "state": devices_of(seeded.state), "repr": repr(seeded.transform)}

stepper = mg.build(Stepper(Environment("CartPole-v1", 4)),
                   {"key": PRNGKey(), "action": Discrete(2, shape=(4,))})
env_outputs = {}
for name, exe in (("default", xla.lower(stepper)),
                  ("second", xla.lower(stepper, device="cpu:1"))):
    exe.start(jax.random.PRNGKey(3))
    observations = [exe.act(np.array([0, 1, 1, 0], np.int32)) for _ in range(5)]
    env_outputs[name] = (devices_of(observations), np.asarray(observations).tolist())
report["native"] = {"devices": env_outputs["second"][0],
                    "same": env_outputs["second"][1] == env_outputs["default"][1]}

# the pipelined runner: samplers' rollouts on the first device in threads, the learner's
# updates on the second, batches and weights moved between them
from components.agents.impala_config import ImpalaConfig  # noqa: E402
from components.training import keys_for  # noqa: E402
from components.training.algorithms import Impala  # noqa: E402
from components.training.distributed import Learner, ThreadedSamplers  # noqa: E402

algorithm = Impala()


def pipelined(config, samplers):
    """Six updates of IMPALA's learner on cpu:1 fed by `samplers` sampler threads on cpu:0:
    the learner's executable, the samplers and the metrics rows."""
    learner_exe = xla.lower(algorithm.build("CartPole-v1", config, 10_000, 1), device="cpu:1")
    pool = ThreadedSamplers("impala", "CartPole-v1", config.to_dict(), 0, samplers,
                            device="cpu:0")
    learner = Learner(algorithm.distributed(), learner_exe, config, pool, 0,
                      lambda version: keys_for(0, None, version))
    rows = [row for version in range(6) for row in learner.step(version)]
    threads = list(pool.samplers)
    pool.close()  # (the threads joined: no call under way holds a sampler's donated state)
    return learner_exe, threads, rows


learner_exe, samplers, rows = pipelined(ImpalaConfig(num_envs=4, num_steps=8, hidden=(8,)), 1)
report["pipeline"] = {"sampler_state": devices_of(samplers[0].exe.state),
                      "learner_state": devices_of(learner_exe.state),
                      "lags": [row["policy_lag"] for row in rows]}
# `train --runner pipeline`: the learner's batches split over both devices unless --device
# names one (issue 55: it put the learner's state on every device)
from components.training.trainer import learner_data_parallel  # noqa: E402

axes = {"batch": 0}
report["pipeline"]["data_parallel"] = {
    str(device): type(learner_data_parallel(axes, device)).__name__
    for device in (None, "cpu:1", "cpu")}

# Sebulba's actors: two sampler threads, each stepping its own host pool from its rollout
# program (the host door) while the other's program runs the policy on the actor device
learner_exe, actors, rows = pipelined(
    ImpalaConfig(num_envs=4, num_steps=8, hidden=(8,), door="host"), 2)
report["actors"] = {"sampler_state": [devices_of(actor.exe.state) for actor in actors],
                    "learner_state": devices_of(learner_exe.state),
                    "lags": [row["policy_lag"] for row in rows],
                    "steps": sum(row["steps"] for row in rows)}

errors = {}
for name, call in (("gpu", lambda: xla.lower(model, device="gpu")),
                   ("index", lambda: xla.lower(model, device="cpu:5")),
                   ("malformed", lambda: xla.lower(model, device="cpu:x")),
                   ("type", lambda: xla.lower(model, device=3.5)),
                   ("mesh", lambda: xla.lower(model, device="cpu",
                                              data_parallel=xla.DataParallel()))):
    try:
        call()
        errors[name] = None
    except Exception as error:  # the report names each error's type and message
        errors[name] = f"{type(error).__name__}: {error}"
report["errors"] = errors
print(json.dumps(report))
