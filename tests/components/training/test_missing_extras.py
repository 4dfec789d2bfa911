"""A missing optional dependency is one line naming the project's extra to install, exit
status 2, from every command that needs it (issue 35): AlphaZero without mctx (the `games`
extra), the Ray runner without Ray (`ray`)."""

import sys

import pytest
from command_line import refusal

import metagraph as mg
from components.search.game_search import require_mctx


def test_a_missing_extra_is_an_import_error_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mctx", None)  # as if not installed
    with pytest.raises(mg.MissingExtraError, match=r'pip install -e "\.\[games\]"'):
        require_mctx()
    with pytest.raises(ImportError):  # still an ImportError for code that expects one
        require_mctx()


@pytest.mark.parametrize(("module", "argv", "extra"), [
    ("mctx", ["train", "connect_four", "--algo", "alphazero", "--steps", "8"], "games"),
    ("ray", ["train", "CartPole-v1", "--algo", "impala", "--runner", "ray", "--steps", "8"],
     "ray"),
])
def test_the_command_line_names_the_extra_in_one_line(monkeypatch, capsys, tmp_path, module,
                                                      argv, extra):
    monkeypatch.setitem(sys.modules, module, None)
    message = refusal(capsys, [*argv, "--out", str(tmp_path / "run")])
    assert f'pip install -e ".[{extra}]"' in message, message
