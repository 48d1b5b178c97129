"""The plugin core: registries, unknown names, and a third-party game found by entry point."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.plugin_manager import (
    GAME_METHODS,
    Registry,
    build_registries,
    default_registries,
    load_entry_point_plugins,
    make_plugin_manager,
)
from hexzero.mctsfw.match import play_game

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_PACKAGE = ROOT / "examples" / "tictactoe"
EXAMPLE = EXAMPLE_PACKAGE / "tictactoe_plugin.py"


def install_example(target: Path) -> Path:
    """``pip install examples/tictactoe`` into ``target``: its pyproject.toml declares the entry point."""
    from tests.installing import pip_install

    return pip_install(EXAMPLE_PACKAGE, target / "site")


def fake_distribution(target: Path, module: str = "tictactoe_plugin", source: str | None = None,
                              entry_point: str = "tictactoe") -> Path:
    """A hand-made stand-in for what ``pip install`` of a package with an ``mctsfw`` entry point leaves on sys.path."""
    (target / f"{module}.py").write_text(EXAMPLE.read_text() if source is None else source)
    dist = target / f"{module}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[mctsfw]\n{entry_point} = {module}\n")
    return target


def run_cli(*args, pythonpath=None, stdin="", cwd=None):
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), *args], input=stdin, capture_output=True, text=True, env=env, timeout=120,
        cwd=cwd,
    )


def test_the_documented_example_is_the_example_file():
    page = (ROOT / "docs" / "plugins.md").read_text()
    assert EXAMPLE.read_text().strip() in page
    assert (EXAMPLE_PACKAGE / "pyproject.toml").read_text().strip() in page


def test_builtin_plugins_register_through_the_hooks():
    registries = default_registries()
    assert {"hex", "nim"} <= set(registries.games.names())
    assert "uct" in registries.tree_policies.names()
    assert registries.games.provider("hex") == "hexzero.games.hex"


def test_unknown_names_list_the_available_ones():
    with pytest.raises(mctsfw.UnknownPluginError) as error:
        mctsfw.make_game("hexx")
    message = str(error.value)
    assert "hex" in message and "nim" in message and 'Did you mean "hex"' in message
    with pytest.raises(mctsfw.UnknownPluginError, match="uct"):
        mctsfw.make_tree_policy("ucb")


def test_registry_rejects_duplicate_names():
    registry = Registry("tree_policy")

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
            from hexzero.games.hex import Hex

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
    monkeypatch.syspath_prepend(str(install_example(tmp_path)))
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
    site = install_example(tmp_path)
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


# ---- plugins that cannot work ----------------------------------------------------------------
BROKEN = "import no_such_module_anywhere  # a dependency the user has not installed\n"


def test_a_plugin_that_fails_to_import_is_named_in_a_warning_and_the_rest_work(tmp_path, monkeypatch):
    fake_distribution(tmp_path)
    fake_distribution(tmp_path, module="broken_plugin", source=BROKEN, entry_point="broken")
    monkeypatch.syspath_prepend(str(tmp_path))
    default_registries.cache_clear()
    try:
        with pytest.warns(mctsfw.PluginImportWarning) as caught:
            registries = default_registries()
        messages = [str(w.message) for w in caught if issubclass(w.category, mctsfw.PluginImportWarning)]
        assert len(messages) == 1
        assert "broken = broken_plugin (from broken-plugin 0.1) failed to import" in messages[0]
        assert "ModuleNotFoundError" in messages[0] and "no_such_module_anywhere" in messages[0]
        assert {"tictactoe", "hex", "nim"} <= set(registries.games.names())
    finally:
        default_registries.cache_clear()


def test_a_plugin_whose_hook_fails_to_import_is_left_out_with_a_warning():
    class LazyImport:
        @mctsfw.hookimpl
        def mctsfw_register_games(self):
            import no_such_module_anywhere  # noqa: F401

    pm = make_plugin_manager(load_entrypoints=False)
    pm.register(LazyImport(), name="lazy")
    with pytest.warns(mctsfw.PluginImportWarning, match="plugin lazy failed in mctsfw_register_games .*no_such_module"):
        registries = build_registries(pm)
    assert "hex" in registries.games and "uct" in registries.tree_policies


def test_the_cli_warns_in_one_line_and_keeps_working(tmp_path):
    fake_distribution(tmp_path)
    fake_distribution(tmp_path, module="broken_plugin", source=BROKEN, entry_point="broken")
    listing = run_cli("plugins", pythonpath=tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert "tictactoe" in listing.stdout and "hex" in listing.stdout
    warning = [line for line in listing.stderr.splitlines() if "broken" in line]
    assert len(warning) == 1 and warning[0].startswith("warning: plugin broken = broken_plugin")
    assert "Traceback" not in listing.stderr


def test_two_plugins_with_one_name_give_one_error_line_in_the_cli(tmp_path):
    fake_distribution(tmp_path)
    fake_distribution(tmp_path, module="tictactoe_copy", entry_point="tictactoe_copy")
    listing = run_cli("plugins", pythonpath=tmp_path)
    assert listing.returncode == 2
    assert listing.stderr.strip().splitlines() == [
        "error: game 'tictactoe' is registered twice: by tictactoe and by tictactoe_copy"
    ]


def test_two_entry_points_with_one_name_are_refused(tmp_path, monkeypatch):
    fake_distribution(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    fake_distribution(other, module="another_game", entry_point="tictactoe")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(other))
    pm = make_plugin_manager(load_entrypoints=False)
    with pytest.raises(mctsfw.DuplicatePluginError, match="two plugins are named 'tictactoe'.*another_game"):
        load_entry_point_plugins(pm)


def game_class(drop: str = "", **attributes):
    """A complete game (the tic-tac-toe of docs/plugins.md) with one method taken out."""
    namespace: dict = {}
    exec(EXAMPLE.read_text(), namespace)
    body = {k: v for k, v in vars(namespace["TicTacToe"]).items() if k != drop}
    body.update(attributes)
    return type("Incomplete", (mctsfw.Game,), body)


def register_games(*classes):
    class Plugin:
        @mctsfw.hookimpl
        def mctsfw_register_games(self):
            return list(classes)

    pm = make_plugin_manager(load_entrypoints=False)
    pm.register(Plugin(), name="third_party")
    return build_registries(pm)


@pytest.mark.parametrize("method", GAME_METHODS)
def test_a_game_missing_a_required_method_is_refused_at_registration(method):
    with pytest.raises(mctsfw.InvalidPluginError, match=rf"third_party: game class Incomplete .* does not implement {method} "):
        register_games(game_class(drop=method, name=f"no_{method}"))


def test_a_game_without_name_or_num_actions_is_refused():
    assert register_games(game_class(name="complete")).games.get("complete")
    with pytest.raises(mctsfw.InvalidPluginError, match="third_party: game class Incomplete has no 'name'"):
        register_games(game_class(name=""))
    with pytest.raises(mctsfw.InvalidPluginError, match="Incomplete \\('sizeless'\\) sets no num_actions"):
        register_games(game_class(name="sizeless", num_actions=0))
    with pytest.raises(mctsfw.InvalidPluginError, match="is not a class"):
        register_games(game_class(name="x")())


@pytest.mark.parametrize("name", sorted(default_registries().games.names()))
def test_every_games_legal_mask_marks_its_legal_actions(name):
    """A game's own ``legal_mask`` (Hex and Gomoku unpack their bitboards) agrees with its
    ``legal_actions``, and its ``search_array`` (Hex's and Go's own) with its
    ``search_actions``, all through random games, the final position included; its
    ``legal_masks`` of a batch (Hex's and Gomoku's own) is each position's mask, and the
    moves searched after it (from what the batch kept) are still right."""
    import random

    import numpy as np

    game = mctsfw.make_game(name)
    rng = random.Random(3)
    states, masks = [], []
    for _ in range(3):
        state = game.initial_state()
        while True:
            expected = np.zeros(game.num_actions, dtype=np.float32)
            expected[game.legal_actions(state)] = 1.0
            mask = game.legal_mask(state)
            assert mask.dtype == np.float32 and np.array_equal(mask, expected), game.render(state)
            array = game.search_array(state)
            assert array.dtype == np.intp and array.tolist() == list(game.search_actions(state)), game.render(state)
            states.append(state)
            masks.append(expected)
            if game.is_final(state):
                break
            state = game.next_state(state, rng.choice(game.legal_actions(state)))
    fresh = mctsfw.make_game(name)  # nothing kept from the positions above
    batch = fresh.legal_masks(states)
    assert batch.dtype == np.float32 and np.array_equal(batch, np.stack(masks))
    for state in states:
        assert fresh.search_array(state).tolist() == list(game.search_actions(state)), game.render(state)
