"""Bradley-Terry ratings: known ratings come back, the anchor is 0, intervals shrink with games."""

import math

import numpy as np
import pytest

from hexzero.mctsfw.ratings import Z95, fit_ratings, format_difference, two_player_rating


def expected_score(r_i: float, r_j: float) -> float:
    return 1.0 / (1.0 + 10 ** ((r_j - r_i) / 400))


def synthetic(true: list[float], games: int, seed: int = 0, draw_share: float = 0.0):
    """Round-robin results drawn from the Bradley-Terry model with ratings ``true``; a
    share of the games drawn, the rest won as the model says (keeps each side's expected score)."""
    rng = np.random.default_rng(seed)
    k = len(true)
    wins, draws = np.zeros((k, k)), np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            p = expected_score(true[i], true[j])
            drawn = rng.binomial(games, draw_share)
            # a draw is worth half: the decisive games keep i's expected score p overall
            p_decisive = min(max((p - 0.5 * draw_share) / (1 - draw_share), 0.0), 1.0)
            won = rng.binomial(games - drawn, p_decisive)
            wins[i, j], wins[j, i] = won, games - drawn - won
            draws[i, j] = draws[j, i] = drawn
    return wins, draws


@pytest.mark.parametrize("draw_share", [0.0, 0.1])
def test_known_ratings_are_recovered(draw_share):
    labels = ["net_a", "random", "net_b", "net_c"]
    true = [150.0, 0.0, 400.0, -50.0]
    wins, draws = synthetic(true, games=3000, seed=1, draw_share=draw_share)
    ratings = fit_ratings(labels, wins, draws)
    assert ratings.anchor == "random"  # random play is the anchor when it is in the pool
    for i, r in enumerate(true):
        assert abs(ratings.elo[i] - r) < 20, (labels[i], ratings.elo[i], r)
        low, high = ratings.interval(i)
        if labels[i] != "random":
            assert low < ratings.elo[i] < high
            assert abs(ratings.elo[i] - r) < 3 * ratings.se(i)
            assert 3 < ratings.se(i) < 15


def test_the_anchor_is_zero_with_an_empty_interval():
    wins, draws = synthetic([300.0, 0.0, 100.0], games=200, seed=2)
    ratings = fit_ratings(["strong", "random", "weak"], wins, draws)
    assert ratings.elo[1] == 0 and ratings.interval(1) == (0.0, 0.0)
    assert ratings.elo[0] > ratings.elo[2] > 0
    first = fit_ratings(["strong", "other", "weak"], wins, draws)  # no random player: the first
    assert first.anchor == "strong" and first.elo[0] == 0 and first.elo[1] < first.elo[2] < 0
    named = fit_ratings(["strong", "other", "weak"], wins, draws, anchor="weak")
    assert named.elo[2] == 0
    # the same differences whatever the anchor
    assert named.elo[0] - named.elo[1] == pytest.approx(first.elo[0] - first.elo[1], abs=1e-6)
    assert named.difference(0, 1)["se"] == pytest.approx(first.difference(0, 1)["se"], rel=1e-6)


def test_two_players_match_the_closed_form():
    # 300 of 400 points: odds 3 to 1, 400 log10(3) Elo; standard error 1 / sqrt(n p (1-p)) in log-odds
    d = two_player_rating(wins=280, losses=80, draws=40, prior_draws=0)
    assert d["elo"] == pytest.approx(400 * math.log10(3), abs=1e-6)
    se = 400 / math.log(10) / math.sqrt(400 * 0.75 * 0.25)
    assert d["se"] == pytest.approx(se, rel=1e-6)
    assert d["low"] == pytest.approx(d["elo"] - Z95 * se) and d["high"] == pytest.approx(d["elo"] + Z95 * se)
    assert two_player_rating(5, 5)["elo"] == pytest.approx(0) == two_player_rating(0, 0, draws=10)["elo"]
    assert format_difference(d).startswith("+191 Elo (95% interval +")


def test_intervals_shrink_with_more_games():
    few = two_player_rating(wins=12, losses=8)
    many = two_player_rating(wins=1200, losses=800)
    assert few["high"] - few["low"] > 8 * (many["high"] - many["low"])
    assert few["low"] < 0 < few["high"]  # 12-8 does not tell them apart
    assert many["low"] > 0  # 1200-800 does
    small, large = (fit_ratings(["random", "a", "b"], *synthetic([0, 100, 200], games, seed=3))
                    for games in (40, 4000))
    for i in (1, 2):
        assert large.se(i) < small.se(i) / 5


def test_unbeaten_players_need_virtual_draws():
    with pytest.raises(ValueError, match="won or lost every game"):
        two_player_rating(wins=20, losses=0, prior_draws=0)
    d = two_player_rating(wins=20, losses=0)  # one virtual draw: 20.5 of 21 points
    assert d["elo"] == pytest.approx(400 * math.log10(20.5 / 0.5), abs=1e-6)
    assert d["low"] > 0 and math.isfinite(d["high"])


def test_results_that_do_not_connect_the_pool_are_refused():
    wins = [[0, 3, 0, 0], [1, 0, 0, 0], [0, 0, 0, 2], [0, 0, 2, 0]]
    with pytest.raises(ValueError, match="do not connect c, d with a"):
        fit_ratings(["a", "b", "c", "d"], wins)
    with pytest.raises(ValueError, match="anchor 'x'"):
        fit_ratings(["a", "b"], [[0, 1], [1, 0]], anchor="x")


def test_dict_and_table():
    ratings = fit_ratings(["random", "net"], [[0, 2], [8, 0]])
    data = ratings.as_dict()
    assert data["anchor"] == "random" and "Bradley-Terry" in data["method"] and "Fisher" in data["method"]
    assert set(data["ratings"]["net"]) == {"elo", "se", "low", "high", "games"}
    assert data["ratings"]["net"]["games"] == 10 and data["ratings"]["random"]["elo"] == 0
    lines = ratings.table().splitlines()
    assert lines[1].split()[0] == "net" and "(anchor)" in lines[2]


def test_compare_prints_the_rating_difference(tmp_path):
    import json

    from tests.test_plugins import run_cli

    out = tmp_path / "compare.json"
    result = run_cli("compare", "mcts", "random", "--game", "hex", "--size", "3", "--games", "6",
                     "--search-games", "30", "--seed", "1", "--json", str(out))
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    total = data["total"]
    expected = two_player_rating(total["wins"], total["losses"], total["draws"])
    assert data["rating"] == pytest.approx(expected)
    assert f"rating of A less B: {format_difference(expected)}" in result.stdout
