"""cli.py play: people and agents on Hex (3 to 8) and NIM, display on and off."""

import re
import shutil

import pytest

from benchmarks.shipped import shipped_model
from hexzero.cli import main
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


def test_running_out_of_input_ends_as_quit_and_keeps_the_record(tmp_path):
    """Ctrl-D (the end of input) at the move prompt is quit: the session ends with status
    0 and the game so far is saved."""
    record = tmp_path / "game.sgf"
    result = run_cli("play", "--game", "hex", "--size", "3", "--p1", "human", "--p2", "random", "--seed", "1",
                     "--no-display", "--record", str(record), stdin="a1\n")
    assert result.returncode == 0, result.stderr
    assert "no more input: the session ends (as quit)" in result.stdout and "player 1 quit" in result.stdout
    assert ";B[a1];W[" in record.read_text()
    result = run_cli("play", "--p1", "human", "--p2", "mcts", "--search-games", "10", stdin="")
    assert result.returncode == 0 and "Traceback" not in result.stderr


def test_play_saves_each_game_as_a_gif(tmp_path):
    from PIL import Image

    result = run_cli("play", "--size", "3", "--p1", "random", "--p2", "random", "--no-display", "--games", "2",
                     "--gif", str(tmp_path / "game.gif"))
    assert result.returncode == 0, result.stderr
    for number in (1, 2):
        moves = int(result.stdout.split(f"game {number}: ")[1].split(" moves")[0].split(", ")[-1])
        with Image.open(tmp_path / f"game-{number}.gif") as gif:
            assert gif.n_frames == moves + 1  # the empty board, then one frame a move


def test_play_records_the_games_as_json_lines_that_replay(tmp_path):
    import json

    from hexzero import mctsfw
    from hexzero.mctsfw.records import read_game_lines

    path = tmp_path / "new" / "games.jsonl"
    result = run_cli("play", "--game", "connect4", "--p1", "random", "--p2", "mcts", "--search-games", "20",
                     "--no-display", "--games", "3", "--starting-player", "alternate", "--seed", "1", "--record", path)
    assert result.returncode == 0, result.stderr
    assert f"games saved in {path}" in result.stdout
    lines = read_game_lines(path)
    assert len(lines) == 3 == len(path.read_text().splitlines())
    assert set(lines[0]) == {"game", "params", "starting_player", "moves", "winner"}
    for number, line in enumerate(lines, 1):
        game = mctsfw.make_game(line["game"], **line["params"])
        assert repr(game) == "ConnectFour(rows=6, columns=7)"
        final = game.state_after(line["moves"], line["starting_player"])  # the moves replay to the end ...
        assert game.is_final(final) and game.winner(final) == line["winner"]  # ... and to its winner
        assert f"game {number}: player {line['starting_player']} started, {len(line['moves'])} moves" in result.stdout
    assert [line["starting_player"] for line in lines] == [1, 2, 1]
    assert json.loads(path.read_text().splitlines()[0]) == lines[0]


def test_a_missing_or_mismatched_model_is_refused_with_its_name(tmp_path):
    missing = run_cli("play", "--p1", "random", "--p2", str(tmp_path / "nope.keras"), "--no-display")
    assert missing.returncode == 2 and "nope.keras: no such model file" in missing.stderr
    broken = tmp_path / "broken.keras"
    broken.write_text("not a model")
    result = run_cli("play", "--p1", "random", "--p2", str(broken), "--no-display")
    assert result.returncode == 2 and "broken.keras" in result.stderr
    shipped = shipped_model("hex5")
    result = run_cli("play", "--game", "nim", "--p1", "random", "--p2", str(shipped), "--no-display")
    assert result.returncode == 2 and f"{shipped.name}: a network for hex(size=5), not for nim" in result.stderr


