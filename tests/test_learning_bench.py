"""benchmarks/learning.py's recipes: each a list of stages that fill its minutes, each stage
given the bench's common settings under its own command's section."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import learning  # noqa: E402
from hexzero.mctsfw.config import load_config  # noqa: E402


def test_every_recipe_fills_its_minutes_with_commands_that_exist():
    for key, bench in learning.GAMES.items():
        for recipe in bench.recipes:
            stages = bench.stages(recipe)
            assert abs(sum(stage.share for stage in stages) - 1) < 1e-9, (key, recipe)
            for stage in stages:
                assert stage.command in ("selfplay", "imitate")
                settings = bench.settings(stage)
                assert all(not s.startswith(("selfplay.", "imitate.")) or s.startswith(f"{stage.command}.")
                           for s in settings), (key, recipe, settings)
                config = load_config(ROOT / "hexzero.toml", [ROOT / bench.config], settings)  # declared and valid
                start = config[stage.command]["init_net"]  # a student's self-play starts from a shipped file
                assert not start or (ROOT / start).is_file(), (key, recipe, start)


def test_a_later_stage_s_checkpoints_are_named_by_their_run():
    directory = Path("/runs/hex9/from7x7")
    first = directory / "run" / "checkpoints" / "pv_resnet_gen0003.keras"
    second = directory / "run2" / "checkpoints" / "pv_resnet_gen0003.keras"
    assert learning.checkpoint_name(directory, first) == "pv_resnet_gen0003.keras"  # as before stages came
    assert learning.checkpoint_name(directory, second) == "run2/pv_resnet_gen0003.keras"
    assert [learning.stage_dir(directory, i).name for i in range(3)] == ["run", "run2", "run3"]


def test_every_stage_of_a_recipe_trains_the_same_network():
    """A later stage starts from the last network of the one before: an imitation stage
    that learnt another kind of network (the [imitate] default) would hand on the wrong file."""
    for key, bench in learning.GAMES.items():
        for recipe in bench.recipes:
            nets = {load_config(ROOT / "hexzero.toml", [ROOT / bench.config], bench.settings(stage))[stage.command]["net"]
                    for stage in bench.stages(recipe)}
            assert len(nets) == 1, (key, recipe, nets)


def test_a_student_s_self_play_can_start_from_its_shipped_network():
    """Each student row starts from a shipped file that the run's own checks accept: the
    net the configuration names, and a network for that game and size."""
    from hexzero.mctsfw.plugin_manager import default_registries
    from hexzero.mctsfw.selfplay import selfplay_config_problems

    registries = default_registries()
    students = {key: bench for key, bench in learning.GAMES.items() if bench.teacher}
    assert {"hex9-student", "hex11-student", "go13-student", "gomoku15-student"} <= set(students)
    for key, bench in students.items():
        for recipe in bench.recipes:
            (stage,) = bench.stages(recipe)
            config = load_config(ROOT / "hexzero.toml", [ROOT / bench.config], bench.settings(stage))
            assert config["selfplay"]["init_net"], (key, recipe)
            assert selfplay_config_problems(config, registries) == [], (key, recipe)
            assert bench.teacher in bench.opponents, key


def test_search_games_changes_the_budget_of_a_bench_that_searches_and_keeps_its_scores_apart():
    student = learning.GAMES["gomoku15-student"]
    deeper = learning.searching(student, 1600)
    assert deeper.agent["search_games"] == 1600 and student.agent["search_games"] == 400
    assert deeper.scored and not student.scored  # its scores.json names differ from the own budget's
    assert learning.searching(student, 400) is student
    raw = learning.GAMES["hex7"]  # the raw network: nothing to search with
    assert not raw.agent and learning.searching(raw, 1600) is raw


def test_a_kept_score_says_how_many_distinct_games_it_rests_on():
    """scores.json keeps each score's distinct games beside it; one kept before they were
    counted says so rather than claiming a number."""
    from hexzero import mctsfw

    bench = learning.GAMES["hex5"]
    game = learning.bench_game(bench)
    measured = learning.match_score(game, bench, mctsfw.make_actor("random", game, seed=1),
                                    mctsfw.make_actor("random", game, seed=2), 4)
    score, distinct = measured
    assert 0 <= score <= 1 and 1 <= distinct <= 4
    scores = {"old.keras vs MoHex(1000)/20": 0.35}
    learning.keep_score(scores, "new.keras vs MoHex(1000)/4", measured)
    assert scores["new.keras vs MoHex(1000)/4"] == score
    assert learning.distinct(scores, "new.keras vs MoHex(1000)/4") == f"{distinct} distinct games"
    assert learning.distinct(scores, "old.keras vs MoHex(1000)/20") == "distinct games not counted"
