"""docs/architecture.md's table "To add X, touch these files" matches the code: every file it
names exists, and every built-in algorithm of the registry has the agent and config files its
first row says an algorithm is made of."""

import re

from public_surface import ROOT

from components.training.registry import BUILTIN


def table() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text()
    start = text.index("## To add X, touch these files")
    return text[start:text.index("\n## ", start + 1)]


def test_every_file_the_table_names_exists():
    named = [path for path in re.findall(r"`([\w/.]+\.py)`", table()) if "/" in path]
    assert named, "the table names no files"
    missing = [path for path in named if not (ROOT / path).exists()]
    assert not missing, missing


def test_every_builtin_algorithm_has_the_files_of_the_first_row():
    for name in BUILTIN:
        for kind in ("agent", "config"):
            assert (ROOT / "components" / "agents" / f"{name}_{kind}.py").exists(), (name, kind)
    assert "(4 files)" in table()
