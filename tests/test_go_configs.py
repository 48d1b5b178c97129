"""The Go configurations (configs/go9.toml, configs/go13.toml): what they say, and that a
generation of each runs end to end with tiny budgets (docs/go.md's short 13x13 run is the
same pipeline at a larger scale), its losses plotted by scripts/selfplay_losses.py."""

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw.config import load_config
from hexzero.mctsfw.runs import RunDir
from hexzero.mctsfw.selfplay import SelfPlaySettings, SelfPlayTrainer
from tests.test_training import DEFAULTS, ROOT

CONFIGS = ROOT / "configs"


def make_net(config):
    game = mctsfw.make_game("go", **config["games"]["go"])
    return game, mctsfw.default_registries().nets.get("pv_resnet")(game, seed=0, **config["nets"]["pv_resnet"])


def test_go13_is_the_13x13_system():
    config = load_config(DEFAULTS, CONFIGS / "go13.toml")
    assert config["game"] == "go" and config["games"]["go"] == {"size": 13, "komi": 7.5, "max_moves": 400, "history": 4}
    game = mctsfw.make_game("go", **config["games"]["go"])
    assert game.encode_planes(game.initial_state()).shape == (13, 13, 11)  # 11 planes
    net = config["nets"]["pv_resnet"]
    assert net["blocks"] == 10 and (net["optimizer"], net["momentum"], net["value_head"]) == ("sgd", 0.9, "tanh")
    s = SelfPlaySettings.from_config(config)
    assert s.net == "pv_resnet" and s.search_games == 100 and s.augment
    assert (s.temperature, s.temperature_final) == (1.0, 0.4) and s.temperature_moves > 0  # 1.0 then 0.4
    assert 0 < s.resign_threshold < 0.5 and 0 < s.no_resign_share < 1


def test_go9_is_small_and_needs_no_config_to_be_played():
    config = load_config(DEFAULTS, CONFIGS / "go9.toml")
    go = config["games"]["go"]
    assert go["size"] == 9 and go["komi"] == 7.5 and go["history"] == 0
    assert go == load_config(DEFAULTS, None, ['game="go"'])["games"]["go"]  # plain --game go plays its nets
    s = SelfPlaySettings.from_config(config)
    assert s.net == "pv_resnet" and (s.temperature, s.temperature_final) == (1.0, 0.4)
    assert s.resign_threshold == 0  # off: a short run's value head makes black resign at move 20 (docs/go.md)
    game, net = make_net(config)
    assert net.params()["optimizer"] == "sgd" and net.params()["momentum"] == 0.9
    probs, values = net.evaluate(net.encode_batch([game.initial_state()]))
    assert probs.shape == (1, 82) and 0 <= values[0] <= 1


@pytest.mark.parametrize("name, shrink", [
    ("go13", ["games.go.max_moves=10", "nets.pv_resnet.filters=8", "nets.pv_resnet.value_hidden=8"]),
    ("go9", ["games.go.max_moves=12"]),
])
def test_a_generation_runs_end_to_end_and_its_losses_are_plotted(tmp_path, capsys, name, shrink):
    from scripts.selfplay_losses import main

    run_dir = tmp_path / name
    config = load_config(DEFAULTS, CONFIGS / f"{name}.toml", [
        *shrink, "selfplay.generations=2", "selfplay.games_per_generation=2", "selfplay.search_games=6",
        "selfplay.batch_size=4", "selfplay.minibatch=32", "selfplay.workers=1", f'selfplay.run_dir="{run_dir}"',
        "selfplay.resign_threshold=0.05", "selfplay.no_resign_share=0.5",
    ])
    summary = SelfPlayTrainer(config, run_dir, progress=False).train()
    assert summary["generations"] == 2 and len(summary["checkpoints"]) == 3
    records = RunDir(run_dir).read_metrics()
    generations = [r for r in records if r["kind"] == "generation"]
    assert [g["generation"] for g in generations] == [1, 2]
    assert all(np.isfinite(g["loss"]) and g["value_loss"] >= 0 and "false_positive_rate" in g for g in generations)
    assert main([str(run_dir), "--out", str(tmp_path / "losses.png")]) == 0
    out = capsys.readouterr().out
    assert "| generation | cases | loss | policy loss | value loss | resigned | false positives |" in out
    assert f"| 2 | {generations[1]['cases']:,} | {generations[1]['loss']:.3f} |" in out
    assert (tmp_path / "losses.png").read_bytes()[:4] == b"\x89PNG"


def test_the_loss_script_refuses_a_directory_without_a_run(tmp_path, capsys):
    from scripts.selfplay_losses import main

    assert main([str(tmp_path)]) == 2
    assert "metrics.jsonl: no such file" in capsys.readouterr().err