def test_a_person_plays_the_shipped_network():
    moves = "\n".join(f"{r} {c}" for r in range(5) for c in range(5))
    shipped = shipped_model("hex5")
    result = run_cli("play", "--p1", "human", "--p2", str(shipped), stdin=moves + "\n")
    assert "game 1:" in result.stdout, result.stderr[-2000:]
    assert f"player 2 ({shipped.stem}) wins" in result.stdout  # filling row by row loses to it


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
    from hexzero import mctsfw
    from hexzero.nets.twohead import PolicyValueMLP

    game = mctsfw.make_game("connect4")
    model = tmp_path / "pv_mlp_gen0000.keras"
    PolicyValueMLP(game, hidden_layers=[16], seed=0).save(model)
    searcher = mctsfw.make_actor(str(model), game, search_games=40, temperature=0.5, seed=1)
    assert searcher.mcts.evaluator is not None and searcher.mcts.tree_policy.name == "puct"
    assert searcher.mcts.root_noise is False  # no noise when playing
    result = run_cli("play", "--game", "connect4", "--p1", "random", "--p2", str(model), "--temperature", "0.1",
                     "--search-games", "40", "--no-display", "--seed", "2")
    assert result.returncode == 0, result.stderr
    assert "game 1:" in result.stdout and "pv_mlp_gen0000+puct(40)" in result.stdout


def test_a_saved_network_from_the_command_line_searches_without_root_noise(tmp_path):
    """[tree_policies.puct] holds self-play's Dirichlet noise; play and compare leave it out
    but take the rest of the table (here lambda)."""
    from hexzero import cli
    from hexzero import mctsfw
    from hexzero.mctsfw.config import load_config
    from hexzero.nets.twohead import PolicyValueMLP

    game = mctsfw.make_game("connect4")
    model = tmp_path / "pv_mlp_gen0000.keras"
    PolicyValueMLP(game, hidden_layers=[16], seed=0).save(model)
    config = load_config(ROOT / "hexzero.toml", None, [
        "tree_policies.puct.dirichlet_epsilon=0.25", "tree_policies.puct.value_weight=0.5", "play.model_search_games=40",
    ])
    search = cli.make_player(str(model), game, config, seed=1).mcts
    assert search.root_noise is False and search.evaluator.weight == 0.5  # lambda mixes value and rollouts
    assert search.evaluator.rollout.playouts == "random"
    config["mcts"]["playouts"] = "tactical"  # [mcts] playouts: the rollouts mixed in take wins and stop the opponent's
    search = cli.make_player(str(model), game, config, seed=1).mcts
    assert search.evaluator.rollout.playouts == "tactical"
    assert search.evaluator.rollout.choose is not None


# ---- configuration on the command line --------------------------------------------------------------
TINY_TRAIN = [
    "--set", "games.hex.size=3", "--set", "train.search_games=8", "--set", "train.checkpoints=2",
    "--set", "train.minibatch=16", "--set", "train.epochs=1", "--set", "train.replay_size=50",
    "--set", "nets.anet.hidden_layers=[8]", "--no-progress",
]


