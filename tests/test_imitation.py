"""Learning from other players' games (``cli.py imitate``), outside GTP engines included,
and self-play that starts from the network it gives (``selfplay.init_net``)."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw.config import load_config
from hexzero.mctsfw.imitation import ImitationTrainer
from hexzero.mctsfw.replay import ReplayBuffer, game_result
from hexzero.mctsfw.runs import RunDir
from hexzero.mctsfw.selfplay import SelfPlayTrainer
from benchmarks.shipped import shipped_model
from tests.test_training import DEFAULTS, ROOT

TEACHER = shipped_model("connect4")
#: our own GTP engine, standing in for an outside one (GNU Go on Go)
OWN_ENGINE = f"gtp:{sys.executable} {ROOT / 'cli.py'} gtp --game connect4 --search-games 30 --seed 3"
SMALL = ['game="connect4"', "nets.pv_mlp.hidden_layers=[32]", "mcts.search_games=30", "imitate.epochs=1"]


def config(run_dir, *extra):
    return load_config(DEFAULTS, None, [*SMALL, f'imitate.run_dir="{run_dir}"', *extra])


def cli(*args, **kwargs):
    return subprocess.run([sys.executable, ROOT / "cli.py", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, **kwargs)


def test_imitation_learns_from_an_outside_engine_played_by_workers(tmp_path):
    """Two worker processes, each with its own engine, play the games; every game is in
    the metrics once with its players, its moves replay to its winner, and the replay
    records teach the moves played after the random opening and the results."""
    run_dir = tmp_path / "run"
    done = cli("imitate", "--game", "connect4", "--run-dir", run_dir, "--generations", 2, "--p1", OWN_ENGINE,
               "--p2", "mcts", "--workers", 2, "--opening-moves", 3, "--no-progress",
               "--set", "imitate.games_per_generation=4", "--set", "nets.pv_mlp.hidden_layers=[32]",
               "--set", "mcts.search_games=30")
    assert done.returncode == 0, done.stderr
    run = RunDir(run_dir)
    records = run.read_metrics()
    games = [r for r in records if r["kind"] == "game"]
    steps = [r for r in records if r["kind"] == "generation"]
    assert [r["game"] for r in games] == list(range(1, 9)) and len(steps) == 2
    engine, searcher = "gtp:hexzero 0.1.0", "mcts(30 games)"  # they swap sides every game
    assert [r["players"] for r in games[:2]] == [{"1": engine, "2": searcher}, {"1": searcher, "2": engine}]
    assert all(r["players"] == games[(r["game"] - 1) % 2]["players"] for r in games)
    assert all(0 <= r["move_accuracy"] <= 1 for r in steps)
    assert [n for n, _ in run.checkpoints()] == [0, 1, 2]
    assert (run_dir / "tb").is_dir()

    game = mctsfw.make_game("connect4")
    buffer = ReplayBuffer.load(run.latest()[1] / "replay.npz", game, lambda s: np.stack([game.encode(x) for x in s]))
    assert [r.moves.tolist() for r in buffer.records] == [r["moves"] for r in games]
    for r, recorded in zip(games, buffer.records):
        assert r["opening"] == 3
        final = game.state_after(r["moves"], r["starting_player"])
        assert game.is_final(final) and game.winner(final) == r["winner"]
        assert recorded.targeted().tolist() == list(range(3, len(r["moves"])))  # the opening is not learnt
        for i, state in enumerate(recorded.states(game)):
            if i >= 3:
                assert recorded.counts(i, game.num_actions).tolist() == np.eye(game.num_actions, dtype=int)[r["moves"][i]].tolist()
            assert recorded.values[i] == game_result(r["winner"], game.current_player(state))


def test_epochs_0_records_the_games_and_learns_nothing_then_distill_learns_them(tmp_path):
    """With ``imitate.epochs = 0`` a run only records its teachers' games: the network
    stays the one it started with, the generation's line has no losses, and ``distill``
    learns from the run's buffer every position after the openings."""
    run_dir = tmp_path / "run"
    done = cli("imitate", "--game", "connect4", "--run-dir", run_dir, "--generations", 2, "--no-progress",
               *(part for value in SMALL[1:3] + ["imitate.epochs=0", "imitate.games_per_generation=3"]
                 for part in ("--set", value)))
    assert done.returncode == 0, done.stderr
    assert f"next: hexzero distill {run_dir}" in done.stdout  # nothing learnt yet: distill is what comes next
    run = RunDir(run_dir)
    records = run.read_metrics()
    steps = [r for r in records if r["kind"] == "generation"]
    games = [r for r in records if r["kind"] == "game"]
    assert len(games) == 6 and len(steps) == 2
    assert all(r["cases"] == 0 and "loss" not in r and "move_accuracy" not in r for r in steps)
    game, net_class = mctsfw.make_game("connect4"), mctsfw.default_registries().nets.get("pv_mlp")
    first, last = (net_class.load(path, game).model.get_weights() for _, path in run.checkpoints()[::2])
    assert len(run.checkpoints()) == 3 and all(np.array_equal(a, b) for a, b in zip(first, last))
    learnt = sum(len(r["moves"]) - r["opening"] for r in games)
    done = cli("distill", run_dir, "--set", "game=\"connect4\"", "--run-dir", tmp_path / "student", "--epochs", 1,
               "--set", "nets.pv_mlp.hidden_layers=[32]", "--set", "distill.validation_share=0",
               "--set", "distill.average_positions=false", "--set", "distill.augment=false", "--no-progress")
    assert done.returncode == 0, done.stderr
    student = [r for r in RunDir(tmp_path / "student").read_metrics() if "cases" in r]
    assert sum(r["cases"] for r in student) == learnt


