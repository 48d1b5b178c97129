"""AlphaZero-style self-play generations: data, checkpoints, gating, and resuming after a kill."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from hexzero.mctsfw.config import load_config
from hexzero.mctsfw.replay import ReplayBuffer
from hexzero.mctsfw.runs import RunDir
from hexzero.mctsfw.selfplay import SelfPlayTrainer
from tests.conftest import STOP_STATUS, descendants, wait_until_gone
from tests.test_training import DEFAULTS, ROOT

TINY = [
    "games.hex.size=3", "selfplay.games_per_generation=3", "selfplay.search_games=24", "selfplay.batch_size=8",
    "nets.pv_mlp.hidden_layers=[16]", "selfplay.seed=1", "selfplay.epochs=1",
]


def tiny(run_dir, generations=2, extra=()):
    return load_config(DEFAULTS, None, TINY + [f"selfplay.generations={generations}", f'selfplay.run_dir="{run_dir}"', *extra])


def test_generations_write_checkpoints_metrics_and_value_targets(tmp_path):
    run_dir = tmp_path / "run"
    trainer = SelfPlayTrainer(tiny(run_dir, extra=["selfplay.gating=true", "selfplay.gating_games=2"]), run_dir,
                              progress=False)
    summary = trainer.train()
    run = RunDir(run_dir)
    assert summary["generations"] == 2
    assert [e for e, _ in run.checkpoints()] == [0, 1, 2]
    records = run.read_metrics()
    games = [r for r in records if r["kind"] == "game"]
    generations = [r for r in records if r["kind"] == "generation"]
    assert [r["game"] for r in games] == [1, 2, 3, 4, 5, 6] and len(generations) == 2
    assert all("promoted" in r and 0 <= r["gating_score"] <= 1 for r in generations)
    assert [r["step"] for r in records] == list(range(1, 9))
    # every position in Hex's 4 symmetries, with z for the player to move (Hex has no draws)
    assert len(trainer.buffer) == 4 * sum(len(r["moves"]) for r in games)
    x, y, z = trainer.buffer.cases()
    assert len(x) == len(trainer.buffer) and set(np.unique(z)) <= {0.0, 1.0}
    assert np.allclose(y.sum(axis=1), 1.0)
    # each game's metrics line carries its moves, which replay to its end and its winner
    assert [r.moves.tolist() for r in trainer.buffer.records] == [r["moves"] for r in games]
    for r in games:
        final = trainer.game.state_after(r["moves"], r["starting_player"])
        assert trainer.game.is_final(final) and trainer.game.winner(final) == r["winner"]


def test_mean_value_targets_lie_between_z_and_q(tmp_path):
    run_dir = tmp_path / "run"
    trainer = SelfPlayTrainer(tiny(run_dir, generations=1, extra=['selfplay.value_target="mean"']), run_dir,
                              progress=False)
    trainer.train()
    z = trainer.buffer.cases()[2]
    assert ((z > 0) & (z < 1)).any()


@pytest.mark.parametrize("workers", [1, 2])
def test_selfplay_survives_kill_9_and_resumes(tmp_path, workers, processes):
    run_dir = tmp_path / "run"

    def start():
        return start_selfplay(processes, run_dir, 4, workers)

    proc = start()
    deadline = time.time() + 240
    while time.time() < deadline:
        latest = RunDir(run_dir).latest()
        if latest and latest[0] >= 5:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = RunDir(run_dir).latest()[0]
    assert 5 <= done < 16
    from hexzero.games.hex import Hex

    game = Hex(3)
    buffer = ReplayBuffer.load(RunDir(run_dir).latest()[1] / "replay.npz", game,
                               lambda states: np.stack([game.encode(s) for s in states]))
    proc = start()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    records = RunDir(run_dir).read_metrics()
    generations = sum(r["kind"] == "generation" for r in records if r["step"] <= done)
    assert f"resuming {run_dir} after {generations} generation" in out  # the run's own unit, not its steps
    assert [r["step"] for r in records] == list(range(1, 17))
    assert [r["game"] for r in records if r["kind"] == "game"] == list(range(1, 13))
    assert len(buffer) > 0
    # the games kept at the kill are the first ones of the finished run's metrics
    moves = [r["moves"] for r in records if r["kind"] == "game"]
    assert [r.moves.tolist() for r in buffer.records] == moves[: len(buffer.records)]


def test_worker_processes_play_the_same_games_as_one_process(tmp_path):
    """Each game's random numbers come from its own seed, so two worker processes give
    the run that one process gives: the same games, cases and networks."""
    runs = {}
    for workers in (1, 2):
        run_dir = tmp_path / f"workers{workers}"
        trainer = SelfPlayTrainer(tiny(run_dir, extra=[f"selfplay.workers={workers}"]), run_dir, progress=False)
        trainer.train()
        games = [{k: v for k, v in r.items() if k != "seconds"} for r in RunDir(run_dir).read_metrics()
                 if r["kind"] == "game"]
        runs[workers] = games, trainer.buffer, trainer.net
        assert not (run_dir / "workers_net.keras").exists()
    (games1, buffer1, net1), (games2, buffer2, net2) = runs[1], runs[2]
    assert games1 == games2 and len(games1) == 6
    n = len(buffer1)
    assert n == len(buffer2) > 0 and buffer1.records == buffer2.records
    (x1, y1, z1), (x2, y2, z2) = buffer1.cases(), buffer2.cases()
    assert np.array_equal(x1, x2) and np.array_equal(y1, y2) and np.array_equal(z1, z2)
    assert np.allclose(net1.evaluate(x1)[0], net2.evaluate(x1)[0], atol=1e-5)


def start_selfplay(processes, run_dir, generations, workers, output=subprocess.PIPE):
    args = [sys.executable, ROOT / "cli.py", "selfplay", "--no-progress", "--run-dir", run_dir,
            "--generations", generations, "--workers", workers, *sum((["--set", s] for s in TINY), [])]
    return processes.start(args, stdout=output, stderr=output, text=True)


def wait_for_workers_playing(proc, run_dir, workers=2):
    """The pids of ``proc``'s worker processes, once they have played a game."""
    deadline = time.time() + 240
    while time.time() < deadline:
        assert proc.poll() is None, f"exit {proc.returncode}"
        latest = RunDir(run_dir).latest()
        below = descendants(proc.pid)
        if latest and latest[0] >= 1 and len(below) >= workers:
            return below
        time.sleep(0.05)
    raise AssertionError("the self-play workers did not start")


