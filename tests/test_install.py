"""hexzero installs as a package: ``pip install .`` (not editable), then it runs from any
directory with no checkout and no hexzero.toml (the defaults are declared in the code)."""

import os
import subprocess
import sys

import pytest

from tests.installing import PACKAGE_SOURCES, ROOT, pip_install

PROJECT = ("mctsfw", "games", "nets", "plugins", "cli")

#: runs ``cli`` as the ``hexzero`` command does, with the checkout's editable install (if
#: this environment has one) out of reach, and says which project modules came from elsewhere
LAUNCH = """
import atexit, runpy, sys
target = sys.argv.pop(1)
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
def outside():
    found = sorted(n for n, m in list(sys.modules.items()) if n.split(".")[0] in {project!r}
                   and not (getattr(m, "__file__", None) or target).startswith(target))
    if found:
        print("loaded from outside the install:", found, file=sys.stderr)
        sys.stderr.flush()
        import os; os._exit(3)
atexit.register(outside)
sys.argv[0] = "hexzero"
runpy.run_module("cli", run_name="__main__", alter_sys=True)
""".format(project=PROJECT)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return pip_install(ROOT, tmp_path_factory.mktemp("install") / "site", PACKAGE_SOURCES)


def hexzero(site, cwd, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    env["PYTHONPATH"] = str(site)
    return subprocess.run(
        [sys.executable, "-P", "-c", LAUNCH, str(site), *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=300, stdin=subprocess.DEVNULL,
    )


def test_the_installed_package_has_its_command_and_modules(installed):
    for name in ("mctsfw", "games", "nets", "plugins"):
        assert (installed / name / "__init__.py").is_file()
    assert (installed / "cli.py").is_file()
    script = (installed / "bin" / "hexzero").read_text()
    assert "from cli import main" in script


def test_the_installed_command_runs_from_another_directory(installed, tmp_path):
    assert not (tmp_path / "hexzero.toml").exists()
    listing = hexzero(installed, tmp_path, "plugins")
    assert listing.returncode == 0, listing.stderr
    assert "hex " in listing.stdout and "anet" in listing.stdout and "topp" in listing.stdout
    played = hexzero(installed, tmp_path, "play", "--p1", "mcts", "--p2", "random", "--no-display",
                     "--search-games", "30", "--seed", "1")
    assert played.returncode == 0, played.stderr
    assert "Hex(size=5)" in played.stdout and "game 1:" in played.stdout
    trained = hexzero(installed, tmp_path, "train", "--episodes", "1", "--no-progress", "--set", "games.hex.size=3",
                      "--set", "train.search_games=4", "--set", "train.checkpoints=2", "--set", "train.minibatch=8",
                      "--set", "nets.anet.hidden_layers=[4]")
    assert trained.returncode == 0, trained.stderr
    assert (tmp_path / "runs" / "hex5" / "config.toml").is_file()  # the default run_dir, relative to the cwd
    assert sorted(p.name for p in (tmp_path / "runs" / "hex5" / "checkpoints").iterdir()) == [
        "anet_ep0000.keras", "anet_ep0001.keras"]
