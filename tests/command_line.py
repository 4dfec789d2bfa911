"""Running the `metagraph` command in the test's process and reading a refusal."""

from __future__ import annotations

import pytest

from components.training import cli


def refusal(capsys: pytest.CaptureFixture, argv: list[str]) -> str:
    """The one line `metagraph ARGV` prints when it refuses (exit status 2)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err