def test_the_cli_counts_a_self_play_run_in_generations(tmp_path, processes):
    run_dir = tmp_path / "run"
    out, err = start_selfplay(processes, run_dir, 2, 1).communicate(timeout=300)
    assert f"2 generations in {run_dir} (2 generations this time" in out, out + err
    out, err = start_selfplay(processes, run_dir, 3, 1).communicate(timeout=300)
    assert f"resuming {run_dir} after 2 generations (selfplay.generations = 3)" in out
    assert f"3 generations in {run_dir} (1 generation this time" in out, out + err


def test_self_play_workers_exit_when_their_parent_is_killed(tmp_path, processes):
    """Orphaned workers played on, each keeping ~600 MB; now they notice and exit."""
    run_dir = tmp_path / "run"
    proc = start_selfplay(processes, run_dir, 50, 2, output=subprocess.DEVNULL)  # no pipes an orphan would keep open
    below = wait_for_workers_playing(proc, run_dir)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert wait_until_gone(below, 5) == []


@pytest.mark.parametrize("stop", ["ctrl_c", "terminate"])
def test_ctrl_c_or_sigterm_stops_self_play_with_one_line_and_leaves_no_process(tmp_path, processes, stop):
    run_dir = tmp_path / "run"
    proc = start_selfplay(processes, run_dir, 50, 2)
    below = wait_for_workers_playing(proc, run_dir)
    getattr(processes, stop)(proc)  # Ctrl-C: every process of the group; SIGTERM: the command alone
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == STOP_STATUS[stop], err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [f"interrupted: resume with hexzero selfplay --resume {run_dir}"], err
    assert wait_until_gone(below, 5) == []
    # and it resumes from where it was stopped
    done = RunDir(run_dir).latest()[0]
    proc = start_selfplay(processes, run_dir, 1, 1)  # a shorter run: nothing left but to finish generation 1
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and err == "", err
    generations = sum(r["kind"] == "generation" for r in RunDir(run_dir).read_metrics() if r["step"] <= done)
    assert f"resuming {run_dir} after {generations} generation" in out  # the run's own unit, not its steps


