"""The Tournament of Progressive Policies: ranking, the matrix, alternating openers, files, CLI."""

import io
import json
import shutil

import pytest
from PIL import Image

from hexzero import mctsfw
from hexzero.mctsfw.actors import NetActor
from hexzero.plugins.topp import TOPP, TOPPResult, collect_models, episode_number, model_agents, model_labels
from benchmarks.shipped import shipped_model
from tests.test_plugins import run_cli

G = 4


@pytest.fixture(scope="module")
def hex4():
    return mctsfw.make_game("hex", size=4)


@pytest.fixture(scope="module")
def budget_result(hex4):
    agents = [
        ("random", mctsfw.make_actor("random", hex4, seed=1)),
        ("mcts(25)", mctsfw.make_actor("mcts", hex4, search_games=25, seed=2)),
        ("mcts(500)", mctsfw.make_actor("mcts", hex4, search_games=500, seed=3)),
    ]
    return TOPP(hex4, agents, games_per_series=G).run()


def test_topp_is_a_registered_evaluator():
    assert mctsfw.default_registries().evaluators.get("topp") is TOPP


def test_stronger_search_ranks_first(budget_result):
    assert [budget_result.labels[i] for i in budget_result.ranking()] == ["mcts(500)", "mcts(25)", "random"]
    wins = budget_result.wins
    assert wins[2] > wins[1] > wins[0]
    assert budget_result.games_per_agent == 2 * G


def test_matrix_holds_every_game_once(budget_result):
    m = budget_result.matrix
    for i in range(3):
        assert m[i][i] == 0
        for j in range(3):
            if i != j:
                assert m[i][j] + m[j][i] == G  # Hex has no draws
    assert sum(budget_result.wins) == 3 * G


