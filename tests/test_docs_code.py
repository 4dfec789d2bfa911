"""The code in the docs runs: the complete component of docs/writing-components.md and the
test of docs/testing-components.md are executed as written, and so are the examples of
docs/components.md, in order, in one namespace."""

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def python_blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.S)


@pytest.mark.parametrize("backend", ["xla", "eager"])
def test_documented_component_passes_the_documented_test(backend):
    namespace: dict = {}
    exec(python_blocks("writing-components.md")[-1], namespace)  # "Complete code"
    test_code = python_blocks("testing-components.md")[0]
    exec(test_code, namespace)
    namespace["test_normalizer_matches_numpy"](backend)


def test_component_library_examples_run():
    namespace: dict = {}
    for block in python_blocks("components.md"):
        exec(block, namespace)
