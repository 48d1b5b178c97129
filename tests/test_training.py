"""The on-policy training loop: run layout, checkpoints, metrics, and resuming after a kill."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw.config import ConfigError, load_config
from hexzero.mctsfw.replay import ReplayBuffer
from hexzero.mctsfw.runs import RunDir, RunDirError
from hexzero.mctsfw.training import TrainSettings, Trainer
from hexzero.games.hex import Hex

ROOT = Path(__file__).resolve().parent.parent
DEFAULTS = ROOT / "hexzero.toml"
TINY = [
    "games.hex.size=3", "train.search_games=16", "train.checkpoints=3", "train.minibatch=16",
    "train.epochs=1", "train.replay_size=50", "nets.anet.hidden_layers=[16]", "train.seed=1",
]


def trainer_encoder():
    """The flat encoding the on-policy trainer's nets read (``net.encode_batch``)."""
    game = Hex(3)
    return lambda states: np.stack([game.encode(s) for s in states]).astype(np.float32)


def tiny_config(run_dir, episodes=4, extra=()):
    return load_config(DEFAULTS, None, TINY + [f"train.episodes={episodes}", f'train.run_dir="{run_dir}"', *extra])


def test_a_run_writes_config_checkpoints_metrics_and_plot(tmp_path):
    run_dir = tmp_path / "run"
    summary = Trainer(tiny_config(run_dir), run_dir, progress=False).train()
    run = RunDir(run_dir)
    assert summary["episodes"] == 4
    assert [e for e, _ in run.checkpoints()] == [0, 2, 4]  # K = 3, the first untrained
    records = run.read_metrics()
    assert [r["episode"] for r in records] == [1, 2, 3, 4]
    assert {"loss", "buffer_size", "seconds", "winner", "moves"} <= set(records[0])
    assert records[-1]["buffer_size"] == min(48, 4 * sum(len(r["moves"]) for r in records))  # each in Hex's 4 symmetries; whole positions
    game = Hex(3)
    for r in records:  # each episode's moves replay to its end and its winner
        final = game.state_after(r["moves"], r["starting_player"])
        assert game.is_final(final) and game.winner(final) == r["winner"]
    assert [r["starting_player"] for r in records] == [1, 2, 1, 2]  # alternating
    assert load_config(DEFAULTS, run.config_path)["games"]["hex"]["size"] == 3
    assert run.plot_path.read_bytes()[:4] == b"\x89PNG"


def test_resuming_neither_repeats_nor_loses_episodes(tmp_path):
    run_dir = tmp_path / "run"
    big = ["train.replay_size=500"]
    Trainer(tiny_config(run_dir, episodes=2, extra=big), run_dir, progress=False).train()
    buffer_after_2 = ReplayBuffer.load(RunDir(run_dir).latest()[1] / "replay.npz", Hex(3), trainer_encoder())
    # a crash in the middle of writing episode 3's state leaves a .tmp directory: it is ignored
    (run_dir / "resume" / "ep0003.tmp").mkdir()
    # a kill between appending episode 3's metrics line and committing: the line is dropped
    RunDir(run_dir).append_metrics({"episode": 3, "loss": 9.9})
    trainer = Trainer(tiny_config(run_dir, episodes=4, extra=big), run_dir, progress=False)
    summary = trainer.train()
    assert summary["this_time"] == 2
    records = RunDir(run_dir).read_metrics()
    assert [r["episode"] for r in records] == [1, 2, 3, 4] and records[2]["loss"] != 9.9
    # the resumed buffer continued from the saved one
    assert len(trainer.buffer) == len(buffer_after_2) + 4 * (len(records[2]["moves"]) + len(records[3]["moves"]))
    assert trainer.buffer.records[:2] == buffer_after_2.records
    assert [r.moves.tolist() for r in trainer.buffer.records] == [r["moves"] for r in records]
    assert sorted(p.name for p in (run_dir / "resume").iterdir()) == ["ep0004"]
    # and the resumed run is the run that was never stopped: the same games and buffer, and the
    # same losses (to float noise: a network saved and loaded may differ in the last bits)
    straight_dir = tmp_path / "straight"
    straight = Trainer(tiny_config(straight_dir, episodes=4, extra=big), straight_dir, progress=False)
    straight.train()
    exact = lambda rs: [{k: v for k, v in r.items() if k not in ("seconds", "search_games_per_second", "loss")}
                        for r in rs]
    again = RunDir(straight_dir).read_metrics()
    assert exact(again) == exact(records)
    assert np.allclose([r["loss"] for r in again], [r["loss"] for r in records], rtol=1e-5)
    assert straight.buffer.records == trainer.buffer.records


def test_settings_checkpoints_and_epsilon():
    config = load_config(DEFAULTS, None, ["train.episodes=200", "train.checkpoints=5"])
    s = TrainSettings.from_config(config)
    assert s.checkpoint_episodes() == [0, 50, 100, 150, 200]
    assert s.epsilon_at(0) == s.epsilon and s.epsilon_at(10_000) == s.epsilon_min