def test_each_agent_plays_each_seat_and_opens_half_of_a_series(budget_result):
    assert len(budget_result.pairs) == 3
    for pair in budget_result.pairs:
        openers = [game["opener"] for game in pair["games"]]
        assert openers == [pair["a"], pair["b"], pair["b"], pair["a"]] * (G // 4)
        assert [game["starting_player"] for game in pair["games"]] == [1, 1, 2, 2] * (G // 4)
        assert pair["wins_a"] + pair["wins_b"] + pair["draws"] == G
        assert sum(game["winner"] == pair["a"] for game in pair["games"]) == pair["wins_a"]


def test_json_and_png_are_written(budget_result, tmp_path):
    files = budget_result.save(tmp_path / "out")
    data = json.loads(files["json"].read_text())
    assert data["agents"] == ["random", "mcts(25)", "mcts(500)"]
    assert data["games_per_series"] == G and data["selection"] == "greedy"
    assert data["matrix"] == budget_result.matrix
    assert data["wins"] == dict(zip(budget_result.labels, budget_result.wins))
    assert data["ranking"][0] == "mcts(500)" and len(data["pairs"]) == 3
    assert TOPPResult.load(files["json"]).matrix == budget_result.matrix
    with Image.open(files["png"]) as image:
        assert image.format == "PNG" and image.width > 200
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["ratings.png", "topp.json", "topp.png"]  # no temp files
    with Image.open(files["ratings"]) as image:
        assert image.format == "PNG" and image.width > 200
    # Bradley-Terry ratings anchored at random play, in the order of the wins
    assert data["anchor"] == "random" and "Bradley-Terry" in data["rating_method"]
    elo = {label: data["ratings"][label]["elo"] for label in data["agents"]}
    assert elo["random"] == 0 and elo["mcts(500)"] > elo["mcts(25)"] > 0
    for label in ("mcts(25)", "mcts(500)"):
        r = data["ratings"][label]
        assert r["low"] < r["elo"] < r["high"] and r["games"] == 2 * G


def test_tables_are_printed(budget_result):
    table = budget_result.table()
    assert table.splitlines()[1].split()[:3] == ["1", "mcts(500)", str(budget_result.wins[2])]
    assert "Elo" in table.splitlines()[0] and table.splitlines()[3].split()[-1] == "(anchor)"
    assert table.splitlines()[-2] == "Elo: Bradley-Terry ratings, random = 0 (random play)"
    assert table.splitlines()[-1] == "12 of the 12 games differ"
    matrix = budget_result.matrix_text()
    assert len(matrix.splitlines()) == 4 and "random" in matrix


def test_display_sees_every_game_and_gifs_are_saved(hex4, tmp_path):
    class Counting:
        starts = 0

        def show(self, game, state, last_action=None, mover=None):
            self.starts += last_action is None

    display = Counting()
    agents = [(f"r{i}", mctsfw.make_actor("random", hex4, seed=i)) for i in range(3)]
    stream = io.StringIO()
    result = TOPP(hex4, agents, games_per_series=2, display=display, gif_dir=tmp_path / "gifs", stream=stream).run()
    assert display.starts == 3 * 2
    gifs = sorted((tmp_path / "gifs").glob("*.gif"))
    assert len(gifs) == 6 and gifs[0].name == "01-02_r0_vs_r1_g01.gif"
    assert "r0 vs r1: 2 games" in stream.getvalue() and "(2 different games)" in stream.getvalue()
    assert sum(result.wins) == 6


def test_bad_tournaments_are_refused(hex4):
    actor = mctsfw.make_actor("random", hex4)
    with pytest.raises(ValueError, match="at least 2 agents"):
        TOPP(hex4, [("a", actor)])
    with pytest.raises(ValueError, match="unique.*a"):
        TOPP(hex4, [("a", actor), ("a", actor)])
    with pytest.raises(ValueError, match="selection"):
        TOPP(hex4, [("a", actor), ("b", actor)], selection="best")


def test_models_of_a_run_sort_by_episode(tmp_path):
    checkpoints = tmp_path / "run" / "checkpoints"
    checkpoints.mkdir(parents=True)
    for episode in (200, 0, 50, 1000):
        (checkpoints / f"anet_ep{episode:04d}.keras").write_text("")
    (checkpoints / "notes.txt").write_text("")
    (checkpoints / "best.keras").write_text("")  # not a checkpoint name: after the checkpoints
    found = collect_models(tmp_path / "run")
    assert [episode_number(p) for p in found] == [0, 50, 200, 1000, None]
    assert model_labels(found) == ["anet_ep0000", "anet_ep0050", "anet_ep0200", "anet_ep1000", "best"]
    given = [found[2], found[0]]
    assert collect_models(given) == given  # an explicit list keeps its order
    with pytest.raises(FileNotFoundError, match="missing.keras"):
        collect_models([found[0], tmp_path / "missing.keras"])
    with pytest.raises(FileNotFoundError, match="no saved models"):
        collect_models(tmp_path)
    assert model_labels([tmp_path / "a" / "m.keras", tmp_path / "b" / "m.keras"]) == ["a/m", "b/m"]


# ---- saved networks: make_actor(PATH, ...) and the CLI ------------------------------------------
@pytest.fixture(scope="module")
def hex3_run(tmp_path_factory):
    """A run directory as ``cli.py train`` leaves it: config.toml and three untrained checkpoints."""
    from hexzero.nets import anet

    game = mctsfw.make_game("hex", size=3)
    run = tmp_path_factory.mktemp("run")
    (run / "config.toml").write_text('game = "hex"\n\n[games.hex]\nsize = 3\n')
    for seed, episode in enumerate((10, 0, 5)):
        anet.ANET(game, hidden_layers=[16], seed=seed).save(run / "checkpoints" / f"anet_ep{episode:04d}.keras")
    return run


@pytest.mark.parametrize("selection", ["greedy", "sample"])
def test_a_tournament_of_saved_networks(hex3_run, selection):
    game = mctsfw.make_game("hex", size=3)
    paths = collect_models(hex3_run)
    topp = TOPP.from_models(game, paths, games_per_series=4, selection=selection, seed=7)
    assert topp.labels == ["anet_ep0000", "anet_ep0005", "anet_ep0010"]
    result = topp.run()
    assert result.selection == selection and sum(result.wins) == 3 * 4
    for pair in result.pairs:
        assert 1 <= pair["distinct_games"] <= 4
    if selection == "greedy":  # greedy networks would replay a game: each pair of games from its own opening
        assert all(pair["games"][0]["moves"] >= 2 for pair in result.pairs)
        assert "of the 12 games differ" in result.table()


def test_cli_topp_on_a_run(hex3_run, tmp_path):
    result = run_cli("topp", str(hex3_run), "--games", "2", "--gif", str(tmp_path / "gifs"))
    assert result.returncode == 0, result.stderr
    assert "rank" in result.stdout and "wins of row against column" in result.stdout
    data = json.loads((hex3_run / "topp" / "topp.json").read_text())
    # random play joins the checkpoints as the anchor of the ratings (the default of hexzero.toml)
    assert data["agents"] == ["random", "anet_ep0000", "anet_ep0005", "anet_ep0010"]
    assert data["games_per_series"] == 2 and data["selection"] == "sample"  # the default of hexzero.toml
    assert all(data["matrix"][i][j] + data["matrix"][j][i] == 2 for i in range(4) for j in range(4) if i != j)
    assert data["numbers"] == [None, 0, 5, 10] and data["number_kind"] == "episode"
    assert data["anchor"] == "random" and data["ratings"]["random"]["elo"] == 0
    assert set(data["ratings"]) == set(data["agents"])
    assert (hex3_run / "topp" / "topp.png").is_file() and (hex3_run / "topp" / "ratings.png").is_file()
    assert len(list((tmp_path / "gifs").glob("*.gif"))) == 6 * 2
    assert "95% interval" in result.stdout and "random = 0" in result.stdout
    # the run's TensorBoard curves: each checkpoint's rating at its episode
    from hexzero.mctsfw.curves import read_scalars

    curves = read_scalars(hex3_run / "tb" / "topp")
    assert curves["topp/elo"] == [(n, pytest.approx(data["ratings"][f"anet_ep{n:04d}"]["elo"], abs=0.06))
                                  for n in (0, 5, 10)]
    assert [step for step, _ in curves["topp/elo_high"]] == [0, 5, 10]


def test_cli_topp_on_model_files(hex3_run, tmp_path):
    models = sorted((hex3_run / "checkpoints").glob("*.keras"), reverse=True)[:2]
    result = run_cli("topp", "--models", *map(str, models), "--game", "hex", "--size", "3", "--games", "3",
                     "--selection", "sample", "--seed", "1", "--out", str(tmp_path / "out"), "--no-random-anchor")
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "out" / "topp.json").read_text())
    assert data["agents"] == ["anet_ep0010", "anet_ep0005"]  # the order given
    assert data["selection"] == "sample" and sum(data["wins"].values()) == 3
    assert data["anchor"] == "anet_ep0010" and data["ratings"]["anet_ep0010"]["elo"] == 0  # no random: the first