# ---- resignation ---------------------------------------------------------------------------------------
def resigning(run_dir, threshold, share, min_moves=0, generations=1, extra=()):
    return tiny(run_dir, generations, [f"selfplay.resign_threshold={threshold}", f"selfplay.no_resign_share={share}",
                                       f"selfplay.resign_min_moves={min_moves}", *extra])


def test_a_threshold_that_always_triggers_ends_games_early_and_the_resigner_loses(tmp_path):
    # 1.0 is above every value but a sure win's (a proven one): from move 2 on, the first
    # player to move without a proven win resigns
    run_dir = tmp_path / "run"
    trainer = SelfPlayTrainer(resigning(run_dir, 1.0, 0.0, min_moves=2), run_dir, progress=False)
    trainer.train()
    game = trainer.game
    records = RunDir(run_dir).read_metrics()
    games = [r for r in records if r["kind"] == "game"]
    for r in games:
        state = game.state_after(r["moves"], r["starting_player"])
        assert len(r["moves"]) >= 2 and not game.is_final(state)
        # the player to move resigned and lost
        assert r["resigned"] == game.current_player(state)
        assert r["winner"] == 3 - r["resigned"] and r["no_resign"] is False and "would_resign" not in r
        for k in range(2, len(r["moves"])):  # who played on from move 2 held a sure win
            assert best_result(game, game.state_after(r["moves"][:k], r["starting_player"])) == 1.0
    generation = next(r for r in records if r["kind"] == "generation")
    assert generation["resigned_games"] == len(games) == 3
    assert generation["no_resign_games"] == 0 and generation["false_positive_rate"] is None
    # the resigned games train as usual: their positions (in 4 symmetries), z from the result
    assert len(trainer.buffer) == 4 * sum(len(r["moves"]) for r in games)
    for record in trainer.buffer.records:
        movers = [game.current_player(s) for s in record.states(game)][:len(record.moves)]
        assert record.values.tolist() == [float(m == record.winner) for m in movers]


def test_no_resign_games_play_to_the_end_and_count_the_false_positives(tmp_path):
    run_dir = tmp_path / "run"
    trainer = SelfPlayTrainer(resigning(run_dir, 1.0, 1.0), run_dir, progress=False)
    trainer.train()
    records = RunDir(run_dir).read_metrics()
    games = [r for r in records if r["kind"] == "game"]
    false_positives = 0
    for r in games:
        final = trainer.game.state_after(r["moves"], r["starting_player"])
        assert trainer.game.is_final(final) and trainer.game.winner(final) == r["winner"]
        assert r["resigned"] is None and r["no_resign"] is True
        # the opener would have resigned at once; a false positive when it went on to win
        would = r["would_resign"]
        assert (would["player"], would["move"]) == (r["starting_player"], 0)
        assert would["false_positive"] == (r["winner"] == r["starting_player"])
        false_positives += would["false_positive"]
    generation = next(r for r in records if r["kind"] == "generation")
    assert generation["resigned_games"] == 0
    assert generation["no_resign_games"] == generation["would_resign_games"] == len(games) == 3
    assert generation["false_positives"] == false_positives
    assert generation["false_positive_rate"] == pytest.approx(false_positives / 3)


def test_resignation_off_by_default_leaves_the_games_as_they_were(tmp_path):
    games = {}
    for name, extra in (("default", []), ("off", ["selfplay.resign_threshold=0.0", "selfplay.no_resign_share=1.0"])):
        run_dir = tmp_path / name
        SelfPlayTrainer(tiny(run_dir, 1, extra), run_dir, progress=False).train()
        records = RunDir(run_dir).read_metrics()
        games[name] = [(r["moves"], r["winner"]) for r in records if r["kind"] == "game"]
        assert not any("resigned" in r or "false_positives" in r for r in records)
    assert games["default"] == games["off"]


