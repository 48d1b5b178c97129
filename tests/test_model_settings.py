"""A saved network carries its game and the search it plays best with: every command and
the Python API given the file alone play it that way, the user's settings win, and a game
the network cannot play is refused in one line naming both."""

import zipfile

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.checkpoints import ModelFileError, load_net, play_settings, saved_settings, settings_layer
from hexzero.mctsfw.config import load_config
from hexzero.nets.keras_files import SETTINGS_MEMBER, save_keras_model
from hexzero.nets.twohead import PolicyValueResNet
from tests.test_plugins import ROOT, run_cli


def gomoku_history_net(path, value_weight=0.5):
    """A small ResNet for 9x9 Gomoku with two history planes, saved with a run config's
    search (value_weight 0.5: a value the declared defaults do not have)."""
    config = load_config(None, overrides=["game=gomoku", "games.gomoku.size=9", "games.gomoku.history=2",
                                          f"tree_policies.puct.value_weight={value_weight}"])
    game = mctsfw.make_config_game(config)
    net = PolicyValueResNet(game, blocks=1, filters=4, value_hidden=4, seed=0)
    net.play_settings = play_settings(config, net)
    net.save(path)
    return path


@pytest.fixture(scope="module")
def gomoku_net(tmp_path_factory):
    return gomoku_history_net(tmp_path_factory.mktemp("nets") / "gomoku9.keras")


def test_the_file_records_the_game_and_the_search(gomoku_net):
    saved = saved_settings(gomoku_net)
    assert saved["game"] == {"name": "gomoku", "params": {"size": 9, "connect": 5, "exactly_five": False,
                                                          "history": 2}}
    assert saved["search"]["tree_policy"] == "puct"
    assert saved["search"]["policy_params"]["value_weight"] == 0.5
    assert saved["search"]["playouts"] == "random"
    layer = settings_layer(gomoku_net)
    assert layer["game"] == "gomoku" and layer["games"]["gomoku"]["history"] == 2
    assert layer["play"] == {"model_tree_policy": "puct"}


