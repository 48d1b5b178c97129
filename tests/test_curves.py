"""TensorBoard curves: every run writes RUN_DIR/tb/ event files that hold its metrics, read back."""

import pytest

from hexzero.mctsfw.curves import read_scalars, scalars, step_of
from hexzero.mctsfw.runs import RunDir
from hexzero.mctsfw.selfplay import SelfPlayTrainer
from hexzero.mctsfw.training import Trainer
from tests.test_selfplay import tiny
from tests.test_training import tiny_config


def test_tensorboard_is_installed_with_the_package():
    """A dependency (pyproject.toml): missing, it fails here, not as skips."""
    import tensorboard  # noqa: F401


def test_on_policy_training_writes_its_losses(tmp_path):
    run_dir = tmp_path / "run"
    Trainer(tiny_config(run_dir, episodes=3), run_dir, progress=False).train()
    records = RunDir(run_dir).read_metrics()
    curves = read_scalars(run_dir / "tb")
    assert curves["loss/total"] == [(r["episode"], pytest.approx(r["loss"])) for r in records]
    assert [s for s, _ in curves["train/learning_rate"]] == [1, 2, 3]
    assert all(v == pytest.approx(0.001) for _, v in curves["train/learning_rate"])  # the anet default
    assert curves["games/length"] == [(r["episode"], len(r["moves"])) for r in records]
    assert all(v > 0 for _, v in curves["games/positions_per_second"])


def test_self_play_writes_losses_throughput_and_gating(tmp_path):
    run_dir = tmp_path / "run"
    SelfPlayTrainer(tiny(run_dir, extra=["selfplay.gating=true", "selfplay.gating_games=2"]), run_dir,
                    progress=False).train()
    records = RunDir(run_dir).read_metrics()
    generations = [r for r in records if r["kind"] == "generation"]
    curves = read_scalars(run_dir / "tb")
    for key, tag in (("loss", "loss/total"), ("policy_loss", "loss/policy"), ("value_loss", "loss/value"),
                     ("gating_score", "gating/score"), ("learning_rate", "train/learning_rate"),
                     ("positions_per_second", "selfplay/positions_per_second"),
                     ("mean_game_length", "selfplay/mean_game_length")):
        assert curves[tag] == [(g["generation"], pytest.approx(g[key], rel=1e-6)) for g in generations], tag
    games = [r for r in records if r["kind"] == "game"]
    assert curves["games/length"] == [(r["game"], len(r["moves"])) for r in games]
    for g, games_of in zip(generations, (games[:3], games[3:])):
        assert g["mean_game_length"] == pytest.approx(sum(len(r["moves"]) for r in games_of) / 3, abs=1e-3)  # rounded
        elo = g["gating_elo"]  # the candidate's rating less the best one's, with its interval
        assert elo["low"] < elo["elo"] < elo["high"] and (elo["elo"] > 0) == (g["gating_score"] > 0.5)
    assert [s for s, _ in curves["gating/elo_difference"]] == [1, 2]


def test_a_resumed_run_holds_every_step_once(tmp_path):
    run_dir = tmp_path / "run"
    Trainer(tiny_config(run_dir, episodes=2), run_dir, progress=False).train()
    # a kill after a metrics line was written but before the step was committed: the line and
    # its scalars are dropped on resume, and the curves are those of the kept lines
    RunDir(run_dir).append_metrics({"episode": 3, "loss": 9.9, "moves": [0]})
    assert (3, 9.9) in [(s, round(v, 3)) for s, v in read_scalars(run_dir / "tb")["loss/total"]]
    Trainer(tiny_config(run_dir, episodes=4), run_dir, progress=False).train()
    curves = read_scalars(run_dir / "tb")
    records = RunDir(run_dir).read_metrics()
    assert curves["loss/total"] == [(r["episode"], pytest.approx(r["loss"])) for r in records]
    assert [s for s, _ in curves["loss/total"]] == [1, 2, 3, 4]
    assert len(list((run_dir / "tb").glob("events.out.tfevents.*"))) == 1


def test_which_keys_become_curves():
    generation = {"kind": "generation", "generation": 3, "step": 40, "loss": 1.5, "false_positive_rate": None,
                  "promoted": True, "gating_elo": {"elo": 35.0, "low": -20.0, "high": 90.0, "se": 28.0}}
    assert step_of(generation) == 3
    assert dict(scalars(generation)) == {"loss/total": 1.5, "gating/promoted": 1.0, "gating/elo_difference": 35.0,
                                         "gating/elo_difference_low": -20.0, "gating/elo_difference_high": 90.0}
    assert step_of({"kind": "game", "game": 7, "generation": 1, "step": 9}) == 7
    assert step_of({"episode": 5, "loss": 1.0}) == 5


def test_runs_of_older_versions_get_their_game_lengths():
    old = {"step": 1, "kind": "game", "generation": 1, "game": 1, "moves": 35, "seconds": 0.6, "buffer_size": 70}
    assert dict(scalars(old)) == {"games/length": 35.0, "train/replay_buffer": 70.0}


def test_a_record_cut_short_ends_the_reading(tmp_path):
    from hexzero.mctsfw.curves import RunCurves

    curves = RunCurves(tmp_path)
    curves.rebuild([{"episode": 1, "loss": 2.0}, {"episode": 2, "loss": 1.0}])
    (path,) = tmp_path.glob("events.out.tfevents.*")
    path.write_bytes(path.read_bytes()[:-3])  # a kill in the middle of the last record
    assert read_scalars(tmp_path) == {"loss/total": [(1, 2.0)]}
