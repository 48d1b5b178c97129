"""Every configuration error path: each problem reported with its key path, all at once."""

import subprocess
import sys
from pathlib import Path

import pytest

from mctsfw.config import ConfigError, apply_overrides, load_config, parse_override

ROOT = Path(__file__).resolve().parent.parent
DEFAULTS = ROOT / "hexzero.toml"


def problems_of(*overrides, user_text=None, tmp_path=None):
    user_file = None
    if user_text is not None:
        user_file = tmp_path / "mine.toml"
        user_file.write_text(user_text)
    with pytest.raises(ConfigError) as error:
        load_config(DEFAULTS, user_file, overrides)
    return error.value.problems


def test_the_shipped_config_is_valid():
    config = load_config(DEFAULTS)
    assert config["game"] == "hex" and config["games"]["hex"]["size"] == 5


def test_overrides_and_user_files_merge(tmp_path):
    mine = tmp_path / "mine.toml"
    mine.write_text('game = "nim"\n[games.nim]\npiles = [1, 2]\n')
    config = load_config(DEFAULTS, mine, ["mcts.search_games=50", "games.nim.misere=true", "play.player1=random"])
    assert config["game"] == "nim" and config["games"]["nim"] == {"piles": [1, 2], "max_take": 3, "misere": True}
    assert config["mcts"]["search_games"] == 50 and config["play"]["player1"] == "random"
    assert config["games"]["hex"]["size"] == 5  # untouched defaults stay


def test_unknown_plugin_names_list_the_available_ones():
    problems = problems_of('game="hexx"', 'tree_policy="uctt"', 'display="tv"')
    assert 'game = \'hexx\': unknown game; available: connect4, hex, nim. Did you mean "hex"?' in problems
    assert any(p.startswith("tree_policy = 'uctt': unknown tree policy; available: puct, uct") for p in problems)
    assert any(p.startswith("display = 'tv': unknown display") for p in problems)


def test_every_problem_is_reported_at_once():
    problems = problems_of(
        "games.hex.size=2", "mcts.search_games=-1", "mcts.time_limit=-0.5", "show.enabled=maybe",
        "play.starting_player=3", "play.games=0", "play.player2=alphago", "tree_policies.uct.c=-1",
        "games.nim.piles=[]", "games.nim.max_take=-2",
    )
    paths = [p.split(" ")[0].rstrip(":") for p in problems]
    assert paths == [
        "games.hex.size", "games.nim.piles", "games.nim.max_take", "tree_policies.uct.c",
        "mcts.search_games", "mcts.time_limit", "show.enabled", "play.player2", "play.starting_player", "play.games",
    ]


def test_unknown_keys_and_tables():
    problems = problems_of("mcts.serch_games=5", "games.chess.size=8", "games.hex.colour=1", "tree_policies.puctt.c=1")
    assert 'mcts.serch_games: unknown key. Did you mean "mcts.search_games"?' in problems
    assert any(p.startswith("games.chess: unknown game; available: connect4, hex, nim") for p in problems)
    assert any(p.startswith("games.hex.colour: unknown parameter") for p in problems)
    assert any(p.startswith("tree_policies.puctt: unknown tree policy") for p in problems)


def test_wrong_types():
    problems = problems_of('games.hex.size="big"', 'mcts.search_games=1.5', "game=3", "show.delay=[1]", "games.nim=4")
    assert len(problems) == 5


def test_no_budget_at_all():
    problems = problems_of("mcts.search_games=0", "mcts.time_limit=0")
    assert any("search_games > 0 or time_limit > 0" in p for p in problems)


def test_missing_keys(tmp_path):
    defaults = tmp_path / "defaults.toml"
    defaults.write_text('game = "hex"\n')
    with pytest.raises(ConfigError) as error:
        load_config(defaults)
    assert "mcts.search_games: missing" in error.value.problems


def test_bad_files(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_config(DEFAULTS, tmp_path / "nope.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("game = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(DEFAULTS, broken)


def test_override_syntax():
    assert parse_override("a.b=3") == (["a", "b"], 3)
    assert parse_override("a=[1, 2]") == (["a"], [1, 2])
    assert parse_override("a=hello") == (["a"], "hello")
    with pytest.raises(ConfigError, match="key.path=value"):
        parse_override("novalue")
    with pytest.raises(ConfigError, match="not a table"):
        apply_overrides({"game": "hex"}, ["game.size=3"])


def test_cli_exits_2_and_lists_every_problem():
    result = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "play", "--game", "hexx", "--set", "mcts.search_games=-3", "--no-display"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "unknown game; available: connect4, hex, nim" in result.stderr and "mcts.search_games" in result.stderr
    result = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "plugins", "--set", "games.hex.size=1"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2 and "games.hex.size" in result.stderr