def cli_main(capsys, *argv):
    """``cli.main(argv)`` in this process: (exit status, stdout, stderr)."""
    from hexzero import cli

    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def refused(capsys, *argv) -> str:
    """The one error line of a command that must exit with 2."""
    status, out, err = cli_main(capsys, *argv)
    assert status == 2, (argv, out[-500:], err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: ")
    return err.strip()


def test_resume_applies_resumable_changes_and_refuses_the_others(tmp_path, capsys, monkeypatch):
    from hexzero.mctsfw.config import read_toml
    from hexzero.mctsfw.runs import RunDir

    monkeypatch.chdir(tmp_path)  # no hexzero.toml here: the declared defaults
    run = RunDir(tmp_path / "run")
    assert cli_main(capsys, "train", "--run-dir", run.path, "--episodes", "1", *TINY_TRAIN)[0] == 0
    # --set of a resumable key on --resume is applied, not dropped
    status, out, err = cli_main(capsys, "train", "--resume", run.path, "--set", "train.episodes=2", "--no-progress")
    assert status == 0, err
    assert "resuming" in out and len(run.read_metrics()) == 2
    assert read_toml(run.config_path)["train"]["episodes"] == 2
    # so is a --config file's
    more = tmp_path / "more.toml"
    more.write_text("[train]\nepisodes = 3\n")
    assert cli_main(capsys, "train", "--resume", run.path, "--config", more, "--no-progress")[0] == 0
    assert len(run.read_metrics()) == 3
    # another run command's section shapes nothing this run learnt: a change there is no reason to refuse it
    status, out, err = cli_main(capsys, "train", "--resume", run.path, "--set", "distill.minibatch=7",
                                "--set", "selfplay.seed=5", "--set", "train.episodes=4", "--no-progress")
    assert status == 0, err
    assert len(run.read_metrics()) == 4
    # a key the run keeps from its start is refused, by --set or --config, naming it and why
    line = refused(capsys, "train", "--resume", run.path, "--set", "train.minibatch=7")
    assert "train.minibatch = 7 (the run has 16)" in line and "from its start" in line and "train.episodes" in line
    other = tmp_path / "other.toml"
    other.write_text("[train]\nminibatch = 7\n[games.hex]\nsize = 4\n")
    line = refused(capsys, "train", "--resume", run.path, "--config", other)
    assert "games.hex.size" in line and "train.minibatch" in line
    # starting it again without --resume: the same rule, the same message it always gave
    line = refused(capsys, "train", "--run-dir", run.path, "--episodes", "3", *TINY_TRAIN, "--set", "train.minibatch=7")
    assert "holds a run with another configuration: train.minibatch" in line and f"--resume {run.path}" in line
    assert len(run.read_metrics()) == 4  # nothing was played
    line = refused(capsys, "train", "--resume", run.path, "--run-dir", tmp_path / "elsewhere")
    assert "not both" in line


@pytest.mark.parametrize("argv, message", [
    (["plugins", "--set", "mcts=3"], "mcts is a table"),
    (["plugins", "--set", "mcts.search_games.x=1"], "mcts.search_games is a value, not a table"),
    (["play", "--set", "show.delay=nan"], "show.delay: must be a finite number"),
    (["play", "--set", "mcts.time_limit=nan"], "mcts.time_limit: must be a finite number"),
    (["play", "--time-limit", "inf"], "mcts.time_limit: must be a finite number"),
    (["play", "--temperature", "inf"], "play.temperature: must be a finite number"),
    (["play", "--temperature", "nan"], "play.temperature: must be a finite number"),
    (["play", "--temperature", "-1"], "play.temperature: temperature must be a finite number >= 0"),
    (["play", "--games", "0"], "play.games: must be a whole number >= 1, not 0"),
    (["play", "--starting-player", "3"], "play.starting_player: must be one of 1, 2, alternate"),
    (["play", "--game", "nim", "--set", "games.nim.piles=[1000]"], "games.nim.piles: must be a list of 1 to 10"),
    (["play", "--set", "games.hex.colour=1"], "games.hex.colour: unknown parameter of hex (known: size, swap, pairing, vc, prune)"),
    (["play", "--size", "2"], "games.hex.size: must be a whole number from 3 to 19, not 2"),
    (["topp", "--models", "a.keras", "b.keras", "--games", "0"], "topp.games_per_series: must be a whole number >= 1"),
    (["selfplay", "--workers", "-1"], "selfplay.workers: must be a whole number >= 0, not -1"),
    (["train", "--episodes", "0"], "train.episodes: must be a whole number >= 1, not 0"),
])
def test_bad_values_exit_2_with_one_line(capsys, argv, message):
    assert message in refused(capsys, *argv, *(["--no-display", "--p1", "random"] if argv[0] == "play" else []))


def test_bad_config_files_exit_2_with_one_line(tmp_path, capsys):
    assert "a directory, not a TOML file" in refused(capsys, "plugins", "--config", tmp_path)
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'game = "h\xe9x"\n')
    assert f"{latin}: not a TOML file: not UTF-8 text" in refused(capsys, "plugins", "--config", latin)
    assert refused(capsys, "plugins", "--config", tmp_path / "nope.toml") == f"error: {tmp_path / 'nope.toml'}: file not found"