def test_cli_topp_only_reads_a_models_folder_and_writes_under_runs(hex3_run, tmp_path):
    """A folder of shipped networks (models/hex5: networks, config, reports, curves) is read,
    never written; the results go to runs/topp/FOLDER, those of --models to runs/topp."""
    shipped = tmp_path / "models" / "hex3"
    shipped.mkdir(parents=True)
    for path in (hex3_run / "checkpoints").glob("*.keras"):
        shutil.copy(path, shipped)
    shutil.copy(hex3_run / "config.toml", shipped)
    (shipped / "tb").mkdir()
    (shipped / "tb" / "events.out.tfevents.1").write_bytes(b"a tracked curve")
    (shipped / "topp.json").write_text("{}")
    before = {path: path.stat().st_mtime_ns for path in shipped.rglob("*")}
    work = tmp_path / "work"
    work.mkdir()
    result = run_cli("topp", str(shipped), "--games", "2", cwd=work)
    assert result.returncode == 0, result.stderr
    assert {path: path.stat().st_mtime_ns for path in shipped.rglob("*")} == before
    assert (work / "runs" / "topp" / "hex3" / "topp.json").is_file() and "runs/topp/hex3/topp.json" in result.stdout
    result = run_cli("topp", "--models", *map(str, sorted(shipped.glob("*.keras"))[:2]), "--games", "2", cwd=work)
    assert result.returncode == 0, result.stderr
    assert (work / "runs" / "topp" / "topp.json").is_file() and not (work / "topp").exists()


