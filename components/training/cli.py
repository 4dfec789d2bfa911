"""The `metagraph` command.

    metagraph train ENV_ID --algo ALGO --out DIR [--seed S] [--seeds K] [--steps N] [--resume]
                   [--env-module SOURCE] [--env-kwargs KEY=VALUE ...]
                   [--config FILE.toml|json] [--set KEY=VALUE ...]
                   [--runner {local,ray,pipeline}] [--num-samplers K] [--batches-per-request N]
                   [--address auto] [--executor {xla,eager}]
                   [--eval-every N [--eval-episodes K] [--save-best]]
                   [--video-every N]
                   [--track [--wandb-project NAME]]
    metagraph evaluate DIR [--episodes 100] [--json] [--stochastic] [--video out.mp4]
                       [--opponent random|mcts:N|run:DIR [--games 200]]
                       [--algo ALGO] [--env-module SOURCE] [--trust-code]
    metagraph play DIR [--second] [--seed S] [--algo ALGO] [--env-module SOURCE] [--trust-code]
    metagraph export DIR -o policy.mgx [--format {mgx,onnx}] [--stochastic] [--seed-index K]
                     [--algo ALGO] [--env-module SOURCE] [--trust-code]
    metagraph plot RUN... -o plot.png [--window 100] [--title TEXT]
    metagraph graph TARGET -o agent.svg [--depth N] [--focus API] [--no-params] [--tb]

ALGO is a built-in algorithm (reweight, ppo, dqn, sac, impala) or MODULE:ATTRIBUTE /
PATH.py:ATTRIBUTE naming a subclass of `components.training.Algorithm` in the user's own code.
A run directory is data: `evaluate`, `export`, `play` and `train --resume` import the user's
code a run names (its algorithm, its environment module) only when `--algo` / `--env-module`
name it again or with `--trust-code` (`trusted_code.py`, `env_module.py`).
TARGET is MODULE:OBJECT or PATH.py:OBJECT: a `MetaGraph`, or a function of no arguments
returning a `MetaGraph` or a pair (component, input_spaces) to build.

Every error that is the user's to fix is one line on standard error and exit status 2 (1 for
errors from the user's own code, with its traceback; 130 after Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import sysconfig
import tomllib
from pathlib import Path
from typing import Any

from components.training.registry import BUILTIN
from components.training.run.executors import EXECUTORS
from components.training.run.run_spec import RUNNERS
from metagraph.build import build
from metagraph.component import Component
from metagraph.errors import MissingExtraError
from metagraph.graph import MetaGraph
from metagraph.targets import TargetError, load_target


class UsageError(Exception):
    """A mistake on the command line or in its files: printed as one line, exit status 2."""


def resolve_graph(target: str) -> MetaGraph:
    """The meta-graph named by MODULE:OBJECT or PATH.py:OBJECT."""
    try:
        obj: Any = load_target(target)
    except TargetError as error:
        raise UsageError(str(error)) from None
    if callable(obj) and not isinstance(obj, MetaGraph | Component):
        obj = obj()
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], Component):
        obj = build(obj[0], obj[1])
    if not isinstance(obj, MetaGraph):
        raise UsageError(f"{target} is a {type(obj).__name__}; expected a MetaGraph, or a "
                         f"function returning one or (component, input_spaces)")
    return obj


def graph_command(args: argparse.Namespace) -> None:
    """`metagraph graph TARGET -o FILE`: draw a graph (or a component built alone) to a file."""
    graph = resolve_graph(args.target)
    path = graph.render(args.output, depth=args.depth, focus=args.focus,
                        show_params=not args.no_params, rankdir="TB" if args.tb else "LR")
    print(f"wrote {path}")


def config_values(args: argparse.Namespace) -> dict[str, Any]:
    """The agent's config from --config (TOML or JSON) and --set KEY=VALUE (JSON values)."""
    values: dict[str, Any] = {}
    if args.config:
        path = Path(args.config)
        try:
            text = path.read_text()
            values = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except (OSError, ValueError) as error:
            raise UsageError(f"cannot read --config {path}: {error}") from None
        if not isinstance(values, dict):
            raise UsageError(f"--config {path}: expected a table of settings, got "
                             f"{type(values).__name__}")
    values.update(set_values(args))
    env_kwargs = key_values(args.env_kwargs, "--env-kwargs")
    if env_kwargs:  # over those of --config / --set env_kwargs
        values["env_kwargs"] = {**values.get("env_kwargs", {}), **env_kwargs}
    return values


