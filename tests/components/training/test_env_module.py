"""A user's own environment from the command line (issue 35): `metagraph train Catch-v0
--env-module catch/catch_env.py --env-kwargs rows=5 --env-kwargs columns=3` trains bsuite's
Catch written in one header (the example outside the package) on a 5x3 board; the run records
the module, its SHA-256 and the keyword arguments, and `evaluate`/`export` import the module
again only when named again, with `--trust-code` or when this user named that very file
before (its path and SHA-256: `named_modules.py`), only unchanged, and make the recorded
environment (15 observations, where the default board has 50). Keyword arguments Catch does
not take, values out of its range, or `--env-kwargs` on `--resume` are refused naming them."""

import json
import shutil
from pathlib import Path

import numpy as np
from command_line import metagraph, refusal

ROOT = Path(__file__).resolve().parents[3]
SMALL = ["--steps", "64", "--set", "num_envs=2", "--set", "num_steps=16", "--set", "epochs=1",
         "--set", "minibatches=1", "--set", "hidden=[8]"]


def test_a_users_environment_trains_with_its_arguments_and_is_imported_again_only_when_named(
        tmp_path, capsys, monkeypatch):
    shutil.copytree(ROOT / "examples" / "envs" / "catch", tmp_path / "catch")
    module = tmp_path / "catch" / "catch_env.py"
    named = ["--env-module", "catch/catch_env.py"]
    done = metagraph(tmp_path, "train", "Catch-v0", "--algo", "ppo", "--out", "run", *named,
                     "--env-kwargs", "rows=5", "--env-kwargs", "columns=3", *SMALL)
    assert "iterations" in done.stdout
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["env_id"] == "Catch-v0" and saved["env_module"] == str(module)
    assert len(saved["env_module_sha256"]) == 64
    assert saved["config"]["env_kwargs"] == {"rows": 5, "columns": 3}
    # the user named this very file (path and SHA-256) when training: opened without asking
    done = metagraph(tmp_path, "evaluate", "run", "--episodes", "2")
    assert "2 episodes: return" in done.stdout
    # as a received run (a user who never named the module, a fresh process): imported only
    # when asked
    monkeypatch.setenv("METAGRAPH_NAMED_MODULES", str(tmp_path / "someone_else.json"))
    refused = metagraph(tmp_path, "evaluate", "run", "--episodes", "2", check=False,
                        fresh=True)
    assert refused.returncode == 2 and "names your environment module" in refused.stderr
    # from Python, after the user imported the module themselves (Catch-v0 registered in this
    # process): load(run) takes it, without naming it again
    from components.training import load

    assert load(tmp_path / "run").env_id == "Catch-v0"
    for given in (named, ["--trust-code"]):
        done = metagraph(tmp_path, "evaluate", "run", "--episodes", "2", *given)
        assert "2 episodes: return" in done.stdout
    metagraph(tmp_path, "export", "run", "-o", "policy.mgx", *named)
    from backends.xla import load as load_exported

    policy = load_exported(tmp_path / "policy.mgx")
    assert np.asarray(policy(np.zeros((1, 15), np.float32))).shape == (1,)  # a 5x3 board
    other = metagraph(tmp_path, "evaluate", "run", "--env-module", "elsewhere.py", check=False)
    assert other.returncode == 2 and "not elsewhere.py" in other.stderr

    bad, absolute = tmp_path / "bad", ["--env-module", str(module)]
    for given, expected in (("size=3", "env_kwargs {'size': 3}: Catch-v0"),
                            ("rows=1", "env_kwargs {'rows': 1}: Catch-v0"),
                            ("rows", "--env-kwargs expects KEY=VALUE, got 'rows'")):
        said = refusal(capsys, ["train", "Catch-v0", "--algo", "ppo", "--out", str(bad),
                                *absolute, "--env-kwargs", given, *SMALL])
        assert expected in said and not bad.exists(), said
    said = refusal(capsys, ["train", "Catch-v0", "--out", str(tmp_path / "run"), "--resume",
                            "--env-kwargs", "rows=6"])
    assert "keyword arguments it recorded" in said

    module.write_text(module.read_text() + "\n# changed after training\n")
    changed = metagraph(tmp_path, "evaluate", "run", "--trust-code", check=False)
    assert changed.returncode == 2 and "changed since the run" in changed.stderr


def test_an_unknown_environment_names_the_option_that_registers_one(tmp_path, capsys):
    said = refusal(capsys, ["train", "DeepSea-v0", "--out", str(tmp_path / "run")])
    assert "unknown environment 'DeepSea-v0'" in said and "--env-module" in said
    assert not (tmp_path / "run").exists()