def test_every_nth_and_the_last_k_checkpoints():
    from hexzero.plugins.topp import select_models

    numbers = list(range(0, 401))  # a 400-generation run's checkpoints
    every = select_models(numbers, every=50)
    assert every == [0, 50, 100, 150, 200, 250, 300, 350, 400]
    assert select_models(numbers, every=150) == [0, 150, 300, 400]  # the last always
    assert select_models(numbers, every=50, last=3) == [300, 350, 400]
    assert select_models(numbers, last=2) == [399, 400]
    assert select_models(numbers[:3], every=1) == [0, 1, 2]
    with pytest.raises(ValueError, match="every must be >= 1"):
        select_models(numbers, every=0)


def test_cli_topp_takes_every_nth_and_the_last_k(hex3_run, tmp_path):
    result = run_cli("topp", str(hex3_run), "--games", "2", "--every", "2", "--out", str(tmp_path / "every"))
    assert result.returncode == 0, result.stderr
    assert "2 models (of 3) and random play" in result.stdout
    data = json.loads((tmp_path / "every" / "topp.json").read_text())
    assert data["agents"] == ["random", "anet_ep0000", "anet_ep0010"]
    result = run_cli("topp", str(hex3_run), "--games", "2", "--last", "2", "--no-random-anchor",
                     "--out", str(tmp_path / "last"))
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "last" / "topp.json").read_text())["agents"] == ["anet_ep0005", "anet_ep0010"]
    alone = run_cli("topp", str(hex3_run), "--last", "1", "--no-random-anchor", "--out", str(tmp_path / "alone"))
    assert alone.returncode == 2 and "needs at least 2 agents" in alone.stderr
    assert len(alone.stderr.strip().splitlines()) == 1
    bad = run_cli("topp", str(hex3_run), "--every", "0")
    assert bad.returncode == 2 and "topp.every: must be a whole number >= 1, not 0" in bad.stderr


def test_cli_topp_explains_what_is_missing(tmp_path):
    nothing = run_cli("topp")
    assert nothing.returncode == 2 and "RUN_DIR" in nothing.stderr
    missing = run_cli("topp", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "no such run directory" in missing.stderr
    empty = run_cli("topp", str(tmp_path))
    assert empty.returncode == 2 and "no saved models" in empty.stderr


def test_a_sampling_network_s_temperature_sharpens_its_choice():
    """selection = "sample" draws ~ policy^(1/T): below 1 nearer the network's best move,
    still varied; the TOPP's temperature reaches its agents."""
    game = mctsfw.make_game("hex", size=5)
    model = shipped_model("hex5")
    state = game.initial_state()
    best = mctsfw.make_actor(model, game, search_games=0, selection="greedy").select_action(state)

    def share_of_best(temperature):
        actor = mctsfw.make_actor(model, game, search_games=0, selection="sample", seed=1, temperature=temperature)
        return sum(actor.select_action(state) == best for _ in range(300)) / 300

    plain, sharp = share_of_best(0.0), share_of_best(0.25)  # 0: the policy itself, as before
    assert sharp > 2 * plain and sharp < 1.0
    [(_, agent)] = model_agents([model], game, selection="sample", seed=1, temperature=0.25)
    assert agent.temperature == 0.25
    with pytest.raises(ValueError, match="temperature is a number > 0"):
        NetActor(game, agent.net, selection="sample", temperature=-1)