def test_the_first_temperature_moves_are_drawn_from_the_visits_the_rest_greedy(tmp_path):
    """``train.temperature_moves = 2`` with greedy move selection: moves 0 and 1 of an
    episode are drawn from the visit distribution (both moves of a 60/40 split come up),
    move 2 on is the most visited, as every move is with 0 (the default is 4)."""
    run_dir = tmp_path / "run"
    distribution = np.array([0.0, 0.6, 0.4] + [0.0] * 6)
    trainer = Trainer(tiny_config(run_dir, extra=["train.temperature_moves=2"]), run_dir, progress=False)
    trainer.np_rng = np.random.default_rng(0)  # set when a run starts or resumes
    for ply in (0, 1):
        assert {trainer.choose(distribution, ply) for _ in range(60)} == {1, 2}
    assert {trainer.choose(distribution, ply) for ply in (2, 3, 8) for _ in range(20)} == {1}
    plain = Trainer(tiny_config(tmp_path / "plain", extra=["train.temperature_moves=0"]), tmp_path / "plain",
                    progress=False)
    plain.np_rng = np.random.default_rng(0)
    assert {plain.choose(distribution, ply) for ply in (0, 1) for _ in range(20)} == {1}


def run_cli_train(processes, run_dir, episodes, *extra):
    args = [sys.executable, ROOT / "cli.py", "train", "--no-progress", "--run-dir", run_dir,
            "--episodes", episodes, *sum((["--set", s] for s in TINY), []), *extra]
    return processes.start(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_cli_train_survives_kill_9_and_resumes(tmp_path, processes):
    run_dir = tmp_path / "run"
    proc = run_cli_train(processes, run_dir, 12)
    # kill it hard as soon as a few episodes are committed
    deadline = time.time() + 240
    while time.time() < deadline:
        latest = RunDir(run_dir).latest()
        if latest and latest[0] >= 3:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = RunDir(run_dir).latest()[0]
    assert 3 <= done < 12
    proc = run_cli_train(processes, run_dir, 12)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert err == ""  # no TensorFlow start-up notices
    assert f"resuming {run_dir} after {done} episode" in out
    assert [r["episode"] for r in RunDir(run_dir).read_metrics()] == list(range(1, 13))
    # running it again has nothing left to do
    proc = run_cli_train(processes, run_dir, 12)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and f"nothing to do: {run_dir} holds 12 episodes already" in out
    # nor does a shorter run than it holds: said so, no progress bar, the run as it was
    proc = run_cli_train(processes, run_dir, 10)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "train.episodes asks for 10; to go on, ask for more (--episodes 13" in out
    assert "episode/s" not in err and "this time" not in out
    assert [r["episode"] for r in RunDir(run_dir).read_metrics()] == list(range(1, 13))


def test_cli_train_refuses_a_different_config_in_an_existing_run(tmp_path, processes):
    run_dir = tmp_path / "run"
    proc = run_cli_train(processes, run_dir, 2)
    assert proc.wait(timeout=300) == 0
    proc = run_cli_train(processes, run_dir, 2, "--set", "games.hex.size=4")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2 and "games.hex.size" in err and "--resume" in err


def test_a_policy_and_value_net_trains_on_policy_rolling_out_with_its_policy_head(tmp_path):
    """train --set net=pv_mlp crashed in fit; now the net rolls out with its policy head
    and learns each case's value: the episode's result for the player to move."""
    run_dir = tmp_path / "run"
    config = tiny_config(run_dir, episodes=2, extra=["net=pv_mlp", "nets.pv_mlp.hidden_layers=[16]"])
    trainer = Trainer(config, run_dir, progress=False)
    summary = trainer.train()
    assert summary["episodes"] == 2
    assert [p.name for _, p in RunDir(run_dir).checkpoints()] == ["pv_mlp_ep0000.keras", "pv_mlp_ep0001.keras",
                                                                 "pv_mlp_ep0002.keras"]
    records = RunDir(run_dir).read_metrics()
    assert all({"loss", "policy_loss", "value_loss"} <= set(r) for r in records)
    n = len(trainer.buffer)
    z = trainer.buffer.cases()[2]
    assert n == 4 * sum(len(r["moves"]) for r in records) and set(np.unique(z)) == {0.0, 1.0}  # Hex has no draws
    # the first episode's cases: the player to move of the first case is the starter
    first = records[0]
    starter_won = first["winner"] == first["starting_player"]
    assert z[0] == float(starter_won) and z[4] == float(not starter_won)  # cases 0-3: a position and its symmetries


def test_a_convolutional_anet_trains_on_policy(tmp_path):
    """nets.anet.conv_layers: the rollouts still feed the flat encoding; the net lays it
    out as the board itself, and its checkpoints load back as convolutional ANETs."""
    run_dir = tmp_path / "run"
    config = tiny_config(run_dir, episodes=2, extra=["nets.anet.conv_layers=[4, 4]", "nets.anet.hidden_layers=[]"])
    summary = Trainer(config, run_dir, progress=False).train()
    assert summary["episodes"] == 2
    (_, last), = RunDir(run_dir).checkpoints()[-1:]
    game = mctsfw.make_game("hex", size=3)
    net = mctsfw.load_net(last, game)
    assert net.params()["conv_layers"] == [4, 4] and net.params()["hidden_layers"] == []
    assert mctsfw.make_actor(last, game).select_action(game.initial_state()) in range(9)


def test_convolutions_on_a_game_without_a_board_are_refused_before_the_run(tmp_path):
    with pytest.raises(ConfigError, match=r"nets\.anet\.conv_layers: nim offers no board to convolve over"):
        load_config(DEFAULTS, None, ["game=nim", "nets.anet.conv_layers=[8]"])
    load_config(DEFAULTS, None, ["game=connect4", "nets.anet.conv_layers=[8]"])  # a board: accepted
    proc = subprocess.run([sys.executable, str(ROOT / "cli.py"), "train", "--run-dir", str(tmp_path / "run"),
                           "--set", "game=nim", "--set", "nets.anet.conv_layers=[8]"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and not (tmp_path / "run").exists()
    assert proc.stderr.count("\n") == 1 and "nim offers no board to convolve over" in proc.stderr


def test_config_validation_refuses_a_net_without_the_role_a_trainer_needs():
    with pytest.raises(ConfigError, match="net = 'pv_resnet'.*flat encoding.*reads planes"):
        load_config(DEFAULTS, None, TINY + ["net=pv_resnet", "train.episodes=4"])
    with pytest.raises(ConfigError, match="selfplay.net = 'anet': self-play needs a policy-and-value network"):
        load_config(DEFAULTS, None, ["selfplay.net=anet"])


def test_cli_train_refuses_a_tree_policy_that_cannot_search_with_net_rollouts(tmp_path, processes):
    """RAVE learns from the moves of random playouts, which net rollouts do not report:
    train refuses it with the reason before writing anything (it was a traceback at the
    first episode), while play keeps it with random rollouts."""
    run_dir = tmp_path / "run"
    proc = run_cli_train(processes, run_dir, 2, "--set", "tree_policy=rave")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2 and "Traceback" not in err, err
    assert "tree_policy = 'rave': the rave tree policy learns from the moves of playouts" in err
    assert not run_dir.exists()
    assert Trainer.config_problems(load_config(DEFAULTS, None, ["tree_policy=uct"])) == []
    assert load_config(DEFAULTS, None, ["tree_policy=rave"])["tree_policy"] == "rave"  # play and compare use it


def test_cli_train_refuses_a_net_it_cannot_roll_out_before_writing_anything(tmp_path, processes):
    """The issue's case: the refused command left a run directory behind, and the corrected
    command was then refused for holding "another configuration"."""
    run_dir = tmp_path / "run"
    proc = run_cli_train(processes, run_dir, 2, "--set", "net=pv_resnet")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2 and "pv_resnet" in err and "Traceback" not in err
    assert not run_dir.exists()
    proc = run_cli_train(processes, run_dir, 2)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert [r["episode"] for r in RunDir(run_dir).read_metrics()] == [1, 2]


def test_a_second_process_on_a_run_directory_is_refused_and_the_first_is_unharmed(tmp_path, processes):
    # (the first trains long enough to outlast the second's start: with 10 episodes, about
    # 2 s, it once finished before the second, starting up, asked for the lock)
    run_dir = tmp_path / "run"
    first = run_cli_train(processes, run_dir, 100)
    deadline = time.time() + 240
    while time.time() < deadline and not ((latest := RunDir(run_dir).latest()) and latest[0] >= 1):
        assert first.poll() is None, first.communicate()
        time.sleep(0.05)
    second = run_cli_train(processes, run_dir, 10)
    out, err = second.communicate(timeout=300)
    assert second.returncode == 2
    assert err.strip().splitlines() == [f"error: {run_dir} is in use by another process (pid {first.pid}): "
                                        "wait for it to finish, or stop it and resume"]
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert [r["episode"] for r in RunDir(run_dir).read_metrics()] == list(range(1, 101))


def test_the_run_lock_is_held_while_training_and_released_after(tmp_path):
    run = RunDir(tmp_path / "run")
    with run.lock():
        with run.lock():  # the same process may take it again
            pass
        code = "import sys; from hexzero.mctsfw.runs import RunDir\ntry:\n    RunDir(sys.argv[1]).lock().__enter__()\n" \
               "except ValueError as e:\n    print(e); sys.exit(2)"
        other = subprocess.run([sys.executable, "-c", code, str(run.path)], capture_output=True, text=True, cwd=ROOT)
        assert other.returncode == 2 and f"(pid {os.getpid()})" in other.stdout
    other = subprocess.run([sys.executable, "-c", code, str(run.path)], capture_output=True, text=True, cwd=ROOT)
    assert other.returncode == 0, other.stdout + other.stderr
    (tmp_path / "file").write_text("")
    with pytest.raises(RunDirError, match="is not a directory"):
        with RunDir(tmp_path / "file").lock():
            pass
