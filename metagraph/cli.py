"""The `metagraph` command.

    metagraph graph MODULE:OBJECT -o agent.svg [--depth N] [--focus API] [--no-params] [--tb]

OBJECT is a `MetaGraph`, or a function of no arguments returning a `MetaGraph` or a pair
(component, input_spaces) to build.
"""

from __future__ import annotations

import argparse
import importlib
import sys
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="metagraph", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
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
