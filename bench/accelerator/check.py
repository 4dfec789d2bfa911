"""The GPU check: what metagraph does on a machine with an accelerator, as one JSON of figures.

    bash bench/accelerator/check.sh OUT [--budget SECONDS] [--only STEP ...] [--ppo-steps N]

(check.sh installs and builds first; this script assumes that is done.) Each step runs its
commands as fresh processes with a time limit taken from what is left of `--budget`, records
wall times, figures and the tail of its log, and rewrites OUT/check.json after every step,
so a check stopped early still reports what it measured. The steps, in order:

    environment   the device, JAX, the CPU count
    tests         a subset of the test suite with JAX's default backend the GPU
    main_job      README's main job (CartPole, path reweighting) on the GPU, then on the CPU
    host_pool     CartPole N=4096 and HalfCheetah N=64 host pool against Gymnasium
    ppo           PPO on HalfCheetah-v5: the fused program on the GPU, pipelined (rollouts on
                  the CPU beside the learner on the GPU), then on the CPU alone
    pipeline      IMPALA on CartPole: samplers in turn with the learner (--runner local) against
                  the pipelined runner (samplers on the CPU, the learner on the GPU)
    atari         (only with `--only atari`: its own call) PPO on Pong-v5 (`--atari-games`)
                  with the shipped Atari recipe: the network on the GPU with ale-py's pool
                  stepped through the host door, the pipelined runner (rollouts on the CPU
                  beside the learner on the GPU), then the CPU alone; steps/s (an untrained
                  policy's raw game can run 27,000 steps: no evaluation)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
# Tests that run on whatever JAX's default backend is: the native door inside programs (the
# GPU handlers), the step on every door, playouts, placement, the stages, a short training.
TESTS = [
    "tests/components/envs/test_async_pool.py",
    "tests/components/envs/test_same_seed_same_trajectories.py",
    "tests/components/envs/test_environment_component.py",
    "tests/components/envs/test_legal_actions_and_extras.py",
    "tests/components/envs/games/test_games_playout.py",
    "tests/components/envs/mujoco/test_mujoco_doors.py",
    "tests/components/agents/test_env_step_in_graph.py",
    "tests/components/agents/test_rollout.py",
    "tests/backends/test_stages.py",
    "tests/backends/test_device_placement.py",
    "tests/components/training/test_ppo_training.py",
    # a game's Environment component: observations by name, illegal moves refused after the call
    "tests/components/envs/test_step_result.py",
    "tests/components/envs/games/test_games_bad_input.py",
    "tests/components/policy/test_masked_policy.py",
    # MJX, the pure-JAX twin of the MuJoCo tasks, on the accelerator against the native core
    "tests/components/envs/mujoco/test_mjx_twin_vs_native.py",
]


# alternated rounds of the host pool's contenders (host_pool)
ROUNDS = 3


class Check:
    def __init__(self, out: Path, budget: float, install_seconds: float):
        self.out, self.budget, self.start = out, budget, time.monotonic()
        self.report: dict = {"install_seconds": install_seconds, "steps": {}}
        self.runs = out / "runs"

    def left(self) -> float:
        return self.budget - (time.monotonic() - self.start)

    def save(self) -> None:
        self.report["elapsed_seconds"] = round(time.monotonic() - self.start, 1)
        (self.out / "check.json").write_text(json.dumps(self.report, indent=1))

    def run(self, name: str, command: list[str], limit: float, env: dict | None = None) -> dict:
        """`command` in a fresh process, at most `limit` seconds (and what the budget has
        left, less 10 s): {"rc", "seconds", "tail"}; its output appended to OUT/check.log
        (one file: what comes back from a lent machine is counted in files)."""
        limit = max(5.0, min(limit, self.left() - 10))
        began = time.monotonic()
        with (self.out / "check.log").open("a") as f:
            f.write(f"\n[{name}] $ {' '.join(command)}\n")
            f.flush()
            try:
                done = subprocess.run(command, cwd=ROOT, env={**os.environ, **(env or {})},
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True, timeout=limit)
                rc, text = done.returncode, done.stdout
            except subprocess.TimeoutExpired as e:
                rc = "timeout"
                text = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            f.write(text)
        seconds = round(time.monotonic() - began, 1)
        print(f"[{name}] rc {rc}, {seconds} s: {' '.join(command[-6:])}", flush=True)
        return {"rc": rc, "seconds": seconds, "limit": round(limit), "tail": text[-1500:],
                "stdout": text}


def environment(check: Check, args) -> dict:
    probe = ("import jax, json, numpy; d = jax.devices(); print(json.dumps({'jax': "
             "jax.__version__, 'backend': jax.default_backend(), 'devices': [str(x) for x in d],"
             " 'kind': d[0].device_kind, 'numpy': numpy.__version__}))")
    found = check.run("environment", [PY, "-c", probe], 60)
    info = json.loads(found["stdout"].strip().splitlines()[-1]) if found["rc"] == 0 else {
        "error": found["tail"]}
    smi = shutil.which("nvidia-smi")
    if smi:
        gpu = subprocess.run([smi, "--query-gpu=name,memory.total,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True)
        info["nvidia_smi"] = gpu.stdout.strip()
    info.update(cpus=os.cpu_count(), python=platform.python_version(),
                processor=platform.processor() or platform.machine(), kernel=platform.release())
    with open("/proc/cpuinfo") as f:  # the host's cores: their model decides the host pool's speed
        models = {line.split(":", 1)[1].strip() for line in f if line.startswith("model name")}
    info["cpu_model"] = sorted(models)
    return info


def tests(check: Check, args) -> dict:
    # several test processes share the GPU: none takes 75% of its memory up front
    env = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    done = check.run("tests", [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=line",
                               "-n", str(min(8, os.cpu_count() or 1)), *TESTS], 150, env)
    summary = re.findall(r"(\d+) (passed|failed|error|errors|skipped)", done["tail"])
    lines = done["stdout"].splitlines()
    return {"rc": done["rc"], "seconds": done["seconds"],
            "counts": {kind: int(n) for n, kind in summary},
            "failed": [line for line in lines if line.startswith(("FAILED", "ERROR"))][:60],
            "errors": sorted({line[:300] for line in lines if line.startswith("E ")
                              or ": " in line and line.startswith("/")})[:40]}


def train_and_evaluate(check: Check, name: str, train: list[str], limit: float,
                       episodes: int) -> dict:
    out = check.runs / name
    shutil.rmtree(out, ignore_errors=True)
    trained = check.run(name, [PY, "-m", "components.training.cli", "train", *train, "--out",
                               str(out)], limit)
    result = {"train_rc": trained["rc"], "train_seconds": trained["seconds"],
              "limit": trained["limit"]}
    metrics = out / "metrics.jsonl"
    if metrics.exists():
        rows = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
        if rows:  # a run cut at its limit still says how fast it went
            first, last = rows[0], rows[-1]
            result.update(env_steps=last["env_steps"], wall_time=last["wall_time"],
                          episode_return_mean=last.get("episode_return_mean"))
            if len(rows) > 1 and last["wall_time"] > first["wall_time"]:
                result["steps_per_second_after_first_call"] = round(
                    (last["env_steps"] - first["env_steps"])
                    / (last["wall_time"] - first["wall_time"]))
    if trained["rc"] != 0:
        result["tail"] = trained["tail"][-800:]
        return result
    if not episodes:  # (speed only)
        return result
    evaluated = check.run(name, [PY, "-m", "components.training.cli", "evaluate", str(out),
                                 "--episodes", str(episodes), "--json"], 120)
    result["evaluate_rc"] = evaluated["rc"]
    try:
        result["evaluation"] = json.loads(evaluated["stdout"].strip().splitlines()[-1])
    except (ValueError, IndexError):
        result["evaluate_tail"] = evaluated["tail"][-500:]
    return result


def main_job(check: Check, args) -> dict:
    found = {}
    for where, extra in (("gpu", []), ("cpu", ["--device", "cpu"])):
        found[where] = train_and_evaluate(
            check, f"main_job_{where}", ["CartPole-v1", "--algo", "reweight", *extra], 150,
            100)
    return found


def host_pool(check: Check, args) -> dict:
    """Each contender in a fresh process, in `ROUNDS` alternated rounds (a shared machine's
    speed drifts between runs a minute apart, Gymnasium's as much as ours): every round's
    figure, and ratios of the medians."""
    cores = str(os.cpu_count() or 1)
    found = {"cartpole_4096": {}, "halfcheetah_64": {}, "rounds": ROUNDS}
    for _ in range(ROUNDS):
        for name in ("gym-numpy", "host-1t", "host-all", "host-all-int64"):
            done = check.run("host_pool", [PY, "bench/env_throughput.py", "--one", name, "--n",
                                           "4096", "--steps", "1000"], 60)
            found["cartpole_4096"].setdefault(name, []).append(_last_json(done))
        for name in ("Gymnasium make_vec sync", "Gymnasium make_vec async",
                     "metagraph host pool, 1 thread", "metagraph host pool, all cores"):
            done = check.run("host_pool", [PY, "bench/mujoco_throughput.py", "--one", name,
                                           "--n", "64", "--seconds", "2"], 90)
            found["halfcheetah_64"].setdefault(name, []).append(_last_json(done))
    # the step against threads and batch size, the C++ loop alone, and a job on the threads
    # with no work in it (what a call costs beyond its share of the loop)
    done = check.run("host_pool", [PY, "bench/host_scaling.py"], 90)
    found["scaling"] = _last_json(done)
    found["cores"] = cores
    pole = {k: _median(v) for k, v in found["cartpole_4096"].items()}
    if pole.get("host-all") and pole.get("gym-numpy"):
        found["cartpole_host_over_gymnasium"] = round(pole["host-all"] / pole["gym-numpy"], 2)
    cheetah = {k: _median(v) for k, v in found["halfcheetah_64"].items()}
    gym = [v for k, v in cheetah.items() if k.startswith("Gymnasium") and v]
    ours = cheetah.get("metagraph host pool, all cores")
    if gym and ours:
        found["halfcheetah_host_over_best_gymnasium"] = round(ours / max(gym), 2)
    return found


def _median(figures: list) -> float | None:
    """The median of a contender's rounds that gave a figure (None if none did)."""
    numbers = sorted(f for f in figures if isinstance(f, float))
    return numbers[len(numbers) // 2] if numbers else None


def ppo(check: Check, args) -> dict:
    found = {}
    runs = (("gpu", []),  # the fused program on the GPU
            ("pipeline", ["--runner", "pipeline", "--num-samplers", "1", "--actor-device",
                          "cpu"]),  # rollouts on the host beside the learner on the GPU
            ("cpu", ["--device", "cpu"]))
    runs = tuple(run for run in runs if run[0] in args.ppo_contenders)
    for k, (where, extra) in enumerate(runs):
        # each run gets its share of what is left (evaluation included), so both report
        found[where] = train_and_evaluate(
            check, f"ppo_{where}", ["HalfCheetah-v5", "--algo", "ppo", "--steps",
                                    str(args.ppo_steps), *extra],
            (check.left() - 20) / (len(runs) - k) - 15, 10)
    rates = {k: found.get(k, {}).get("steps_per_second_after_first_call")
             for k in ("gpu", "pipeline", "cpu")}
    if rates["gpu"] and rates["cpu"]:
        found["gpu_over_cpu_steps_per_second"] = round(rates["gpu"] / rates["cpu"], 2)
    if rates["gpu"] and rates["pipeline"]:
        found["pipeline_over_gpu_steps_per_second"] = round(rates["pipeline"] / rates["gpu"], 2)
    return found


def pipeline(check: Check, args) -> dict:
    found = {}
    common = ["CartPole-v1", "--algo", "impala", "--num-samplers", "1", "--steps",
              str(args.pipeline_steps)]
    host = ["--set", 'door="host"']
    for name, extra in (("local", ["--runner", "local"]),
                        ("pipeline", ["--runner", "pipeline", "--actor-device", "cpu"]),
                        # stepping and inference alternating through the host pool, in turn
                        ("host_door", ["--runner", "local", *host]),
                        # Sebulba's actors: two threads, each stepping its own host pool
                        # between policy calls on the actor device (the GPU)
                        ("actors", ["--runner", "pipeline", "--num-samplers", "2", *host,
                                    "--actor-device", args.actor_device])):
        found[name] = train_and_evaluate(check, f"pipeline_{name}", [*common, *extra], 150, 10)
    rate = {k: found[k].get("steps_per_second_after_first_call") for k in found}
    for faster, slower in (("pipeline", "local"), ("actors", "host_door")):
        if rate[faster] and rate[slower]:
            found[f"{faster}_over_{slower}_steps_per_second"] = round(
                rate[faster] / rate[slower], 2)
    return found


def atari(check: Check, args) -> dict:
    """PPO on Atari (CleanRL's ppo_atari_envpool recipe, `[groups.atari]`), each game and
    contender its share of the budget: the figures beside CleanRL's published wall times."""
    found = {}
    runs = [(game, where, extra) for game in args.atari_games for where, extra in (
        ("gpu", []),
        ("pipeline", ["--runner", "pipeline", "--num-samplers", "1", "--actor-device", "cpu"]),
        ("cpu", ["--device", "cpu"]))]
    for k, (game, where, extra) in enumerate(runs):
        found[f"{game}_{where}"] = train_and_evaluate(
            check, f"atari_{game}_{where}", [game, "--algo", "ppo", "--steps",
                                             str(args.atari_steps), *extra],
            (check.left() - 20) / (len(runs) - k) - 5, 0)  # speed: no evaluation
    for game in args.atari_games:
        rate = {where: found[f"{game}_{where}"].get("steps_per_second_after_first_call")
                for where in ("gpu", "pipeline", "cpu")}
        if rate["gpu"] and rate["cpu"]:
            found[f"{game}_gpu_over_cpu_steps_per_second"] = round(rate["gpu"] / rate["cpu"], 2)
        if rate["gpu"] and rate["pipeline"]:
            found[f"{game}_pipeline_over_gpu_steps_per_second"] = round(
                rate["pipeline"] / rate["gpu"], 2)
    return found


def _last_json(done: dict):
    if done["rc"] != 0:
        return f"rc {done['rc']}: {done['tail'][-300:]}"
    try:
        return json.loads(done["stdout"].strip().splitlines()[-1])
    except (ValueError, IndexError):
        return done["tail"][-300:]


STEPS = {"environment": environment, "tests": tests, "main_job": main_job,
         "host_pool": host_pool, "pipeline": pipeline, "ppo": ppo, "atari": atari}
DEFAULT_STEPS = [name for name in STEPS if name != "atari"]  # (Atari: a call of its own)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="accelerator-out")
    parser.add_argument("--budget", type=float, default=570.0, help="seconds for all steps")
    parser.add_argument("--only", nargs="+", choices=list(STEPS), default=DEFAULT_STEPS)
    parser.add_argument("--ppo-steps", type=int, default=1_000_000)
    parser.add_argument("--ppo-contenders", nargs="+", choices=["gpu", "pipeline", "cpu"],
                        default=["gpu", "pipeline", "cpu"])
    parser.add_argument("--pipeline-steps", type=int, default=2_000_000)
    parser.add_argument("--actor-device", default="gpu",
                        help="where Sebulba's actors run the policy (the pipeline step)")
    parser.add_argument("--atari-steps", type=int, default=200_000)
    parser.add_argument("--atari-games", nargs="+", default=["Pong-v5"])
    parser.add_argument("--install-seconds", type=float, default=None)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    check = Check(out, args.budget, args.install_seconds)
    check.report["args"] = vars(args)
    for name in args.only:
        if check.left() < 15:
            check.report["steps"][name] = "skipped: out of budget"
            continue
        began = time.monotonic()
        try:
            check.report["steps"][name] = STEPS[name](check, args)
        except Exception as error:  # one step's failure is a finding, not the end of the check
            check.report["steps"][name] = {"error": f"{type(error).__name__}: {error}"}
        print(f"== {name}: {time.monotonic() - began:.1f} s", flush=True)
        check.save()
    check.save()
    print(json.dumps(check.report, indent=1)[-6000:])


if __name__ == "__main__":
    main()
