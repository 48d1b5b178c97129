"""The plugin core: registries, unknown names, and a third-party game found by entry point."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import mctsfw
from mctsfw.plugin_manager import Registry, build_registries, default_registries, make_plugin_manager
from mctsfw.match import play_game

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_PACKAGE = ROOT / "examples" / "tictactoe"
EXAMPLE = EXAMPLE_PACKAGE / "tictactoe_plugin.py"


def install_fake_distribution(target: Path) -> Path:
    """``pip install examples/tictactoe`` into ``target``: its pyproject.toml declares the entry point."""
    from tests.installing import pip_install

    return pip_install(EXAMPLE_PACKAGE, target / "site")


def run_cli(*args, pythonpath=None, stdin=""):
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), *args], input=stdin, capture_output=True, text=True, env=env, timeout=120
    )


def test_the_readme_example_is_the_example_file():
    readme = (ROOT / "README.md").read_text()
    assert EXAMPLE.read_text().strip() in readme
    assert (EXAMPLE_PACKAGE / "pyproject.toml").read_text().strip() in readme


def test_builtin_plugins_register_through_the_hooks():
    registries = default_registries()
    assert {"hex", "nim"} <= set(registries.games.names())
    assert "uct" in registries.tree_policies.names()
    assert registries.games.provider("hex") == "games.hex"


def test_unknown_names_list_the_available_ones():
    with pytest.raises(mctsfw.UnknownPluginError) as error:
        mctsfw.make_game("hexx")
    message = str(error.value)
    assert "hex" in message and "nim" in message and 'Did you mean "hex"' in message
    with pytest.raises(mctsfw.UnknownPluginError, match="uct"):
        mctsfw.make_tree_policy("ucb")


def test_registry_rejects_duplicate_names():
    registry = Registry("game")

    class A:
        name = "same"

    class B:
        name = "same"

    registry.add(A, "first")
    with pytest.raises(mctsfw.DuplicatePluginError, match="first"):
        registry.add(B, "second")


def test_duplicate_names_across_plugins_fail_loudly():
    pm = make_plugin_manager(load_entrypoints=False)

    class Clash:
        @mctsfw.hookimpl
        def mctsfw_register_games(self):
            from games.hex import Hex

            return [type("OtherHex", (Hex,), {})]

    pm.register(Clash(), name="clash")
    with pytest.raises(mctsfw.DuplicatePluginError, match="hex.*registered twice"):
        build_registries(pm)


def test_misspelled_hook_fails_loudly():
    class Typo:
        @mctsfw.hookimpl
        def mctsfw_register_gmaes(self):
            return []

    pm = make_plugin_manager(load_entrypoints=False)
    with pytest.raises(Exception, match="mctsfw_register_gmaes"):
        pm.register(Typo(), name="typo")
        pm.check_pending()


def test_third_party_game_through_the_public_api(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(install_fake_distribution(tmp_path)))
    default_registries.cache_clear()
    try:
        assert default_registries().games.provider("tictactoe") == "tictactoe"
        game = mctsfw.make_game("tictactoe")
        record = play_game(game, {1: mctsfw.make_actor("mcts", game, search_games=300, seed=1),
                                  2: mctsfw.make_actor("mcts", game, search_games=300, seed=2)})
        assert record.winner is None  # good play on both sides draws
        # MCTS completes a line when it can
        state = (1, (1, 1, 0, 2, 2, 0, 0, 0, 0))
        assert mctsfw.make_actor("mcts", game, search_games=300, seed=0).select_action(state) == 2
    finally:
        default_registries.cache_clear()


def test_third_party_game_in_the_cli(tmp_path):
    site = install_fake_distribution(tmp_path)
    listing = run_cli("plugins", pythonpath=site)
    assert listing.returncode == 0, listing.stderr
    assert "tictactoe" in listing.stdout and "from tictactoe" in listing.stdout
    played = run_cli("play", "--game", "tictactoe", "--p1", "mcts", "--p2", "random", "--search-games", "200",
                     "--games", "2", "--seed", "5", pythonpath=site)
    assert played.returncode == 0, played.stderr
    assert "game 2:" in played.stdout and "X" in played.stdout
    # a person plays it too; an illegal move is refused and asked again
    person = run_cli("play", "--game", "tictactoe", "--p1", "human", "--p2", "mcts", "--search-games", "50",
                     pythonpath=site, stdin="4\n4\n0\n1\n2\n3\n5\n6\n7\n8\n")
    assert "refused" in person.stdout
    assert "game 1:" in person.stdout or "no more input" in person.stderr
    # a plugin game without parameters refuses any, naming the key
    unknown = run_cli("play", "--game", "tictactoe", "--set", "games.tictactoe.foo=1", pythonpath=site)
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == "error: games.tictactoe.foo: unknown parameter of tictactoe (known: none)"
