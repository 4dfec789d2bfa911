"""The code in the docs runs: the complete component of docs/writing-components.md and the
test of docs/testing-components.md are executed as written, and so are the examples of
docs/components.md, docs/customising-agents.md and docs/writing-an-algorithm.md, in order,
in one namespace; the commands of customising-agents.md (and, marked slow, those of
writing-an-algorithm.md) run as typed (`command_line.metagraph`) on the module that page
writes."""

import json
import re
import shlex
from pathlib import Path

import pytest
from command_line import metagraph

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


def run_page_commands(page: str, blocks: list[str], module: str, where: Path) -> None:
    """Save the page's blocks that start with `# <module>` as `where/<module>` and run the
    page's three `metagraph` commands there, as typed."""
    (where / module).write_text(
        "\n".join(block for block in blocks if block.startswith(f"# {module}")))
    bash = re.findall(r"```bash\n(.*?)```", (DOCS / page).read_text(), re.S)
    commands = [line for block in bash for line in block.splitlines()
                if line.startswith("metagraph ")]
    assert len(commands) == 3
    for command in commands:
        metagraph(where, *shlex.split(command)[1:])


def test_customising_an_agent_runs_from_python_and_from_the_command_line(tmp_path):
    blocks = python_blocks("customising-agents.md")
    namespace: dict = {}
    for block in blocks:
        exec(block, namespace)
    run_page_commands("customising-agents.md", blocks, "my_ppo.py", tmp_path)
    run = tmp_path / "runs" / "normalised"
    assert json.loads((run / "config.json").read_text())["algo"] == \
        f"{tmp_path / 'my_ppo.py'}:NormalisedPPO"
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["env_steps"] == 2048


def test_writing_an_algorithm_runs_and_learns():
    """docs/writing-an-algorithm.md: its A2C, written from the library's parts, trains on
    CartPole from Python and its greedy policy balances the pole (the page asserts it), and
    a policy built before its agent keeps the settings the page says."""
    namespace: dict = {}
    for block in python_blocks("writing-an-algorithm.md"):
        exec(block, namespace)
    rows, result = namespace["rows"], namespace["result"]
    assert rows[-1]["env_steps"] == 12_288
    assert result["return_mean"] > 50  # random actions: about 22; untrained greedy: about 9


@pytest.mark.slow
def test_writing_an_algorithm_commands_run(tmp_path):
    """The page's module, saved as my_a2c.py, through its commands."""
    run_page_commands("writing-an-algorithm.md", python_blocks("writing-an-algorithm.md"),
                      "my_a2c.py", tmp_path)
    relu = tmp_path / "runs" / "relu"
    rows = [json.loads(line) for line in (relu / "metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["env_steps"] == 4096
    saved = json.loads((relu / "config.json").read_text())
    assert saved["algo"].endswith("my_a2c.py:ReluA2C") and saved["config"]["hidden"] == [64, 64]


def test_training_from_python_runs_as_written():
    """docs/training.md's Python: a RunSpec trained with a callback, read back, resumed."""
    block = python_blocks("training.md")[0]
    assert "RunSpec.make" in block and "resume(out" in block
    exec(block, {"__name__": "training_page"})


def after_training_section() -> str:
    text = (DOCS / "training.md").read_text()
    return text[text.index("## After training"):]


def test_the_after_training_commands_and_python_run(tmp_path, monkeypatch):
    """docs/training.md "After training": its commands as typed, then its Python, in the
    directory they wrote."""
    import shutil

    section = after_training_section()
    bash = re.findall(r"```bash\n(.*?)```", section, re.S)[0]
    commands = [line for line in bash.splitlines() if line.startswith("metagraph ")]
    assert len(commands) == 7
    for command in commands:
        if "--format onnx" in command and not _importable("jax2onnx"):
            continue
        if ".mp4" in command and shutil.which("ffmpeg") is None:
            command = command.replace(".mp4", ".gif")
        metagraph(tmp_path, *shlex.split(command)[1:])
    for written in ("runs/cartpole/best.npz", "policy.mgx", "cartpole.png"):
        assert (tmp_path / written).is_file(), written
    assert any((tmp_path / name).is_file() for name in ("cartpole.mp4", "cartpole.gif"))
    monkeypatch.chdir(tmp_path)
    exec(re.findall(r"```python\n(.*?)```", section, re.S)[0], {})


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
