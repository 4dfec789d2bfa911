"""The `metagraph` command.

    metagraph train ENV_ID --algo {reweight,ppo,dqn,impala} --out DIR [--seed S] [--seeds K]
                   [--steps N] [--resume]
                   [--config FILE.toml|json] [--set KEY=VALUE ...]
                   [--backend {local,ray}] [--num-samplers K] [--address auto]
    metagraph evaluate DIR [--episodes 100] [--json]
    metagraph graph MODULE:OBJECT -o agent.svg [--depth N] [--focus API] [--no-params] [--tb]

OBJECT is a `MetaGraph`, or a function of no arguments returning a `MetaGraph` or a pair
(component, input_spaces) to build.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from metagraph.build import build
from metagraph.component import Component
from metagraph.graph import MetaGraph


def resolve_graph(target: str) -> MetaGraph:
    """The meta-graph named by MODULE:OBJECT."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise SystemExit(f"metagraph graph: expected MODULE:OBJECT, got {target!r}")
    sys.path.insert(0, ".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SystemExit(f"metagraph graph: cannot import {module_name!r}: {error}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise SystemExit(f"metagraph graph: {module_name} has no {attr!r}")
        obj = getattr(obj, part)
    if callable(obj) and not isinstance(obj, MetaGraph | Component):
        obj = obj()
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], Component):
        obj = build(obj[0], obj[1])
    if not isinstance(obj, MetaGraph):
        raise SystemExit(f"metagraph graph: {target} is a {type(obj).__name__}; expected a "
                         f"MetaGraph, or a function returning one or (component, input_spaces)")
    return obj


def graph_command(args: argparse.Namespace) -> None:
    graph = resolve_graph(args.target)
    path = graph.render(args.output, depth=args.depth, focus=args.focus,
                        show_params=not args.no_params, rankdir="TB" if args.tb else "LR")
    print(f"wrote {path}")


ALGOS = ("reweight", "ppo", "dqn", "impala")


def config_values(args: argparse.Namespace) -> dict[str, Any]:
    """The agent's config from --config (TOML or JSON) and --set KEY=VALUE (JSON values)."""
    values: dict[str, Any] = {}
    if args.config:
        path = Path(args.config)
        try:
            text = path.read_text()
            values = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except (OSError, ValueError) as error:
            raise SystemExit(f"metagraph train: cannot read --config {path}: {error}") from None
    for item in args.set or []:
        key, sep, raw = item.partition("=")
        if not sep:
            raise SystemExit(f"metagraph train: --set expects KEY=VALUE, got {item!r}")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw
    return values


def train_command(args: argparse.Namespace) -> None:
    from components.agents import trainer

    if args.seeds < 1:
        raise SystemExit(f"metagraph train: --seeds must be >= 1, got {args.seeds}")
    try:
        config = trainer.algorithm(args.algo).config_class.from_dict(config_values(args))
    except (TypeError, ValueError) as error:
        raise SystemExit(f"metagraph train: {error}") from None
    try:
        metrics = trainer.train(args.env_id, args.out, args.algo, config, seed=args.seed,
                                steps=args.steps, resume=args.resume,
                                seeds=args.seeds if args.seeds > 1 else None,
                                backend=args.backend, num_samplers=args.num_samplers,
                                address=args.address)
    except ValueError as error:
        raise SystemExit(f"metagraph train: {error}") from None
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
          f"curve.png, metrics.jsonl, config.json, checkpoint.npz")


def evaluate_command(args: argparse.Namespace) -> None:
    from components.agents import trainer

    result = trainer.evaluate(args.run_dir, episodes=args.episodes)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['episodes']} episodes: return {result['return_mean']:.2f} "
              f"± {result['return_std']:.2f}")
        if "return_mean_per_seed" in result:
            print("per seed:", ", ".join(f"{r:.2f}" for r in result["return_mean_per_seed"]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="metagraph", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="train an agent on a native environment")
    train.add_argument("env_id")
    train.add_argument("--algo", choices=ALGOS, default="reweight")
    train.add_argument("--out", required=True, help="run directory")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--steps", type=int, default=1_000_000, help="environment steps")
    train.add_argument("--seeds", type=int, default=1,
                       help="train seeds S..S+K-1 at once in one executable (vmap)")
    train.add_argument("--resume", action="store_true", help="continue from DIR's checkpoint")
    train.add_argument("--backend", choices=("local", "ray"), default="local",
                       help="where samplers run: this process, or Ray actors")
    train.add_argument("--num-samplers", type=int, default=None,
                       help="K samplers feeding one learner (impala, reweight; default 2 with "
                            "--backend ray or --algo impala)")
    train.add_argument("--address", default=None,
                       help="Ray cluster to join ('auto': this machine's); default: start one")
    train.add_argument("--config", help="agent config, TOML or JSON")
    train.add_argument("--set", action="append", metavar="KEY=VALUE", help="config override")
    train.set_defaults(run=train_command)
    evaluate = commands.add_parser("evaluate", help="evaluate a trained run's policy")
    evaluate.add_argument("run_dir")
    evaluate.add_argument("--episodes", type=int, default=100)
    evaluate.add_argument("--json", action="store_true")
    evaluate.set_defaults(run=evaluate_command)
    draw = commands.add_parser("graph", help="draw a meta-graph (.svg, .png, .pdf, .dot)")
    draw.add_argument("target", help="MODULE:OBJECT")
    draw.add_argument("-o", "--output", default="graph.svg")
    draw.add_argument("--depth", type=int, default=None, help="collapse deeper components")
    draw.add_argument("--focus", default=None, help="only what this root API reaches")
    draw.add_argument("--no-params", action="store_true", help="hide parameter counts")
    draw.add_argument("--tb", action="store_true", help="top-down instead of left-to-right")
    draw.set_defaults(run=graph_command)
    args = parser.parse_args(argv)
    args.run(args)


if __name__ == "__main__":
    main()
