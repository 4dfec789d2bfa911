"""The `metagraph` command.

    metagraph train ENV_ID --algo ALGO --out DIR [--seed S] [--seeds K] [--steps N] [--resume]
                   [--config FILE.toml|json] [--set KEY=VALUE ...]
                   [--runner {local,ray}] [--num-samplers K] [--batches-per-request N]
                   [--address auto] [--executor {xla,eager}]
    metagraph evaluate DIR [--episodes 100] [--json]
    metagraph graph TARGET -o agent.svg [--depth N] [--focus API] [--no-params] [--tb]

ALGO is a built-in algorithm (reweight, ppo, dqn, sac, impala) or MODULE:ATTRIBUTE /
PATH.py:ATTRIBUTE naming a subclass of `components.training.Algorithm` in the user's own code.
TARGET is MODULE:OBJECT or PATH.py:OBJECT: a `MetaGraph`, or a function of no arguments
returning a `MetaGraph` or a pair (component, input_spaces) to build.

Every error that is the user's to fix is one line on standard error and exit status 2 (1 for
errors from the user's own code, with its traceback; 130 after Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from components.training.distributed import RUNNERS
from components.training.executors import EXECUTORS
from components.training.registry import BUILTIN
from metagraph.build import build
from metagraph.component import Component
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
    for item in args.set or []:
        key, sep, raw = item.partition("=")
        if not sep:
            raise UsageError(f"--set expects KEY=VALUE, got {item!r}")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw
    return values


def train_command(args: argparse.Namespace) -> None:
    """`metagraph train`: train (or resume) a run directory from the parsed arguments."""
    from components.training.registry import resolve
    from components.training.trainer import train

    if args.seeds < 1:
        raise UsageError(f"--seeds must be >= 1, got {args.seeds}")
    if args.resume:
        config = None  # the run directory's own
    else:
        try:
            config = resolve(args.algo).config(args.env_id, config_values(args))
        except TypeError as error:
            raise UsageError(str(error)) from None
    try:
        metrics = train(args.env_id, args.out, args.algo, config, seed=args.seed,
                        steps=args.steps, resume=args.resume,
                        seeds=args.seeds if args.seeds > 1 else None, runner=args.runner,
                        num_samplers=args.num_samplers, address=args.address,
                        batches_per_request=args.batches_per_request, executor=args.executor)
    except KeyboardInterrupt:
        checkpoint = Path(args.out) / "checkpoint.npz"
        saved = f"{checkpoint} holds the state after the last whole call; continue with " \
                f"`metagraph train {args.env_id} --out {args.out} --resume`" \
            if checkpoint.exists() else "no checkpoint was written yet"
        print(f"\nmetagraph train: interrupted; {saved}", file=sys.stderr)
        raise SystemExit(130) from None
    last = metrics[-1] if metrics else {}
    mean = last.get("episode_return_mean")
    print(f"{len(metrics)} iterations, {last.get('env_steps', 0):,} steps, "
          f"{last.get('wall_time', 0):.1f} s; last mean return "
          f"{mean if mean is None else round(mean, 1)}; wrote {args.out}/graph.svg, "
          f"graph.html, curve.png, metrics.jsonl, config.json, checkpoint.npz")


def evaluate_command(args: argparse.Namespace) -> None:
    """`metagraph evaluate RUN_DIR`: greedy episodes of the run's checkpoint, printed (as JSON
    with `--json`)."""
    from components.training.evaluation import evaluate

    if args.episodes < 1:
        raise UsageError(f"--episodes must be >= 1, got {args.episodes}")
    result = evaluate(args.run_dir, episodes=args.episodes)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['episodes']} episodes: return {result['return_mean']:.2f} "
              f"± {result['return_std']:.2f}")
        if "return_mean_per_seed" in result:
            print("per seed:", ", ".join(f"{r:.2f}" for r in result["return_mean_per_seed"]))


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
    train.add_argument("--algo", default="reweight",
                       help=f"{', '.join(BUILTIN)}, or MODULE:ATTRIBUTE / "
                            f"PATH.py:ATTRIBUTE naming your own Algorithm")
    train.add_argument("--out", required=True, help="run directory")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--steps", type=int, default=1_000_000, help="environment steps")
    train.add_argument("--seeds", type=int, default=1,
                       help="train seeds S..S+K-1 at once in one executable (vmap)")
    train.add_argument("--resume", action="store_true", help="continue from DIR's checkpoint")
    train.add_argument("--runner", choices=RUNNERS, default="local",
                       help="where samplers run: this process, or Ray actors")
    train.add_argument("--backend", action=_Renamed, new="--runner", help=argparse.SUPPRESS)
    train.add_argument("--num-samplers", type=int, default=None,
                       help="K samplers feeding one learner (algorithms with a distributed "
                            "form; default 2 with --runner ray or --algo impala)")
    train.add_argument("--batches-per-request", type=int, default=1, metavar="N",
                       help="with --runner ray: N batches per call of each sampler actor "
                            "(amortises Ray's cost per call; more policy lag)")
    train.add_argument("--address", default=None,
                       help="Ray cluster to join ('auto': this machine's); default: start one")
    train.add_argument("--executor", choices=EXECUTORS, default="xla",
                       help="how the learner's graph runs: compiled (xla), or op by op "
                            "without jit for debugging (eager; slow)")
    train.add_argument("--config", help="agent config, TOML or JSON")
    train.add_argument("--set", action="append", metavar="KEY=VALUE", help="config override")
    train.set_defaults(run=train_command)
    evaluate = commands.add_parser("evaluate", help="evaluate a trained run's policy")
    evaluate.add_argument("run_dir")
    evaluate.add_argument("--episodes", type=int, default=100)
    evaluate.add_argument("--json", action="store_true")
    evaluate.set_defaults(run=evaluate_command)
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
    except (UsageError, ValueError, OSError) as error:
        # ValueError covers the library's own (AlgorithmError, LoadError, SpaceError, config
        # checks); a user's own exception of another type keeps its traceback
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
    return library not in inside.parents and "site-packages" not in inside.parts \
        and not inside.name.startswith("<")


if __name__ == "__main__":
    main()