def test_pbrain_plays_a_network_with_history_planes_from_its_file_alone(gomoku_net):
    """The issue's first complaint: the user no longer needs --config for the planes."""
    result = run_cli("pbrain", "--size", "9", "--p", str(gomoku_net), "--model-search-games", "8", "--seed", "1",
                     stdin="START 9\nBEGIN\nEND\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split()
    assert lines[0] == "OK" and "," in lines[1], result.stdout
    x, y = map(int, lines[1].split(","))
    assert 0 <= x < 9 and 0 <= y < 9


def test_a_game_setting_the_network_cannot_play_is_refused_naming_both(gomoku_net):
    result = run_cli("pbrain", "--p", str(gomoku_net), "--set", "games.gomoku.history=0", stdin="START 9\nEND\n")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "history=2" in lines[0] and "history=0" in lines[0] and str(gomoku_net) in lines[0]


def test_another_game_is_refused_at_once(gomoku_net):
    result = run_cli("play", "--p1", str(gomoku_net), "--p2", "random", "--game", "hex", "--no-display")
    assert result.returncode == 2
    assert result.stderr.strip() == (f"error: {gomoku_net}: a network for gomoku(size=9, connect=5, "
                                     "exactly_five=False, history=2), not for hex")


def test_play_takes_the_game_from_the_network(gomoku_net):
    result = run_cli("play", "--p1", str(gomoku_net), "--p2", "random", "--no-display", "--seed", "3")
    assert result.returncode == 0, result.stderr
    assert "Gomoku(size=9, connect=5, exactly_five=False, history=2)" in result.stdout


def value_weight_of(actor) -> float:
    return actor.mcts.evaluator.weight


def test_the_search_settings_come_from_the_file_and_the_user_overrides_them(gomoku_net):
    game = mctsfw.make_model_game(gomoku_net)
    assert value_weight_of(mctsfw.make_actor(gomoku_net, game, search_games=4)) == 0.5
    given = mctsfw.make_actor(gomoku_net, game, search_games=4, policy_params={"value_weight": 1.0})
    assert type(given.mcts.evaluator).__name__ == "NetValue"  # lambda 1: the value head alone
    assert mctsfw.make_model_game(gomoku_net, size=11).params()["size"] == 11


def test_each_model_of_a_match_searches_with_its_own_settings(tmp_path):
    from hexzero.cli import build_parser, configs_with_models, play_overrides

    half = gomoku_history_net(tmp_path / "half.keras", value_weight=0.5)
    quarter = gomoku_history_net(tmp_path / "quarter.keras", value_weight=0.25)
    args = build_parser().parse_args(["compare", str(half), str(quarter), "--search-games", "4"])
    config, players = configs_with_models(args, None, lambda name: play_overrides(args, name),
                                          lambda config: {0: args.a, 1: args.b})
    assert config["game"] == "gomoku" and config["games"]["gomoku"]["history"] == 2
    assert [players[k]["tree_policies"]["puct"]["value_weight"] for k in (0, 1)] == [0.5, 0.25]
    assert config["tree_policies"]["puct"]["value_weight"] == 1.0  # the match's own players keep the config's
    args = build_parser().parse_args(["compare", str(half), str(quarter), "--set", "tree_policies.puct.value_weight=0.75"])
    _, players = configs_with_models(args, None, lambda name: play_overrides(args, name),
                                     lambda config: {0: args.a, 1: args.b})
    assert [players[k]["tree_policies"]["puct"]["value_weight"] for k in (0, 1)] == [0.75, 0.75]


def test_a_file_without_settings_loads_as_before(gomoku_net, tmp_path):
    bare = tmp_path / "bare.keras"
    game = mctsfw.make_model_game(gomoku_net)
    save_keras_model(load_net(gomoku_net, game).model, bare)
    assert SETTINGS_MEMBER not in zipfile.ZipFile(bare).namelist()
    assert saved_settings(bare) == {} and settings_layer(bare) == {}
    assert load_net(bare, game).play_settings is None
    with pytest.raises(ModelFileError, match="records no game"):
        mctsfw.make_model_game(bare)
    result = run_cli("model", str(bare), "--set", "game=gomoku", "--set", "games.gomoku.size=9",
                     "--set", "games.gomoku.history=2", "--set", "tree_policies.puct.value_weight=0.3", "--write")
    assert result.returncode == 0, result.stderr
    assert saved_settings(bare)["search"]["policy_params"]["value_weight"] == 0.3
    assert "game: gomoku(size=9, connect=5, exactly_five=False, history=2)" in result.stdout


def test_a_broken_settings_member_names_the_file(gomoku_net, tmp_path):
    broken = tmp_path / "broken.keras"
    broken.write_bytes(gomoku_net.read_bytes())
    with zipfile.ZipFile(broken, "a") as archive:
        archive.writestr(SETTINGS_MEMBER.replace(".json", "-old.json"), "{}")
    with zipfile.ZipFile(broken) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members[SETTINGS_MEMBER] = b'{"game": "gomoku"'
    with zipfile.ZipFile(broken, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    result = run_cli("play", "--p1", str(broken), "--p2", "random", "--no-display")
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {broken}: its {SETTINGS_MEMBER} cannot be read")


def test_a_run_checkpoint_carries_the_run_settings(tmp_path):
    """Any run's checkpoints: here a one-episode on-policy run of NIM (the ANET, UCT)."""
    result = run_cli("train", "--set", "game=nim", "--episodes", "1", "--run-dir", str(tmp_path / "run"), "--no-progress",
                     "--set", "train.search_games=20", "--set", "tree_policies.uct.c=0.7", "--set", "train.display=false")
    assert result.returncode == 0, result.stderr
    checkpoint = sorted((tmp_path / "run" / "checkpoints").glob("*.keras"))[-1]
    saved = saved_settings(checkpoint)
    assert saved["game"]["name"] == "nim"
    assert saved["search"] == {"tree_policy": "uct", "policy_params": {"c": 0.7}}


@pytest.mark.parametrize("folder", sorted(p.name for p in (ROOT / "models").iterdir() if p.is_dir()))
def test_every_shipped_network_carries_its_settings(folder):
    for path in sorted((ROOT / "models" / folder).glob("*.keras")):
        saved = saved_settings(path)
        assert saved.get("game") and saved.get("search"), path
        game = mctsfw.make_model_game(path)
        load_net(path, game)
