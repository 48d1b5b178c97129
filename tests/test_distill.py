"""cli.py distill: a network learns the games earlier runs recorded, resumably, with
held-out games measured after every epoch; bad sources are refused before anything is written."""

import json
import shutil

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw.checkpoints import saved_settings
from tests.test_plugins import run_cli

SMALL_NET = ["--set", "nets.pv_resnet.blocks=1", "--set", "nets.pv_resnet.filters=8",
             "--set", "nets.pv_resnet.value_hidden=8"]


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A small self-play run of 4x4 Hex: 2 generations of 8 games."""
    run = tmp_path_factory.mktemp("source") / "run"
    result = run_cli("selfplay", "--set", "game=hex", "--set", "games.hex.size=4", "--run-dir", str(run),
                     "--generations", "2", "--set", "selfplay.games_per_generation=8",
                     "--set", "selfplay.search_games=16", "--workers", "1", "--no-progress")
    assert result.returncode == 0, result.stderr
    return run


def metrics(run):
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def distill(source, run, *extra):
    return run_cli("distill", str(source), "--run-dir", str(run), "--no-progress", "--set", "distill.step_cases=200",
                   *SMALL_NET, *extra)


def test_a_student_learns_the_runs_games_epoch_by_epoch(source, tmp_path):
    run = tmp_path / "student"
    result = distill(source, run, "--epochs", "3", "--set", "distill.learning_rates=[0.003, 0.001]")
    assert result.returncode == 0, result.stderr
    lines = metrics(run)
    assert [line["epoch"] for line in lines] == sorted(line["epoch"] for line in lines) and lines[-1]["epoch"] == 3
    assert {line["learning_rate"] for line in lines if line["epoch"] == 1} == {0.003}
    assert {line["learning_rate"] for line in lines if line["epoch"] == 3} == {0.001}  # the last rate repeats
    ends = [line for line in lines if "validation_policy_loss" in line]
    assert len(ends) == 3 and all(line["validation_cases"] > 0 for line in ends)
    assert lines[-1]["policy_loss"] < lines[0]["policy_loss"]
    checkpoints = sorted((run / "checkpoints").glob("*.keras"))
    assert [p.name for p in checkpoints] == [f"pv_resnet_ep000{i}.keras" for i in range(4)]
    assert saved_settings(checkpoints[-1])["game"] == {"name": "hex", "params": {"size": 4}}  # the source run's game
    assert any((run / "tb").iterdir())
    net = mctsfw.load_net(checkpoints[-1], mctsfw.make_model_game(checkpoints[-1]))
    assert net.params()["blocks"] == 1


def test_an_interrupted_run_resumes_to_the_same_network(source, tmp_path):
    """One epoch, then --resume to two, ends with the weights of two epochs in one go:
    no case is trained twice or skipped."""
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert distill(source, straight, "--epochs", "2").returncode == 0
    assert distill(source, resumed, "--epochs", "1").returncode == 0
    result = run_cli("distill", "--resume", str(resumed), "--epochs", "2", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert [line["step"] for line in metrics(resumed)] == [line["step"] for line in metrics(straight)]
    game = mctsfw.make_game("hex", size=4)
    a = mctsfw.load_net(straight / "checkpoints" / "pv_resnet_ep0002.keras", game)
    b = mctsfw.load_net(resumed / "checkpoints" / "pv_resnet_ep0002.keras", game)
    for wa, wb in zip(a.model.get_weights(), b.model.get_weights()):
        np.testing.assert_allclose(wa, wb, atol=1e-6)


def test_several_sources_are_learnt_together(source, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    keep = ["--epochs", "1", "--set", "distill.average_positions=false", "--set", "distill.validation_share=0"]
    assert distill(source, one, *keep).returncode == 0
    result = run_cli("distill", str(source), str(source), "--run-dir", str(two), "--no-progress", *SMALL_NET, *keep,
                     "--set", "distill.step_cases=200")
    assert result.returncode == 0, result.stderr
    assert sum(line["cases"] for line in metrics(two)) == 2 * sum(line["cases"] for line in metrics(one))


def test_a_run_made_before_a_game_parameter_was_declared_is_learnt(source, tmp_path):
    """A run's config.toml without a game parameter declared since (Hex's ``pairing``)
    played at its default: its games are learnt, not refused as another game's."""
    older = tmp_path / "older"
    shutil.copytree(source, older)
    config = older / "config.toml"
    text = config.read_text()
    assert "pairing = false" in text
    config.write_text(text.replace("pairing = false", ""))
    assert distill(older, tmp_path / "learnt", "--epochs", "1").returncode == 0


def test_what_distill_cannot_learn_is_refused_in_one_line(source, tmp_path):
    cases = [
        ((), "distill.sources: give the runs (or replay files) whose games the network learns"),
        ((str(tmp_path / "nowhere"),), "no such run directory or replay file"),
        ((str(tmp_path),), "a run directory with no committed replay buffer"),
        ((str(source), "--set", "games.hex.swap=true"), "played hex(size=4, swap=False, pairing=False, vc=False, prune=False), not the "
                                                         "config's hex(size=4, swap=True, pairing=False, vc=False, prune=False) (runs may "
                                                         "differ in board size alone)"),
        ((str(source), "--set", "games.hex.size=5"), "runs of several board sizes need a network that plays every one "
                                                     '(pv_resnet with heads = "convolutional"); for hex(size=4): '
                                                     "pv_resnet: expects planes of shape (5, 5, 6)"),
        ((str(source), "--net", "anet"), "distill.net = 'anet': "),
    ]
    for args, message in cases:
        result = run_cli("distill", *args, "--run-dir", str(tmp_path / "refused"), "--no-progress")
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (args, result.stderr)
        assert not (tmp_path / "refused").exists()


