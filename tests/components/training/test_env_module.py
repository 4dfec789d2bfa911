"""A user's own environment from the command line (issue 35): `metagraph train Catch-v0
--env-module catch/catch_env.py` trains bsuite's Catch written in one header (the example
outside the package), the run records the module and its SHA-256, and `evaluate` imports it
again only when named again or with `--trust-code`, and only unchanged."""

import json
import shutil
from pathlib import Path

import numpy as np
from command_line import metagraph, refusal

ROOT = Path(__file__).resolve().parents[3]
SMALL = ["--steps", "64", "--set", "num_envs=2", "--set", "num_steps=16", "--set", "epochs=1",
         "--set", "minibatches=1", "--set", "hidden=[8]"]


def test_a_users_environment_trains_and_is_imported_again_only_when_named(tmp_path):
    shutil.copytree(ROOT / "examples" / "envs" / "catch", tmp_path / "catch")
    module = tmp_path / "catch" / "catch_env.py"
    done = metagraph(tmp_path, "train", "Catch-v0", "--algo", "ppo", "--out", "run",
                     "--env-module", "catch/catch_env.py", *SMALL)
    assert "iterations" in done.stdout
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["env_id"] == "Catch-v0" and saved["env_module"] == str(module)
    assert len(saved["env_module_sha256"]) == 64
    refused = metagraph(tmp_path, "evaluate", "run", "--episodes", "2", check=False)
    assert refused.returncode == 2 and "names your environment module" in refused.stderr
    for given in (["--env-module", "catch/catch_env.py"], ["--trust-code"]):
        done = metagraph(tmp_path, "evaluate", "run", "--episodes", "2", *given)
        assert "2 episodes: return" in done.stdout
    other = metagraph(tmp_path, "evaluate", "run", "--env-module", "elsewhere.py", check=False)
    assert other.returncode == 2 and "not elsewhere.py" in other.stderr
    module.write_text(module.read_text() + "\n# changed after training\n")
    changed = metagraph(tmp_path, "evaluate", "run", "--trust-code", check=False)
    assert changed.returncode == 2 and "changed since the run" in changed.stderr


def test_an_unknown_environment_names_the_option_that_registers_one(tmp_path):
    done = metagraph(tmp_path, "train", "DeepSea-v0", "--out", "run", check=False)
    assert done.returncode == 2 and "unknown environment 'DeepSea-v0'" in done.stderr
    assert "--env-module" in done.stderr
    assert not (tmp_path / "run").exists()


def test_the_environments_keyword_arguments_are_recorded_and_used_again(tmp_path, capsys):
    """`--env-kwargs rows=5 --env-kwargs columns=3` makes a 5x3 Catch (15 observations, where
    the default is 10x5): evaluate and export build the recorded environment again; an
    argument Catch does not take, a value out of its range, or `--env-kwargs` on `--resume`
    is refused naming it, with no run directory left."""
    shutil.copytree(ROOT / "examples" / "envs" / "catch", tmp_path / "catch")
    module = ["--env-module", "catch/catch_env.py"]
    metagraph(tmp_path, "train", "Catch-v0", "--algo", "ppo", "--out", "run", *module,
              "--env-kwargs", "rows=5", "--env-kwargs", "columns=3", *SMALL)
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["config"]["env_kwargs"] == {"rows": 5, "columns": 3}
    done = metagraph(tmp_path, "evaluate", "run", "--episodes", "2", *module)
    assert "2 episodes: return" in done.stdout
    metagraph(tmp_path, "export", "run", "-o", "policy.mgx", *module)
    from backends.xla import load as load_exported

    policy = load_exported(tmp_path / "policy.mgx")
    assert np.asarray(policy(np.zeros((1, 15), np.float32))).shape == (1,)  # a 5x3 board
    bad, module = tmp_path / "bad", ["--env-module", str(tmp_path / "catch" / "catch_env.py")]
    for given, expected in (("size=3", "env_kwargs {'size': 3}: Catch-v0"),
                            ("rows=1", "env_kwargs {'rows': 1}: Catch-v0"),
                            ("rows", "--env-kwargs expects KEY=VALUE, got 'rows'")):
        said = refusal(capsys, ["train", "Catch-v0", "--algo", "ppo", "--out", str(bad),
                                *module, "--env-kwargs", given, *SMALL])
        assert expected in said and not bad.exists(), said
    said = refusal(capsys, ["train", "Catch-v0", "--out", str(tmp_path / "run"), "--resume",
                            "--env-kwargs", "rows=6"])
    assert "keyword arguments it recorded" in said
