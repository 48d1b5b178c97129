"""cli.py play: people and agents on Hex (3 to 8) and NIM, display on and off."""

import pytest

from tests.test_plugins import ROOT, run_cli


@pytest.mark.parametrize("size", range(3, 9))
def test_agents_play_hex_on_every_size(size):
    result = run_cli("play", "--size", str(size), "--p1", "mcts", "--p2", "random", "--search-games", "30", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert f"Hex(size={size})" in result.stdout
    assert "game 1:" in result.stdout and "wins" in result.stdout
    assert result.stdout.count("N\n") >= 2  # the diamond is drawn after moves


def test_display_off_shows_no_board():
    result = run_cli("play", "--p1", "random", "--p2", "mcts", "--search-games", "20", "--no-display", "--games", "3",
                     "--starting-player", "alternate")
    assert result.returncode == 0, result.stderr
    assert "N\n" not in result.stdout and "score:" in result.stdout
    assert "game 2: player 2 started" in result.stdout


def test_a_person_plays_hex_and_illegal_input_is_refused():
    # b3 twice: the second is refused (taken); "z9" is off the board; "hello" unreadable
    moves = "b3\nb3\nz9\nhello\n" + "\n".join(f"{r} {c}" for r in range(3) for c in range(3))
    result = run_cli("play", "--size", "3", "--p1", "human", "--p2", "random", "--seed", "2", stdin=moves + "\n")
    assert "refused: cell b3 is already taken" in result.stdout
    assert "refused: 'z9' is off the 3x3 board" in result.stdout
    assert "refused: cannot read 'hello'" in result.stdout
    assert "game 1:" in result.stdout, result.stdout[-2000:]


def test_a_person_plays_nim():
    moves = "9 1\n1 9\n" + "1 1\n" * 3 + "2 1\n" * 4 + "3 1\n" * 5
    result = run_cli("play", "--game", "nim", "--p1", "human", "--p2", "random", "--seed", "4",
                     "--set", "games.nim.max_take=0", stdin=moves)
    assert "refused: there is no pile 9" in result.stdout
    assert "refused: pile 1 has only 3 stones" in result.stdout
    assert "game 1:" in result.stdout and "pile 3:" in result.stdout


@pytest.mark.parametrize("misere", ["false", "true"])
def test_agents_play_nim(misere):
    result = run_cli("play", "--game", "nim", "--p1", "mcts", "--p2", "mcts", "--search-games", "1000", "--no-display",
                     "--seed", "3", "--set", f"games.nim.misere={misere}", "--set", "games.nim.piles=[1, 2, 4]",
                     "--set", "games.nim.max_take=0")
    assert result.returncode == 0, result.stderr
    # (1, 2, 4) has xor 7: the first player wins with good play, normal or misère
    assert "player 1 (mcts(1000 games)) wins" in result.stdout


def test_running_out_of_input_ends_cleanly():
    result = run_cli("play", "--p1", "human", "--p2", "mcts", "--search-games", "10", stdin="")
    assert result.returncode == 1 and "no more input" in result.stderr


def test_play_saves_each_game_as_a_gif(tmp_path):
    from PIL import Image

    result = run_cli("play", "--size", "3", "--p1", "random", "--p2", "random", "--no-display", "--games", "2",
                     "--gif", str(tmp_path / "game.gif"))
    assert result.returncode == 0, result.stderr
    for number in (1, 2):
        moves = int(result.stdout.split(f"game {number}: ")[1].split(" moves")[0].split(", ")[-1])
        with Image.open(tmp_path / f"game-{number}.gif") as gif:
            assert gif.n_frames == moves + 1  # the empty board, then one frame a move


def test_a_missing_or_mismatched_model_is_refused_with_its_name(tmp_path):
    missing = run_cli("play", "--p1", "random", "--p2", str(tmp_path / "nope.keras"), "--no-display")
    assert missing.returncode == 2 and "nope.keras: no such model file" in missing.stderr
    broken = tmp_path / "broken.keras"
    broken.write_text("not a model")
    result = run_cli("play", "--p1", "random", "--p2", str(broken), "--no-display")
    assert result.returncode == 2 and "broken.keras" in result.stderr
    shipped = ROOT / "models" / "hex5" / "anet_ep0250.keras"
    result = run_cli("play", "--game", "nim", "--p1", "random", "--p2", str(shipped), "--no-display")
    assert result.returncode == 2 and "anet_ep0250.keras: expects 52 inputs" in result.stderr


def test_a_person_plays_the_shipped_network():
    moves = "\n".join(f"{r} {c}" for r in range(5) for c in range(5))
    shipped = ROOT / "models" / "hex5" / "anet_ep0250.keras"
    result = run_cli("play", "--p1", "human", "--p2", str(shipped), stdin=moves + "\n")
    assert "game 1:" in result.stdout, result.stderr[-2000:]
    assert "player 2 (anet_ep0250) wins" in result.stdout  # filling row by row loses to it


def test_compare_reports_rates_times_and_lengths_per_colour(tmp_path):
    import json

    result = run_cli("compare", "mcts", "random", "--games", "6", "--size", "3", "--search-games", "50",
                     "--seed", "3", "--json", str(tmp_path / "c.json"))
    assert result.returncode == 0, result.stderr
    assert "A as player 1" in result.stdout and "mean thinking time per move" in result.stdout
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["a_as_player_1"]["games"] == 3 and data["a_as_player_2"]["games"] == 3
    assert data["total"]["wins"] + data["total"]["losses"] + data["total"]["draws"] == 6
    assert data["total"]["win_rate"] >= 0.5  # MCTS beats random on 3x3 Hex
    assert data["mean_seconds_per_move"]["a"] > data["mean_seconds_per_move"]["b"]
    assert sum(sum(v.values()) for v in data["game_lengths"]["by_colour"].values()) == 6


def test_play_connect4_against_a_policy_value_network_with_temperature(tmp_path):
    import mctsfw
    from nets.twohead import PolicyValueMLP

    game = mctsfw.make_game("connect4")
    model = tmp_path / "pv_mlp_gen0000.keras"
    PolicyValueMLP(game, hidden_layers=[16], seed=0).save(model)
    searcher = mctsfw.make_actor(str(model), game, search_games=40, temperature=0.5, seed=1)
    assert searcher.mcts.evaluator is not None and searcher.mcts.tree_policy.name == "puct"
    assert searcher.mcts.root_noise is False  # no noise when playing
    result = run_cli("play", "--game", "connect4", "--p1", "random", "--p2", str(model), "--temperature", "0.1",
                     "--search-games", "40", "--no-display", "--seed", "2")
    assert result.returncode == 0, result.stderr
    assert "game 1:" in result.stdout and "pv_mlp_gen0000+mcts(40)" in result.stdout


def test_a_saved_network_from_the_command_line_searches_without_root_noise(tmp_path):
    """[tree_policies.puct] holds self-play's Dirichlet noise; play and compare leave it out
    but take the rest of the table (here lambda)."""
    import cli
    import mctsfw
    from mctsfw.config import load_config
    from nets.twohead import PolicyValueMLP

    game = mctsfw.make_game("connect4")
    model = tmp_path / "pv_mlp_gen0000.keras"
    PolicyValueMLP(game, hidden_layers=[16], seed=0).save(model)
    config = load_config(ROOT / "hexzero.toml", None, [
        "tree_policies.puct.dirichlet_epsilon=0.25", "tree_policies.puct.value_weight=0.5", "play.model_search_games=40",
    ])
    search = cli.make_player(str(model), game, config, seed=1).mcts
    assert search.root_noise is False and search.evaluator.weight == 0.5  # lambda mixes value and rollouts