def key_values(items: list[str] | None, option: str) -> dict[str, Any]:
    """The settings of `option KEY=VALUE ...` (JSON values; a value that is not JSON is a
    string)."""
    values: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{option} expects KEY=VALUE, got {item!r}")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw
    return values


def set_values(args: argparse.Namespace) -> dict[str, Any]:
    """The settings of --set KEY=VALUE (JSON values; a value that is not JSON is a string)."""
    return key_values(args.set, "--set")


def evaluation_settings(args: argparse.Namespace) -> Any:
    """`--eval-every N --eval-episodes K --save-best` as `EvaluationSettings`, or None."""
    from components.training.run.evaluation_settings import EvaluationSettings

    if args.eval_every is None and args.save_best:
        raise UsageError("--save-best needs --eval-every N (the evaluations it compares)")
    if args.eval_every is None and args.video_every is None:
        return None
    return EvaluationSettings(args.eval_every, args.eval_episodes, args.save_best,
                              args.video_every)


def train_command(args: argparse.Namespace) -> None:
    """`metagraph train`: train (or resume) a run directory from the parsed arguments."""
    from components.training.run.run_spec import RunSpec
    from components.training.trainer import resume, train

    if args.seeds < 1:
        raise UsageError(f"--seeds must be >= 1, got {args.seeds}")
    process = dict(progress=True, device=args.device, actor_device=args.actor_device,
                   address=args.address)
    if args.resume:
        if args.env_kwargs:
            raise UsageError("--env-kwargs: a resumed run makes its environments with the "
                             "keyword arguments it recorded (config.json); train a new run "
                             "to change them")
    else:
        try:
            spec = RunSpec.make(
                args.env_id, args.algo or "reweight", config_values(args), steps=args.steps,
                seed=args.seed, seeds=args.seeds if args.seeds > 1 else None,
                runner=args.runner, num_samplers=args.num_samplers,
                batches_per_request=args.batches_per_request,
                evaluation=evaluation_settings(args),
                track=args.wandb_project if args.track else None, executor=args.executor,
                env_module=args.env_module)
        except TypeError as error:
            raise UsageError(str(error)) from None
    try:
        metrics = (resume(args.out, steps=args.steps, algo=args.algo,
                          trust_code=args.trust_code, env_module=args.env_module,
                          evaluation=evaluation_settings(args), **process)
                   if args.resume else train(spec, args.out, **process))
    except KeyboardInterrupt:
        print(f"\nmetagraph train: interrupted; {saved_note(args)}", file=sys.stderr)
        raise SystemExit(130) from None
    except RuntimeError as error:  # (JAX's runtime errors are RuntimeErrors)
        failure = environment_failure(error)
        if failure is None:
            raise
        print(f"metagraph train: the environment failed: {failure}; {saved_note(args)}",
              file=sys.stderr)
        raise SystemExit(1) from None
    last = metrics[-1] if metrics else {}
    mean = last.get("episode_return_mean")
    print(f"{len(metrics)} iterations, {last.get('env_steps', 0):,} steps, "
          f"{last.get('wall_time', 0):.1f} s; last mean return "
          f"{mean if mean is None else round(mean, 1)}; wrote {args.out}/graph.svg, "
          f"graph.html, curve.png, metrics.jsonl, config.json, checkpoint.npz")