def test_which_games_never_resign_follows_from_the_seed_and_the_game_number():
    from hexzero.mctsfw.selfplay import SelfPlaySettings, plays_to_the_end

    s = SelfPlaySettings.from_config(load_config(DEFAULTS, None, ["selfplay.no_resign_share=0.25"]))
    chosen = [plays_to_the_end(s, number, 7) for number in range(1, 2001)]
    assert chosen == [plays_to_the_end(s, number, 7) for number in range(1, 2001)]
    assert chosen != [plays_to_the_end(s, number, 8) for number in range(1, 2001)]
    assert 0.2 < np.mean(chosen) < 0.3


def test_the_resignation_counts_survive_an_interrupted_generation(tmp_path):
    """A run stopped in the middle of a generation resumes with that generation's counts
    so far, and its metrics are those of a run never stopped."""
    extra = ["selfplay.games_per_generation=4"]

    def generations(run_dir):  # the resignation counts of each generation (losses differ in the last digits)
        keep = ("generation", "resigned_games", "no_resign_games", "would_resign_games", "false_positives",
                "false_positive_rate")
        return [{k: r[k] for k in keep} for r in RunDir(run_dir).read_metrics() if r["kind"] == "generation"]

    straight = tmp_path / "straight"
    SelfPlayTrainer(resigning(straight, 0.6, 0.5, generations=2, extra=extra), straight, progress=False).train()

    stopped = tmp_path / "stopped"
    trainer = SelfPlayTrainer(resigning(stopped, 0.6, 0.5, generations=2, extra=extra), stopped, progress=False)
    steps = trainer.steps

    def stop_after_two_games():
        for i, step in enumerate(steps()):
            yield step
            if i == 1:
                raise KeyboardInterrupt

    trainer.steps = stop_after_two_games
    with pytest.raises(KeyboardInterrupt):
        trainer.train()
    assert RunDir(stopped).latest()[0] == 2
    SelfPlayTrainer(resigning(stopped, 0.6, 0.5, generations=2, extra=extra), stopped, progress=False).train()
    counts = generations(straight)
    assert generations(stopped) == counts
    assert sum(g["resigned_games"] + g["no_resign_games"] for g in counts) > 0  # the counts are not all zero


@pytest.mark.parametrize("setting, message", [
    ("selfplay.resign_threshold=1.5", "selfplay.resign_threshold: must be a number from 0 to 1, not 1.5"),
    ("selfplay.no_resign_share=-0.1", "selfplay.no_resign_share: must be a number from 0 to 1, not -0.1"),
    ("selfplay.resign_min_moves=-1", "selfplay.resign_min_moves: must be a whole number >= 0, not -1"),
])
def test_bad_resignation_settings_are_refused_in_one_line(tmp_path, setting, message):
    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "selfplay", "--no-progress", "--run-dir",
                             str(tmp_path / "run"), "--set", setting], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()


# ---- proofs ---------------------------------------------------------------------------------------------
def test_self_play_can_end_a_game_at_a_proof_and_learns_the_proven_values(tmp_path):
    """On 3x3 Hex the search proves most positions soon: with end_at_proof a game stops at
    the first proven position (after at least one move), its winner the proven one; the
    value targets of proven positions are their proven results."""
    run_dir = tmp_path / "run"
    trainer = SelfPlayTrainer(tiny(run_dir, generations=1, extra=["selfplay.end_at_proof=true"]), run_dir,
                              progress=False)
    trainer.train()
    games = [r for r in RunDir(run_dir).read_metrics() if r["kind"] == "game"]
    game = trainer.game
    ended = [r for r in games if r["ended_at_proof"]]
    assert ended, games
    for r in ended:
        state = game.state_after(r["moves"], r["starting_player"])
        assert not game.is_final(state)  # stopped before the end
        # the recorded winner is right: brute force from the position where the game stopped
        assert best_result(game, state) == (1.0 if r["winner"] == game.current_player(state) else 0.0)
    x, y, z = trainer.buffer.cases()
    assert set(np.unique(z)) <= {0.0, 1.0}  # proven or played out, Hex has no draws


