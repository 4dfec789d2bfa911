"""The environment is a node of every agent's graph: each built-in agent steps its
environments through `Environment.step` (inside `mg.scan`) on every door, so the meta-graph
holds the call edge agent API -> environment.step with the spaces that flowed, and
`summary()` shows it. Builds only (no XLA compile), with small configs."""

import pytest

import metagraph as mg
from components.agents import DQNAgent, PPOAgent, ReweightAgent
from components.agents.dqn_config import DQNConfig
from components.agents.impala_agent import ImpalaAgent
from components.agents.impala_config import ImpalaConfig
from components.agents.ppo_config import PPOConfig
from components.agents.reweight_config import ReweightConfig
from metagraph.api import api_specs
from metagraph.spaces import Box, Discrete, PRNGKey

DOORS = ["native", "jax", "host", "gymnasium"]
N = 2


def ppo(door):
    config = PPOConfig(num_envs=N, num_steps=4, epochs=1, minibatches=2, hidden=(8,),
                       iterations_per_call=1, door=door)
    return PPOAgent("CartPole-v1", config, 100), "train", {
        "key": PRNGKey(), "iterations": Discrete(2), "observation": Box((3, 4))}


def dqn(door):
    config = DQNConfig(num_envs=N, rollout=4, buffer_size=64, batch_size=8,
                       updates_per_iteration=1, hidden=(8,), iterations_per_call=1, door=door)
    return DQNAgent("CartPole-v1", config, 100), "train", {
        "key": PRNGKey(), "iterations": Discrete(2), "observation": Box((3, 4))}


def impala(door):
    return ImpalaAgent("CartPole-v1", ImpalaConfig(num_envs=N, num_steps=4, hidden=(8,),
                                                   door=door)), "sample", {"key": PRNGKey()}


def reweight(door):
    config = ReweightConfig(num_envs=N, fit_paths=2, hidden=(8,), door=door)
    return ReweightAgent("CartPole-v1", config), "sample_paths", {"key": PRNGKey()}


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("make", [ppo, dqn, impala, reweight])
def test_every_agent_calls_env_step_on_every_door(make, door):
    agent, api, spaces = make(door)
    apis = [api, "start"] if "start" in api_specs(type(agent)) else [api]
    graph = mg.build(agent, spaces, apis=apis)
    caller, step = f"{agent.name}.{api}", f"{agent.name}/rollout/env.step"
    assert (caller, step) in graph.nx.edges, sorted(graph.nx.edges)
    edge = graph.nx.edges[caller, step]
    assert edge["kind"] == "call"
    assert str(edge["args"]["action"]) == "int32[2]"  # one action per environment
    assert str(edge["returns"]["obs"]) == "float32[2,4]"
    assert f"{agent.name}/rollout/env.step" in graph.summary()


@pytest.mark.parametrize("make", [ppo, dqn, impala, reweight])
def test_the_observations_env_step_makes_flow_into_the_next_steps_action(make):
    """Through the rollout's `mg.scan` carry: env.step's `obs` output is the next step's
    input of the policy (or Q-network), a data edge with its space."""
    agent, api, spaces = make("native")
    apis = [api, "start"] if "start" in api_specs(type(agent)) else [api]
    graph = mg.build(agent, spaces, apis=apis)
    step = f"{agent.name}/rollout/env.step"
    consumers = {b: data for a, b, data in graph.nx.out_edges(step, data=True)
                 if data["kind"] == "data"}
    assert consumers, f"no data edge leaves {step}"
    flows = [str(flow) for data in consumers.values() for flow in data["flows"]]
    assert any(flow.startswith("obs -> ") and flow.endswith("float32[2,4]")
               for flow in flows), flows