def saved_note(args: argparse.Namespace) -> str:
    """What a stopped run left on disk: its checkpoint and how to continue, or none yet."""
    checkpoint = Path(args.out) / "checkpoint.npz"
    if not checkpoint.exists():
        return "no checkpoint was written yet"
    return (f"{checkpoint} holds the state after the last whole call; continue with "
            f"`{resume_command(args)}`")


def environment_failure(error: BaseException) -> str | None:
    """The task's own message where `error` is an environment's step, reset or playout
    failing inside the compiled program (the in-graph door returns it as an XLA error, whose
    status code says nothing of the task: "RESOURCE_EXHAUSTED: MyTask-v0 step: ..."), else
    None."""
    first = str(error).split("\n", 1)[0]
    found = re.match(r"^[A-Z_]+: (\S+ (?:step|reset|playout): .+)$", first)
    return found.group(1) if found else None


def resume_command(args: argparse.Namespace) -> str:
    """The command that continues an interrupted `train`, as it must be typed: a user's
    algorithm and environment module named again (a run directory imports no code unasked)."""
    words = ["metagraph", "train", args.env_id, "--out", args.out, "--resume"]
    if args.algo not in BUILTIN:
        words += ["--algo", args.algo]
    if args.env_module:
        words += ["--env-module", args.env_module]
    return shlex.join(words)


def evaluate_command(args: argparse.Namespace) -> None:
    """`metagraph evaluate RUN_DIR`: greedy episodes of the run's checkpoint, printed (as JSON
    with `--json`)."""
    from components.training.evaluation.episodes import evaluate

    if args.episodes < 1:
        raise UsageError(f"--episodes must be >= 1, got {args.episodes}")
    from components.envs.engine.catalogue import num_players
    from components.training.evaluation.loading import load
    from components.training.games.opponents import parse_opponent

    opponent = None if args.opponent is None else parse_opponent(args.opponent)
    agent = load(args.run_dir, args.algo, args.trust_code,
                 checkpoint="best.npz" if args.best else "checkpoint.npz",
                 overrides=set_values(args), env_module=args.env_module)
    if opponent is not None or num_players(agent.env_id) > 1:  # a game: against an opponent
        from components.training.games.game_evaluation import describe, evaluate_games

        if args.video:
            raise UsageError(f"--video: {agent.env_id} is a game, evaluated by a match "
                             f"against an opponent, which records no video (play it: "
                             f"`metagraph play {args.run_dir}`)")

        games = evaluate_games(agent, opponent or parse_opponent("random"), args.games,
                               seed=args.seed, deterministic=not args.stochastic)
        print(json.dumps(games) if args.json else describe(games, args.run_dir))
        return
    result = evaluate(agent, episodes=args.episodes, deterministic=not args.stochastic)
    if args.video:
        from components.training.evaluation.video import record_video

        record_video(agent, args.video, episodes=args.video_episodes,
                     deterministic=not args.stochastic)
        result["video"] = args.video
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['episodes']} episodes: return {result['return_mean']:.2f} "
              f"± {result['return_std']:.2f}")
        if "return_mean_per_seed" in result:
            print("per seed:", ", ".join(f"{r:.2f}" for r in result["return_mean_per_seed"]))
        if args.video:
            print(f"wrote {args.video}")


def play_command(args: argparse.Namespace) -> None:
    """`metagraph play RUN_DIR`: a person plays the run's agent at its game, in the
    terminal (`play.py`)."""
    from components.training.evaluation.loading import load
    from components.training.games.play import play_game
    from components.training.run.keys import check_seed

    try:
        check_seed(args.seed)
    except ValueError as error:
        raise UsageError(f"--seed: {error}") from None
    agent = load(args.run_dir, args.algo, args.trust_code, overrides=set_values(args),
                 env_module=args.env_module)
    try:
        play_game(agent, human=1 if args.second else 0, seed=args.seed)
    except EOFError:
        raise UsageError("the input ended before the game did") from None
    except KeyboardInterrupt:
        print("\nmetagraph play: stopped (Ctrl-C)", file=sys.stderr)
        raise SystemExit(130) from None