def best_result(game, state):
    """The result for the player to move with best play (negamax over every move)."""
    if game.is_final(state):
        return 0.0  # the player who just moved won (Hex has no draws)
    return max(1.0 - best_result(game, game.next_state(state, a)) for a in game.legal_actions(state))


# ---- Gumbel AlphaZero ------------------------------------------------------------------------------------
def test_gumbel_self_play_learns_the_improved_policy_in_lock_step(tmp_path):
    """With selfplay.tree_policy = "gumbel" (8 search games a move, games in lock-step
    sharing the policy) every position's policy target is the improved policy: weight
    on every legal move of a fresh position, not visit counts."""
    run_dir = tmp_path / "run"
    trainer = SelfPlayTrainer(tiny(run_dir, generations=1, extra=['selfplay.tree_policy="gumbel"',
                                                                 "selfplay.search_games=8", "selfplay.lockstep=3"]),
                              run_dir, progress=False)
    trainer.train()
    games = [r for r in RunDir(run_dir).read_metrics() if r["kind"] == "game"]
    assert len(games) == 3
    first = trainer.buffer.records[0]
    opening = first.counts(0, trainer.game.num_actions)
    assert (opening > 0).sum() == 9  # every cell of the empty 3x3 board, from 8 search games
    x, y, z = trainer.buffer.cases()
    assert np.allclose(y.sum(axis=1), 1.0)


def test_self_play_refuses_a_tree_policy_that_reads_no_priors(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "selfplay", "--no-progress", "--run-dir",
                             str(tmp_path / "run"), "--set", 'selfplay.tree_policy="uct"'],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "selfplay.tree_policy = 'uct'" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "run").exists()


# ---- playout cap randomization and value targets -------------------------------------------------------
def test_playout_cap_randomization_learns_the_full_searches_alone(tmp_path):
    """With full_search_share = 0.5 about half the moves get the full search and become
    training positions; the others a 4-game search; the games are the same in another run."""
    extra = ["selfplay.full_search_share=0.5", "selfplay.fast_search_games=4", "selfplay.lockstep=3"]
    trainers = []
    for name in ("a", "b"):
        trainer = SelfPlayTrainer(tiny(tmp_path / name, generations=1, extra=extra), tmp_path / name, progress=False)
        trainer.train()
        trainers.append(trainer)
    records = trainers[0].buffer.records
    moves, targeted = sum(len(r) for r in records), sum(len(r.targeted()) for r in records)
    assert 0 < targeted < moves and len(trainers[0].buffer) == 4 * targeted  # each in Hex's 4 symmetries
    games = [r for r in RunDir(tmp_path / "a").read_metrics() if r["kind"] == "game"]
    assert sum(r["full_searches"] for r in games) == targeted
    assert [r.moves.tolist() for r in trainers[1].buffer.records] == [r.moves.tolist() for r in records]


def test_value_targets_follow_the_declared_mix_of_result_and_root_value(tmp_path):
    """"q" learns the root's value (seldom exactly 0 or 1 on 3x3 Hex's unproven positions);
    "mix" with value_mix = 0 is the result itself."""
    q = SelfPlayTrainer(tiny(tmp_path / "q", generations=1, extra=['selfplay.value_target="q"']), tmp_path / "q",
                        progress=False)
    q.train()
    z = q.buffer.cases()[2]
    assert ((z > 0) & (z < 1)).any()
    plain = SelfPlayTrainer(tiny(tmp_path / "z", generations=1), tmp_path / "z", progress=False)
    mixed = SelfPlayTrainer(tiny(tmp_path / "m", generations=1, extra=['selfplay.value_target="mix"',
                                                                       "selfplay.value_mix=0.0"]),
                            tmp_path / "m", progress=False)
    plain.train()
    mixed.train()
    assert np.array_equal(plain.buffer.cases()[2], mixed.buffer.cases()[2])


# ---- several board sizes in one run (selfplay.sizes) ------------------------------------------------------
MIXED = ['selfplay.net="pv_resnet"', 'nets.pv_resnet.heads="convolutional"', "nets.pv_resnet.blocks=1",
         "nets.pv_resnet.filters=8", "nets.pv_resnet.value_hidden=8", "games.hex.size=4", "selfplay.sizes=[3, 4]"]