def test_runs_of_two_board_sizes_teach_one_network_of_every_size(source, tmp_path):
    """A 4x4 run and a 5x5 one into a ResNet with convolutional heads: each step trains on
    the cases of both sizes, and the network it saves plays both."""
    five = tmp_path / "five"
    result = run_cli("selfplay", "--set", "game=hex", "--set", "games.hex.size=5", "--run-dir", str(five),
                     "--generations", "1", "--set", "selfplay.games_per_generation=4",
                     "--set", "selfplay.search_games=8", "--workers", "1", "--no-progress")
    assert result.returncode == 0, result.stderr
    run = tmp_path / "both"
    result = run_cli("distill", str(five), str(source), "--run-dir", str(run), "--no-progress", *SMALL_NET,
                     "--epochs", "1", "--set", 'nets.pv_resnet.heads="convolutional"',
                     "--set", "distill.step_cases=100000")
    assert result.returncode == 0, result.stderr
    (line,) = metrics(run)
    single = tmp_path / "single"
    assert distill(five, single, "--epochs", "1", "--set", 'nets.pv_resnet.heads="convolutional"',
                   "--set", "distill.step_cases=100000").returncode == 0
    assert line["cases"] > sum(x["cases"] for x in metrics(single))  # the 4x4 games came in too
    checkpoint = run / "checkpoints" / "pv_resnet_ep0001.keras"
    assert saved_settings(checkpoint)["game"]["params"]["size"] == 5  # the first run's game
    for size in (4, 5):
        game = mctsfw.make_game("hex", size=size)
        policy = mctsfw.load_net(checkpoint, game).policy(game.initial_state())
        assert policy.shape == (size * size,) and abs(policy.sum() - 1) < 1e-5


def test_a_run_of_several_sizes_is_distilled_with_every_sizes_games(tmp_path):
    """selfplay.sizes keeps a buffer for each size; distill reads them all."""
    mixed = tmp_path / "mixed"
    conv = ["--set", 'nets.pv_resnet.heads="convolutional"']
    result = run_cli("selfplay", "--set", "game=hex", "--set", "games.hex.size=5", "--set", "selfplay.sizes=[4, 5]",
                     "--set", 'selfplay.net="pv_resnet"', *SMALL_NET, *conv, "--run-dir", str(mixed),
                     "--generations", "1", "--set", "selfplay.games_per_generation=4",
                     "--set", "selfplay.search_games=8", "--workers", "1", "--no-progress")
    assert result.returncode == 0, result.stderr
    (played,) = [line for line in metrics(mixed) if line["kind"] == "generation"]
    run = tmp_path / "student"
    result = distill(mixed, run, "--epochs", "1", *conv, "--set", "distill.step_cases=100000",
                     "--set", "distill.validation_share=0")
    assert result.returncode == 0, result.stderr
    (line,) = metrics(run)
    assert line["cases"] == played["cases"]  # both sizes' positions, as the run trained on them
    result = distill(mixed, tmp_path / "refused", "--epochs", "1")
    assert result.returncode == 2 and "distill.sources: runs of several board sizes need a network" in result.stderr


def test_a_random_symmetry_a_case_keeps_an_epoch_one_pass(source, tmp_path):
    """With ``random_symmetry`` every case a step trains is one of the board's symmetric
    copies of a recorded case (the board and its move target turned alike), an epoch trains
    as many cases as without it, and asking for it beside ``augment`` is refused."""
    from hexzero.mctsfw.config import load_config
    from hexzero.mctsfw.distill import DistillTrainer
    from tests.test_config import DEFAULTS

    overrides = ["distill.augment=false", "distill.random_symmetry=true", "distill.step_cases=200", "distill.epochs=1",
                 f'distill.sources=["{source}"]', "game=\"hex\"", "games.hex.size=4", "nets.pv_resnet.blocks=1",
                 "nets.pv_resnet.filters=8", "nets.pv_resnet.value_hidden=8"]
    trainer = DistillTrainer(load_config(DEFAULTS, None, overrides), tmp_path / "turned", progress=False)
    trainer._start_fresh()
    game, view, data = trainer.parts[0]
    seen = []
    fit = view.fit
    view.fit = lambda x, pi, z, **kw: (seen.append((x, pi)), fit(x, pi, z, **kw))[1]
    records = []
    for record, _ in trainer.steps():  # the run's loop counts the steps
        records.append(record)
        trainer.step += 1
    assert sum(r["cases"] for r in records) == trainer.cases == len(data["train"][0])  # one pass, no copies
    copies = {}
    for xi, pi in zip(*data["train"][:2]):
        for turned, target in game.symmetries(xi, pi):
            copies.setdefault(turned.tobytes(), []).append(target)
    x, pi = (np.concatenate(part) for part in zip(*seen))
    assert len(x) == trainer.cases
    for xi, target in zip(x, pi):
        assert any(np.allclose(target, t) for t in copies[xi.astype(np.float32).tobytes()])
    plain = [xi.tobytes() for xi in data["train"][0]]
    assert sum(xi.tobytes() not in plain for xi in x) > len(x) // 4  # turned indeed (Hex has 2 symmetries)

    result = distill(source, tmp_path / "both", "--set", "distill.random_symmetry=true")
    assert result.returncode == 2 and "distill.random_symmetry: augment already adds every symmetry" in result.stderr
