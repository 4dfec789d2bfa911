"""The documentation site builds with warnings as errors (`mkdocs build --strict`: broken links
and anchors, pages missing from the nav, docstrings mkdocstrings cannot parse), and its API
reference has a section for every public module."""

import re
import subprocess
import sys

from public_surface import ROOT, public_modules


def test_every_public_module_is_in_the_api_reference():
    referenced = set()
    for page in (ROOT / "docs" / "reference").glob("*.md"):
        referenced.update(re.findall(r"^::: (\S+)$", page.read_text(), re.M))
    modules = set(public_modules())
    assert not modules - referenced, (
        f"give these a `::: MODULE` in docs/reference/: {sorted(modules - referenced)}")
    assert not referenced - modules, (
        f"docs/reference/ names modules that are gone: {sorted(referenced - modules)}")

def test_docs_build_strict(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "reference" / "metagraph" / "index.html").exists()


def test_every_install_command_has_one_spelling():
    """README and the docs install the package one way each, from the clone: `pip install .`,
    `pip install -e .`, and an extra as `pip install -e ".[EXTRA]"`; never by name from an
    index (`metagraph-rl[...]`), which this project does not publish to."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text()
        assert "metagraph-rl[" not in text, page
        for command in re.findall(r"pip install (?:-e )?[\"']?\.[^\s`]*", text):
            assert command in ("pip install .", "pip install -e .") or re.fullmatch(
                r'pip install -e "\.\[\w+\]"', command), f"{page.name}: {command}"