def test_one_run_plays_and_learns_every_board_size_in_turn(tmp_path):
    """Games take the sizes in turn; each size's positions go to its own buffer, which
    survives a resume; the network trains on both and its checkpoints play either size."""
    from hexzero import mctsfw
    from hexzero.games.hex import Hex

    run_dir = tmp_path / "run"
    trainer = SelfPlayTrainer(tiny(run_dir, extra=[*MIXED, "selfplay.games_per_generation=4"]), run_dir,
                              progress=False)
    trainer.train()
    games = [r for r in RunDir(run_dir).read_metrics() if r["kind"] == "game"]
    sizes = [3 if (r["game"] - 1) % 2 == 0 else 4 for r in games]
    for record, size in zip(games, sizes):  # every game is a finished game of its size
        final = Hex(size).state_after(record["moves"], record["starting_player"])
        assert Hex(size).is_final(final) and Hex(size).winner(final) == record["winner"]
    assert [r.moves.tolist() for r in trainer.buffer.records] == [r["moves"] for r, s in zip(games, sizes) if s == 4]
    small = trainer.other_buffers[3]
    assert [r.moves.tolist() for r in small.records] == [r["moves"] for r, s in zip(games, sizes) if s == 3]
    generation = [r for r in RunDir(run_dir).read_metrics() if r["kind"] == "generation"][-1]
    cases = [len(buffer.cases(average_positions=True)[0]) for buffer in (trainer.buffer, small)]
    assert generation["cases"] == sum(cases) and min(cases) > 0  # every size's cases trained
    resumed = SelfPlayTrainer(tiny(run_dir, generations=3, extra=[*MIXED, "selfplay.games_per_generation=4"]), run_dir,
                              progress=False)
    resumed.load_state(RunDir(run_dir).latest()[1], {"generation": 2, "games_done": 0})
    assert [r.moves.tolist() for r in resumed.other_buffers[3].records] == [r.moves.tolist() for r in small.records]
    checkpoint = RunDir(run_dir).checkpoints()[-1][1]
    for size in (3, 4, 5):
        game = Hex(size)
        assert mctsfw.make_actor(checkpoint, game).select_action(game.initial_state()) in range(size * size)


def test_a_run_of_several_sizes_plays_the_same_games_with_worker_processes(tmp_path):
    records = {}
    for workers in (1, 2):
        run_dir = tmp_path / f"workers{workers}"
        SelfPlayTrainer(tiny(run_dir, generations=1, extra=[*MIXED, f"selfplay.workers={workers}"]), run_dir,
                        progress=False).train()
        records[workers] = [r["moves"] for r in RunDir(run_dir).read_metrics() if r["kind"] == "game"]
    assert records[1] == records[2] and len(records[1]) == 3


@pytest.mark.parametrize("settings, message", [
    (MIXED[1:], "selfplay.sizes: several board sizes need a network that plays every one (pv_resnet with heads = "
                '"convolutional"); for hex(size=3): pv_mlp: expects 34 inputs but hex(size=3) encodes 20'),
    ([*MIXED, "selfplay.sizes=[3, 5]"], "selfplay.sizes = [3, 5]: give games.hex.size = 4 too"),
    ([*MIXED, 'game="connect4"'], "selfplay.sizes: connect4 has no board size (Hex, Go and Gomoku have)"),
    ([*MIXED, 'nets.pv_resnet.heads="dense"'], "selfplay.sizes: several board sizes need a network that plays every "
                                                "one"),
])
def test_sizes_a_run_cannot_play_are_refused_in_one_line(tmp_path, settings, message):
    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "selfplay", "--no-progress", "--run-dir",
                             str(tmp_path / "run"), *sum((["--set", s] for s in settings), [])],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()