def export_command(args: argparse.Namespace) -> None:
    """`metagraph export RUN_DIR -o FILE`: the run's acting API with only the state it needs,
    for `backends.xla.load` in a process without the library's agents."""
    from components.training.evaluation.loading import load

    agent = load(args.run_dir, args.algo, args.trust_code, env_module=args.env_module)
    if not 0 <= args.seed_index < len(agent.per_seed):
        raise UsageError(f"--seed-index must be in [0, {len(agent.per_seed) - 1}] for "
                         f"{args.run_dir}, got {args.seed_index}")
    data = agent.per_seed[args.seed_index].export(args.output, format=args.format,
                                                  deterministic=not args.stochastic)
    print(f"wrote {args.output} ({len(data):,} bytes)")


def _run_code_options(command: argparse.ArgumentParser, what: str) -> None:
    """--algo and --trust-code: whether a run's own algorithm file may be imported."""
    command.add_argument("--algo", default=None,
                         help=f"the algorithm the run names, to {what} it with its code "
                              f"(needed for a run of your own algorithm, unless --trust-code)")
    command.add_argument("--trust-code", action="store_true",
                         help="import the algorithm file and the environment module the "
                              "run's config.json names (only if unchanged since training)")
    command.add_argument("--env-module", default=None, metavar="SOURCE",
                         help=f"the module or .py file that registers the run's environment "
                              f"(a run trained with --env-module), to {what} it")


def _acting_overrides(command: argparse.ArgumentParser) -> None:
    """--set KEY=VALUE on the commands that act with a run: settings of how it acts."""
    command.add_argument("--set", action="append", metavar="KEY=VALUE",
                         help="override a setting of the run's config that does not change "
                              "its state, e.g. eval_simulations=400 (a search agent's "
                              "simulations a move)")


def plot_command(args: argparse.Namespace) -> None:
    """`metagraph plot RUN... -o FILE`: several runs on one figure (seeds as a mean with a
    band)."""
    from components.training.reporting.plots import plot_runs

    print(f"wrote {plot_runs(args.runs, args.output, window=args.window, title=args.title)}")


class _Renamed(argparse.Action):
    """An option that was renamed: refused with a message naming the new spelling."""

    def __init__(self, option_strings: list[str], dest: str, new: str = "", **kwargs: Any):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any,
                 option_string: str | None = None) -> None:
        parser.exit(2, f"{parser.prog}: {option_string} is now {self.new} (where samplers "
                       f"and learner run: {', '.join(RUNNERS)})\n")


