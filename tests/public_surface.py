"""The public surface of the three packages, read with `ast` (nothing is imported): a module is
public when no part of its path starts with `_` (`__init__.py` aside); a class or function is
public when its name does not start with `_`, and so is a public method of a public class."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("metagraph", "backends", "components")

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def public_modules() -> dict[str, Path]:
    """Dotted module name -> source file, for every public module of the packages (an empty
    package, with nothing to document, left out)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if any(part.startswith("_") for part in parts[:-1]) or (
                    parts[-1].startswith("_") and parts[-1] != "__init__"):
                continue
            if parts[-1] == "__init__" and not path.read_text().strip():
                continue  # an empty package: nothing to document
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _variant(node: Definition) -> bool:
    """An `@overload` signature or a property's setter/deleter: documented by its main def."""
    return any((isinstance(d, ast.Name) and d.id == "overload")
               or (isinstance(d, ast.Attribute) and d.attr in ("overload", "setter", "deleter"))
               for d in getattr(node, "decorator_list", ()))


def public_definitions(body: list[ast.stmt], prefix: str = "") -> Iterator[tuple[str, Definition]]:
    """(qualified name, node) of each public class and function in `body`, methods included."""
    for node in body:
        if not isinstance(node, Definition) or node.name.startswith("_") or _variant(node):
            continue
        yield prefix + node.name, node
        if isinstance(node, ast.ClassDef):
            yield from public_definitions(node.body, f"{prefix}{node.name}.")
