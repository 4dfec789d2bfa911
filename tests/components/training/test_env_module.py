"""A user's own environment from the command line (issue 35): `metagraph train Catch-v0
--env-module catch/catch_env.py` trains bsuite's Catch written in one header (the example
outside the package), the run records the module and its SHA-256, and `evaluate` imports it
again only when named again or with `--trust-code`, and only unchanged."""

import json
import shutil
from pathlib import Path

from command_line import metagraph

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