def test_a_network_learns_to_play_its_teachers_moves(tmp_path):
    """The shipped Connect Four network plays itself after random openings; the student
    predicts more and more of the moves of games it has not learnt yet."""
    run_dir = tmp_path / "run"
    trainer = ImitationTrainer(config(run_dir, f'imitate.player1="{TEACHER}"', f'imitate.player2="{TEACHER}"',
                                      "imitate.opening_moves=4", "imitate.generations=4",
                                      "imitate.games_per_generation=25", "imitate.epochs=4", "imitate.minibatch=32",
                                      "nets.pv_mlp.hidden_layers=[512, 256]"), run_dir, progress=False)
    trainer.train()
    accuracy = [r["move_accuracy"] for r in trainer.run.read_metrics() if r["kind"] == "generation"]
    assert accuracy[-1] >= accuracy[0] + 0.15, accuracy


def test_imitation_survives_kill_9_and_resumes_without_losing_or_repeating_a_game(tmp_path, processes):
    run_dir = tmp_path / "run"
    args = [sys.executable, ROOT / "cli.py", "imitate", "--game", "connect4", "--run-dir", run_dir, "--generations", 3,
            "--p1", "mcts", "--p2", "random", "--no-progress", "--set", "imitate.games_per_generation=5",
            "--set", "nets.pv_mlp.hidden_layers=[32]", "--set", "mcts.search_games=200"]
    proc = processes.start(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not ((latest := RunDir(run_dir).latest()) and latest[0] >= 4):
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = RunDir(run_dir).latest()[0]
    assert 4 <= done < 18
    proc = processes.start(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    records = RunDir(run_dir).read_metrics()
    generations = sum(r["kind"] == "generation" for r in records if r["step"] <= done)
    assert f"resuming {run_dir} after {generations} generation" in out  # the run's own unit, not its steps
    assert [r["step"] for r in records] == list(range(1, 19))
    assert [r["game"] for r in records if r["kind"] == "game"] == list(range(1, 16))


def test_the_engine_referees_go_with_its_final_score(tmp_path):
    go_engine = f"gtp:{sys.executable} {ROOT / 'cli.py'} gtp --game go --size 5 --p random --seed 1"
    run_dir = tmp_path / "run"
    trainer = ImitationTrainer(load_config(DEFAULTS, None, [
        'game="go"', "games.go.size=5", "nets.pv_mlp.hidden_layers=[16]", f'imitate.run_dir="{run_dir}"',
        f'imitate.player1="{go_engine}"', 'imitate.player2="random"', 'imitate.referee="engine"',
        "imitate.generations=1", "imitate.games_per_generation=2", "imitate.epochs=1"]), run_dir, progress=False)
    trainer.train()
    game = trainer.game
    for r in (r for r in trainer.run.read_metrics() if r["kind"] == "game"):
        final = game.state_after(r["moves"], r["starting_player"])
        assert r["score"] == game.score(final)  # our engine counts the area as it stands
        assert r["winner"] == (1 if r["score"] > 0 else 2 if r["score"] < 0 else None)
        assert r["opening"] == 2 and game.pass_action not in r["moves"][:2]


@pytest.mark.parametrize("args, message", [
    (["--p1", "human"], "imitate.player1: human cannot play here: the games are played without a person"),
    (["--referee", "engine"], 'imitate.referee = "engine": neither player is an outside engine'),
    (["--init-net", "nothere.keras"], "imitate.init_net = 'nothere.keras': no such model file"),
])
def test_bad_imitation_settings_are_refused_in_one_line(tmp_path, args, message):
    done = cli("imitate", "--game", "connect4", "--run-dir", tmp_path / "run", *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "run").exists()


def test_self_play_starts_from_the_network_that_init_net_names(tmp_path):
    run_dir = tmp_path / "selfplay"
    selfplay = load_config(DEFAULTS, None, [
        'game="connect4"', f'selfplay.run_dir="{run_dir}"', f'selfplay.init_net="{TEACHER}"', "selfplay.generations=1",
        "selfplay.games_per_generation=1", "selfplay.search_games=8", "selfplay.epochs=1",
        "nets.pv_mlp.learning_rate=0.0002"])
    trainer = SelfPlayTrainer(selfplay, run_dir, progress=False)
    trainer.train()
    from hexzero.mctsfw.checkpoints import load_net

    start, teacher = load_net(RunDir(run_dir).checkpoints()[0][1], trainer.game), load_net(TEACHER, trainer.game)
    states = [trainer.game.state_after(moves, 1) for moves in ([], [3], [3, 3, 2], [0, 6, 1, 5])]
    x = teacher.encode_batch(states)
    assert np.allclose(start.forward(x), teacher.forward(x), atol=1e-6)
    # it trains on at the run's learning rate, not the one saved with the file
    assert teacher.learning_rate != pytest.approx(0.0002)
    assert start.learning_rate == pytest.approx(0.0002) and trainer.net.learning_rate == pytest.approx(0.0002)
    # a network of another net, or of another game, is refused before the run starts
    done = cli("selfplay", "--game", "connect4", "--run-dir", tmp_path / "other", "--set", 'selfplay.net="pv_resnet"',
               "--init-net", TEACHER)
    assert done.returncode == 2 and "a pv_mlp network, not the run's net (pv_resnet)" in done.stderr
    done = cli("selfplay", "--game", "hex", "--run-dir", tmp_path / "other", "--init-net", TEACHER)
    assert done.returncode == 2 and str(TEACHER) in done.stderr and "Traceback" not in done.stderr