def test_train_steps_fix_the_training_of_a_generation_whatever_the_buffer_holds(tmp_path):
    """selfplay.train_steps: each generation takes that many minibatches from the buffer
    (its cases drawn without replacement, then again), however many games it holds; with
    several sizes each size takes its share of them."""
    from hexzero.mctsfw.replay import draw_cases

    drawn = draw_cases(5, 12, np.random.default_rng(0))
    assert sorted(drawn[:5]) == sorted(drawn[5:10]) == list(range(5)) and len(set(drawn[10:])) == 2
    for extra, runs in (([], "one"), ([*MIXED, "selfplay.games_per_generation=4"], "mixed")):
        run_dir = tmp_path / runs
        trainer = SelfPlayTrainer(tiny(run_dir, extra=[*extra, "selfplay.train_steps=3", "selfplay.minibatch=8"]),
                                  run_dir, progress=False)
        trainer.train()
        generations = [r for r in RunDir(run_dir).read_metrics() if r["kind"] == "generation"]
        stored = len(trainer.buffer) + sum(len(b) for b in trainer.other_buffers.values())
        assert stored > 3 * 8  # more than the steps take: the steps, not the buffer, say how much is learnt
        assert [abs(r["cases"] - 24) <= 1 for r in generations] == [True, True]  # the sizes' shares round
        assert all(np.isfinite(r["loss"]) for r in generations)


def test_teacher_games_keep_their_share_of_each_generations_training(tmp_path):
    """selfplay.teacher_games: games recorded elsewhere (a replay file) train beside
    self-play's, ``teacher_share`` of each generation's cases; a teacher that always opens
    in a corner teaches the network that opening, which self-play alone does not."""
    from hexzero.mctsfw import make_game
    from hexzero.mctsfw.records import RecordedGame

    game = make_game("hex", size=3)
    opening = np.zeros(game.num_actions)
    opening[2] = 10  # the teacher opens in the corner (row 0, column 2), then 4, 5, 8 end it
    teacher = ReplayBuffer(1000, game, lambda states: np.zeros((len(states), 1)))
    quiet = np.zeros(game.num_actions)
    for _ in range(20):
        teacher.add(RecordedGame.from_targets(game.num_actions, 1, [2, 4, 5, 8, 1],
                                              [opening, quiet, quiet, quiet, quiet], [1.0, 0, 0, 0, 0], 1))
    teacher.save(tmp_path / "teacher.npz")
    steps = ["selfplay.train_steps=20", "selfplay.minibatch=16", "nets.pv_mlp.learning_rate=0.01"]
    corner = {}
    for share in (0, 0.75):
        run_dir = tmp_path / f"run{share}"
        extra = [*steps, f'selfplay.teacher_games=["{tmp_path / "teacher.npz"}"]', f"selfplay.teacher_share={share}"]
        trainer = SelfPlayTrainer(tiny(run_dir, extra=extra), run_dir, progress=False)
        trainer.train()
        generations = [r for r in RunDir(run_dir).read_metrics() if r["kind"] == "generation"]
        assert [r["cases"] for r in generations] == [320, 320]  # train_steps * minibatch, whoever played them
        assert [r.get("teacher_cases", 0) for r in generations] == [round(320 * share)] * 2
        prior = trainer.net.policy(game.initial_state())
        corner[share] = prior[2] + prior[6]  # the corner and its turn by 180 degrees: one position, two cases
    assert corner[0.75] > 0.5 > corner[0], corner


@pytest.mark.parametrize("source, message", [
    ("missing.npz", "selfplay.teacher_games: {tmp}/missing.npz: no such run directory or replay file"),
    ("junk.npz", "selfplay.teacher_games: {tmp}/junk.npz: not a replay buffer file of this hexzero"),
    ("size4.npz", "selfplay.teacher_games: {tmp}/size4.npz holds games of 16 actions, not hex(size=3"),
    ("empty.npz", "selfplay.teacher_games: {tmp}/empty.npz holds no positions to learn"),
])
def test_teacher_games_a_run_cannot_learn_are_refused_in_one_line(tmp_path, source, message):
    from hexzero.mctsfw import make_game

    (tmp_path / "junk.npz").write_text("not a replay file")
    for size, name in ((4, "size4.npz"), (3, "empty.npz")):
        ReplayBuffer(10, make_game("hex", size=size), lambda states: np.zeros((len(states), 1))).save(tmp_path / name)
    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "selfplay", "--no-progress", "--run-dir",
                             str(tmp_path / "run"), "--set", "games.hex.size=3",
                             "--set", f'selfplay.teacher_games=["{tmp_path / source}"]'],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and message.format(tmp=tmp_path) in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()
