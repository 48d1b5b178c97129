"""hexzero installs as one package: the wheel puts the single name ``hexzero`` (and its
command) into a fresh virtual environment, and it runs from any directory with no checkout
and no hexzero.toml (the defaults are declared in the code)."""

import os
import subprocess

import pytest

from tests.installing import PACKAGE_SOURCES, ROOT, Venv, build_wheel

#: the folders of the repository, which install only as hexzero.mctsfw, hexzero.games, ...
FOLDERS = ("mctsfw", "games", "nets", "plugins", "cli")

#: loads every built-in plugin and says where each hexzero module came from, and which
#: modules were loaded under a folder's own name
ORIGINS = """
import sys
from hexzero import mctsfw
mctsfw.default_registries()
import hexzero.cli
for name, module in sorted(sys.modules.items()):
    top = name.split(".")[0]
    if top in {folders!r}:
        print("stray", name)
    elif top == "hexzero":
        print("module", name, getattr(module, "__file__", None))
""".format(folders=FOLDERS)


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh virtual environment with the hexzero wheel and the example plugin's wheel
    installed, and what each added to site-packages."""
    work = tmp_path_factory.mktemp("install")
    wheel = build_wheel(ROOT, work / "hexzero", PACKAGE_SOURCES)
    plugin = build_wheel(ROOT / "examples" / "tictactoe", work / "plugin")
    env = Venv(work / "venv")
    before = set(os.listdir(env.site))
    scripts_before = set(os.listdir(env.path / "bin"))
    env.install(wheel)
    env.added = sorted(set(os.listdir(env.site)) - before)
    env.scripts_added = sorted(set(os.listdir(env.path / "bin")) - scripts_before)
    env.install(plugin)
    env.reach_dependencies()
    return env


def run(venv, cwd, *args, command="hexzero"):
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP", "VIRTUAL_ENV")}
    return subprocess.run([str(venv.path / "bin" / command), *args], cwd=cwd, env=environment, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_the_wheel_installs_only_the_name_hexzero(venv):
    assert venv.added == ["hexzero", "hexzero-0.1.0.dist-info"]
    assert venv.scripts_added == ["hexzero"]
    installed = venv.site / "hexzero"
    for name in FOLDERS[:-1]:
        assert (installed / name / "__init__.py").is_file()
    assert (installed / "cli.py").is_file()
    assert (venv.site / "hexzero-0.1.0.dist-info" / "top_level.txt").read_text().split() == ["hexzero"]


def test_every_module_comes_from_the_install_under_hexzero(venv, tmp_path):
    result = run(venv, tmp_path, "-c", ORIGINS, command="python")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert not [line for line in lines if line.startswith("stray")]
    modules = dict(line.split()[1:] for line in lines if line.startswith("module"))
    assert {"hexzero.mctsfw.search.object_search", "hexzero.games.hex", "hexzero.nets.anet", "hexzero.plugins.gtp",
            "hexzero.cli"} <= set(modules)
    assert all(path.startswith(str(venv.site)) for path in modules.values()), modules


def test_the_installed_command_runs_from_another_directory(venv, tmp_path):
    assert not (tmp_path / "hexzero.toml").exists()
    listing = run(venv, tmp_path, "plugins")
    assert listing.returncode == 0, listing.stderr
    assert "from hexzero.games.hex" in listing.stdout and "anet" in listing.stdout and "topp" in listing.stdout
    played = run(venv, tmp_path, "play", "--p1", "mcts", "--p2", "random", "--no-display",
                 "--search-games", "30", "--seed", "1")
    assert played.returncode == 0, played.stderr
    assert "Hex(size=5)" in played.stdout and "game 1:" in played.stdout
    trained = run(venv, tmp_path, "train", "--episodes", "1", "--no-progress", "--set", "games.hex.size=3",
                  "--set", "train.search_games=4", "--set", "train.checkpoints=2", "--set", "train.minibatch=8",
                  "--set", "nets.anet.hidden_layers=[4]")
    assert trained.returncode == 0, trained.stderr
    assert (tmp_path / "runs" / "hex5" / "config.toml").is_file()  # the default run_dir, relative to the cwd
    assert sorted(p.name for p in (tmp_path / "runs" / "hex5" / "checkpoints").iterdir()) == [
        "anet_ep0000.keras", "anet_ep0001.keras"]


def test_a_third_party_plugin_installed_beside_it_is_found_by_its_entry_point(venv, tmp_path):
    listing = run(venv, tmp_path, "plugins")
    assert listing.returncode == 0, listing.stderr
    assert "tictactoe      from tictactoe" in listing.stdout
    played = run(venv, tmp_path, "play", "--game", "tictactoe", "--p1", "random", "--p2", "mcts", "--no-display",
                 "--search-games", "20", "--seed", "2")
    assert played.returncode == 0, played.stderr
    assert "game 1:" in played.stdout


def test_python_m_hexzero_is_the_command(venv, tmp_path):
    result = run(venv, tmp_path, "-m", "hexzero", "plugins", command="python")
    assert result.returncode == 0, result.stderr
    assert "from hexzero.games.hex" in result.stdout