def parser() -> argparse.ArgumentParser:
    """The `metagraph` command's argument parser."""
    top = argparse.ArgumentParser(prog="metagraph", description=__doc__.splitlines()[0])
    commands = top.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="train an agent on an environment")
    train.add_argument("env_id")
    train.add_argument("--algo", default=None,
                       help=f"{', '.join(BUILTIN)} (reweight is the default), or "
                            f"MODULE:ATTRIBUTE / PATH.py:ATTRIBUTE naming your own Algorithm")
    train.add_argument("--env-module", default=None, metavar="SOURCE",
                       help="your own environment: a module or .py file that registers "
                            "ENV_ID when imported (components.envs.register); recorded in the "
                            "run, and imported again by evaluate/export/play/--resume only "
                            "when named again or with --trust-code")
    train.add_argument("--env-kwargs", action="append", metavar="KEY=VALUE",
                       help="a keyword argument of the environment (JSON value), e.g. "
                            "rows=5; recorded in the run (config.json's env_kwargs), so "
                            "evaluate/export/play make the same environment")
    train.add_argument("--trust-code", action="store_true",
                       help="with --resume: import the algorithm file the run names (only "
                            "if unchanged since training)")
    train.add_argument("--out", required=True, help="run directory")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--steps", type=int, default=1_000_000, help="environment steps")
    train.add_argument("--seeds", type=int, default=1,
                       help="train seeds S..S+K-1 at once in one executable (vmap)")
    train.add_argument("--resume", action="store_true", help="continue from DIR's checkpoint")
    train.add_argument("--runner", choices=RUNNERS, default="local",
                       help="where samplers run: this process in turn with the learner "
                            "(local), threads of this process beside it (pipeline), or Ray "
                            "actors")
    train.add_argument("--backend", action=_Renamed, new="--runner", help=argparse.SUPPRESS)
    train.add_argument("--num-samplers", type=int, default=None,
                       help="K samplers feeding one learner (algorithms with a distributed "
                            "form; default 2 with --runner ray or pipeline, or --algo impala)")
    train.add_argument("--batches-per-request", type=int, default=1, metavar="N",
                       help="with --runner ray: N batches per call of each sampler actor "
                            "(amortises Ray's cost per call; more policy lag)")
    train.add_argument("--address", default=None,
                       help="Ray cluster to join ('auto': this machine's); default: start one")
    train.add_argument("--eval-every", type=int, default=None, metavar="N",
                       help="evaluate the deterministic policy every N environment steps, on "
                            "environments of its own (rows get eval_return_mean)")
    train.add_argument("--eval-episodes", type=int, default=10, metavar="K",
                       help="episodes per evaluation")
    train.add_argument("--save-best", action="store_true",
                       help="with --eval-every: keep the best evaluated state in DIR/best.npz")
    train.add_argument("--video-every", type=int, default=None, metavar="N",
                       help="render an episode every N environment steps into "
                            "DIR/videos/ (beside training, in a process of its own)")
    train.add_argument("--track", action="store_true",
                       help="log scalars, config and curve to Weights & Biases (the track "
                            "extra; WANDB_MODE=offline writes DIR/wandb/ for `wandb sync`)")
    train.add_argument("--wandb-project", default="metagraph", metavar="NAME")
    train.add_argument("--executor", choices=EXECUTORS, default="xla",
                       help="how the learner's graph runs: compiled (xla), or op by op "
                            "without jit for debugging (eager; slow)")
    train.add_argument("--device", default=None, metavar="NAME",
                       help="where the learner's programs run: cpu, gpu, gpu:1 ... (default: "
                            "JAX's default device, the accelerator where there is one)")
    train.add_argument("--actor-device", default=None, metavar="NAME",
                       help="where the samplers' rollouts run (distributed runs; default: "
                            "cpu with --runner pipeline, else JAX's default device)")
    train.add_argument("--config", help="agent config, TOML or JSON")
    train.add_argument("--set", action="append", metavar="KEY=VALUE", help="config override")
    train.set_defaults(run=train_command)
    evaluate = commands.add_parser("evaluate", help="evaluate a trained run's policy")
    evaluate.add_argument("run_dir")
    evaluate.add_argument("--episodes", type=int, default=100)
    evaluate.add_argument("--json", action="store_true")
    evaluate.add_argument("--stochastic", action="store_true",
                          help="sample actions from the policy (its `act` API), not greedy")
    evaluate.add_argument("--best", action="store_true",
                          help="the best evaluated state (DIR/best.npz, train --save-best)")
    evaluate.add_argument("--video", default=None, metavar="FILE",
                          help="also render episodes of the policy to FILE (.mp4 or .gif)")
    evaluate.add_argument("--video-episodes", type=int, default=1, metavar="N")
    evaluate.add_argument("--opponent", default=None, metavar="SPEC",
                          help="a game's run: play against OpenSpiel's bots, `random` or "
                               "`mcts:N` (UCT c=2, N simulations, random rollouts), or "
                               "another run of the game, `run:DIR`; random when a game's "
                               "run names none")
    evaluate.add_argument("--games", type=int, default=200, metavar="N",
                          help="with --opponent: games to play (even; half as first player)")
    evaluate.add_argument("--seed", type=int, default=12345,
                          help="a game's run: the match's seed (the agent's search key, the "
                               "bots' seeds seed+i): a long match splits into processes of "
                               "different seeds")
    _acting_overrides(evaluate)
    _run_code_options(evaluate, "evaluate")
    evaluate.set_defaults(run=evaluate_command)
    play = commands.add_parser("play", help="play a game's run yourself, in the terminal")
    play.add_argument("run_dir")
    play.add_argument("--second", action="store_true",
                      help="the agent moves first (you are player 1, o)")
    play.add_argument("--seed", type=int, default=0, help="the agent's search or sampling key")
    _acting_overrides(play)
    _run_code_options(play, "play")
    play.set_defaults(run=play_command)
    export = commands.add_parser(
        "export", help="write a run's acting API alone, for backends.xla.load")
    export.add_argument("run_dir")
    export.add_argument("-o", "--output", default="policy.mgx")
    export.add_argument("--stochastic", action="store_true",
                        help="export `act(observation, key)` (sampled actions), not greedy")
    export.add_argument("--format", choices=("mgx", "onnx"), default="mgx",
                        help="mgx: for backends.xla.load; onnx: an ONNX model (jax2onnx, "
                             "the onnx extra), for onnxruntime")
    export.add_argument("--seed-index", type=int, default=0,
                        help="with a run of several seeds: which one (0 = the first)")
    _run_code_options(export, "export")
    export.set_defaults(run=export_command)
    plot = commands.add_parser("plot", help="draw several runs' learning curves on one figure")
    plot.add_argument("runs", nargs="+", help="run directories (seeds of one algorithm and "
                                              "environment become a mean with a band)")
    plot.add_argument("-o", "--output", default="plot.png")
    plot.add_argument("--window", type=int, default=100, help="episodes in the rolling mean")
    plot.add_argument("--title", default=None)
    plot.set_defaults(run=plot_command)
    draw = commands.add_parser(
        "graph", help="draw a meta-graph (.svg, .png, .pdf, .dot, or .html: the explorer)")
    draw.add_argument("target", help="MODULE:OBJECT or PATH.py:OBJECT")
    draw.add_argument("-o", "--output", default="graph.svg")
    draw.add_argument("--depth", type=int, default=None, help="collapse deeper components")
    draw.add_argument("--focus", default=None, help="only what this root API reaches")
    draw.add_argument("--no-params", action="store_true", help="hide parameter counts")
    draw.add_argument("--tb", action="store_true", help="top-down instead of left-to-right")
    draw.set_defaults(run=graph_command)
    return top


def main(argv: list[str] | None = None) -> None:
    """Run the `metagraph` command with `argv` (default: the process's arguments)."""
    args = parser().parse_args(argv)
    try:
        args.run(args)
    except (UsageError, ValueError, OSError, MissingExtraError) as error:
        # ValueError covers the library's own (AlgorithmError, LoadError, SpaceError, config
        # checks), MissingExtraError names the extra to install; a user's own exception of
        # another type keeps its traceback
        if _from_user_code(error):
            raise
        print(f"metagraph {args.command}: {error}", file=sys.stderr)
        raise SystemExit(2) from None


def _from_user_code(error: BaseException) -> bool:
    """Whether `error` was raised in code outside this library (a user's component or
    algorithm), whose traceback the user needs."""
    tb = error.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    if last is None:
        return False
    library = Path(__file__).resolve().parents[2]
    inside = Path(last).resolve()
    standard = Path(sysconfig.get_paths()["stdlib"]).resolve()  # pathlib, os: raised for us
    return library not in inside.parents and standard not in inside.parents \
        and "site-packages" not in inside.parts and not inside.name.startswith("<")


if __name__ == "__main__":
    main()