def test_what_a_newcomer_met_on_the_command_line(capsys):
    """One line per problem, the path said once, the command's own usage, the version."""
    assert refused(capsys, "play", "--search-games", "-5", "--no-display") == \
        "error: --search-games: must be a whole number >= 0, not -5"
    model = "models/hex7/pv_mlp_gen0300.keras"
    message = refused(capsys, "serve", "--game", "go", "--p2", model)
    assert message.count(model) == 1 and "a network for hex(size=7), not for go" in message
    with pytest.raises(SystemExit) as stop:
        main(["play", "--bogus-flag"])
    assert stop.value.code == 2 and "hexzero play: error: unrecognized arguments: --bogus-flag" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and re.fullmatch(r"hexzero \d+\.\d+\.\d+\n", capsys.readouterr().out)
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(connect4, go, gomoku, hex, nim)" in text  # every registered game
    assert re.search(r"--p2 VALUE player 2: human, random, mcts, the path of a saved model \(\.keras\), gtp:COMMAND", text)


def test_model_shows_the_search_a_network_plays_with_and_no_root_noise(capsys):
    status, out, _ = cli_main(capsys, "model", "models/go9/pv_resnet_gen0010.keras")
    assert status == 0 and "dirichlet" not in out
    assert "leaves judged 0.5 by the value head, 0.5 by random playouts" in out
    status, out, _ = cli_main(capsys, "model", "models/hex7/pv_mlp_gen0300.keras")
    assert status == 0 and "leaves judged by the value head alone" in out and "below value_weight" not in out


def test_a_file_where_a_directory_belongs_is_refused_before_anything_runs(tmp_path, capsys):
    models = [ROOT / "models" / "hex5" / f"anet_ep{n:04d}.keras" for n in (0, 250)]
    file = tmp_path / "a_file"
    file.write_text("x")
    assert "is a file, not a directory" in refused(capsys, "train", "--run-dir", file)
    assert "cannot be made: " in refused(capsys, "selfplay", "--run-dir", file / "run")
    assert "is a file" in refused(capsys, "train", "--resume", file)
    assert "is a file, not a run directory" in refused(capsys, "topp", file)
    status, out, err = cli_main(capsys, "topp", "--models", *models, "--out", file, "--games", "2")
    assert status == 2 and "--out" in err and "is a file" in err and "TOPP on" not in out  # no game was played
    assert file.read_text() == "x"
    assert "--gif" in refused(capsys, "play", "--p1", "random", "--p2", "random", "--no-display", "--gif", file / "g.gif")
    assert refused(capsys, "play", "--p1", "random", "--p2", "random", "--no-display", "--record", tmp_path) == \
        f"error: --record {tmp_path} is a directory, not a file"
    assert "--record" in refused(capsys, "play", "--p1", "random", "--p2", "random", "--no-display", "--record",
                                 file / "games.jsonl")
    assert "--json" in refused(capsys, "compare", "random", "random", "--games", "1", "--json", tmp_path)


def test_several_config_files_merge_in_order_and_set_comes_last(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first, second = tmp_path / "first.toml", tmp_path / "second.toml"
    first.write_text('[games.hex]\nsize = 3\n[play]\nplayer1 = "random"\nplayer2 = "random"\ngames = 2\n')
    second.write_text("[games.hex]\nsize = 4\n[play]\ngames = 3\n")
    status, out, _ = cli_main(capsys, "play", "--config", first, "--config", second, "--no-display",
                              "--set", "play.games=4")
    assert status == 0 and "Hex(size=4)" in out and "game 4:" in out and "game 5:" not in out


def test_the_local_hexzero_toml_and_help_show_the_values_in_effect(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hexzero.toml").write_text('[games.hex]\nsize = 3\n[play]\nplayer1 = "random"\ngames = 2\n')
    status, out, _ = cli_main(capsys, "play", "--p2", "random", "--no-display")
    assert status == 0 and "Hex(size=3)" in out and "game 2:" in out
    with pytest.raises(SystemExit):
        cli_main(capsys, "play", "--help")
    help_text = " ".join(capsys.readouterr().out.split())
    assert "(config: play.games; now 2)" in help_text and '(config: play.player1; now "random")' in help_text
    (tmp_path / "hexzero.toml").unlink()  # none here: the declared defaults
    status, out, _ = cli_main(capsys, "play", "--p1", "random", "--p2", "random", "--no-display")
    assert status == 0 and "Hex(size=5)" in out and "game 2:" not in out


def test_info_says_what_the_install_uses():
    result = run_cli("info")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("hexzero ") and "cores" in lines[0]
    assert any(line.startswith("packages: ") and "keras " in line and "numpy " in line for line in lines)
    backend = next(line for line in lines if line.startswith("keras backend: "))
    backend_name, device = backend.removeprefix("keras backend: ").split(" on ", 1)
    assert backend_name in ("tensorflow", "jax", "torch") and device
    assert device.startswith("the CPU (no GPU in use") or "CPU" not in device  # the CPU is said, a GPU named
    assert any(line.startswith("self-play workers: ") for line in lines)
    for program in ("GNU Go", "MoHex", "Rapfi (a Gomocup brain)", "Chromium"):
        assert any(line.strip().startswith(f"{program}: ") for line in lines), program
    assert any(line.startswith("network batches in float32 ($HEXZERO_PRECISION") for line in lines)


def test_a_precision_no_net_has_is_refused_before_the_command_starts(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("HEXZERO_PRECISION", "half")
    error = refused(capsys, "play", "--p1", "random", "--p2", "random", "--no-display", "--record", tmp_path / "g.jsonl")
    assert error == "error: environment: HEXZERO_PRECISION='half': one of float32, bfloat16, auto"
    assert not (tmp_path / "g.jsonl").exists()  # nothing played


def test_the_gpu_backend_is_chosen_where_jax_with_cuda_and_a_gpu_are(tmp_path, monkeypatch):
    """pip install -e ".[gpu]" on a machine with an NVIDIA GPU: Keras runs on JAX without a
    setting; a backend the user names, a missing CUDA plugin or no GPU leave Keras's own choice."""
    import importlib.util

    from hexzero.nets.anet import gpu_backend

    installed = {"jax", "jax_cuda12_plugin"}
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: object() if name in installed else real_find_spec("no_such_module_here"))
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    assert gpu_backend(tmp_path) is None  # no GPU
    (tmp_path / "nvidiactl").touch()
    assert gpu_backend(tmp_path) is None  # the driver's control node is not a GPU
    (tmp_path / "nvidia0").touch()
    assert gpu_backend(tmp_path) == "jax"
    monkeypatch.setenv("KERAS_BACKEND", "tensorflow")
    assert gpu_backend(tmp_path) is None  # the user's choice stands
    monkeypatch.delenv("KERAS_BACKEND")
    installed.discard("jax_cuda12_plugin")
    assert gpu_backend(tmp_path) is None  # JAX for the CPU only


@pytest.mark.skipif(shutil.which("gnugo") is None and shutil.which("gnugo", path="/usr/games") is None,
                    reason="GNU Go is not installed (apt-get install gnugo)")
def test_play_against_gnugo_lets_it_count_the_game_and_records_its_count(tmp_path):
    from hexzero.mctsfw.sgf import read_sgf_file

    gnugo = shutil.which("gnugo") or shutil.which("gnugo", path="/usr/games")
    path = tmp_path / "game.sgf"
    result = run_cli("play", "--game", "go", "--size", "5", "--p1", f"gtp:{gnugo} --mode gtp --level 1 --chinese-rules "
                     "--capture-all-dead", "--p2", "random", "--no-display", "--seed", "1", "--record", path)
    assert result.returncode == 0, result.stderr
    counted = re.search(r"player (\d) \(.*\) wins: ([BW])\+([\d.]+) as the outside engine counted", result.stdout)
    assert counted, result.stdout
    assert counted[2] == "BW"[int(counted[1]) - 1]  # the winner is who GNU Go's count says
    assert f"RE[{counted[2]}+{counted[3]}]" in path.read_text()
    assert len(read_sgf_file(path).moves) > 0
