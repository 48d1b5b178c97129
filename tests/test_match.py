"""The one match runner (seats, openers, tallies) and the one move sampler, as every user sees them."""

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw.actors import NetActor, RandomActor
from hexzero.mctsfw.match import BALANCED, PLAYER_1_OPENS, Openings, compare, compare_report, play_match


class Recording(RandomActor):
    """A random player that notes the player number it moves as."""

    def __init__(self, game, seed):
        super().__init__(game, seed=seed)
        self.seats = []

    def select_action(self, state):
        self.seats.append(self.game.current_player(state))
        return super().select_action(state)


@pytest.mark.parametrize(
    "seating, openers, a_players, starts",
    [
        ((1,), (1, 2), [1, 1, 1, 1, 1, 1], [1, 2, 1, 2, 1, 2]),  # OHT series: A is player 1
        ((1, 2), (2,), [1, 2, 1, 2, 1, 2], [2, 2, 2, 2, 2, 2]),  # compare --starting-player 2
        ((1, 2), ("a", "a", "b", "b"), [1, 2, 1, 2, 1, 2], [1, 2, 2, 1, 1, 2]),
        ((1, 2), (1, 1, 2, 2), [1, 2, 1, 2, 1, 2], [1, 1, 2, 2, 1, 1]),  # BALANCED: strength report, gating, TOPP
    ],
)
def test_schedules_seat_and_open_as_the_callers_always_did(hex3, seating, openers, a_players, starts):
    a, b = Recording(hex3, 1), Recording(hex3, 2)
    result = play_match(hex3, a, b, 6, seating=seating, openers=openers)
    assert result.a_players == a_players
    assert [r.starting_player for r in result.records] == starts
    assert set(a.seats) == set(a_players)  # A really moved as those players
    for record, a_player in zip(result.records, result.a_players):
        assert record.movers[0] == record.starting_player
        assert len(record.movers) == len(record.actions) == len(record.move_seconds)
    total = result.tally()
    assert total.games == 6 and total.wins + total.losses + total.draws == 6
    for split in ("a_player", "a_opens"):
        values = (1, 2) if split == "a_player" else (True, False)
        parts = [result.tally(**{split: v}) for v in values]
        assert sum(p.games for p in parts) == 6 and sum(p.wins for p in parts) == total.wins
    assert result.tally(a_opens=True).games == sum(s == p for s, p in zip(starts, a_players))


def test_tallies_and_score_are_read_from_the_records(hex3):
    strong = mctsfw.make_actor("mcts", hex3, search_games=200, seed=1)
    result = play_match(hex3, strong, RandomActor(hex3, seed=2), 8, seating=(1, 2), openers=("a", "b"))
    winners = [result.winner(i) for i in range(8)]
    assert result.wins_a == winners.count("a") >= 6 and result.wins_b == winners.count("b")
    assert result.tally().score == (result.wins_a + 0.5 * result.draws) / 8
    # both cycles have length 2: A is player 1 and opens in the even games, player 2 and second in the odd
    assert result.tally(a_player=1, a_opens=True).games == 4 and result.tally(a_player=2, a_opens=True).games == 0
    thinking = result.mean_seconds_per_move()
    assert thinking["a"] > thinking["b"] > 0


def test_bad_schedules_are_refused(hex3):
    a, b = RandomActor(hex3), RandomActor(hex3)
    with pytest.raises(ValueError, match="seating lists A's player number"):
        play_match(hex3, a, b, 2, seating=(1, 3))
    with pytest.raises(ValueError, match="openers lists who opens"):
        play_match(hex3, a, b, 2, openers=("c",))
    with pytest.raises(ValueError, match="games must be a whole number"):
        play_match(hex3, a, b, -1)


def test_compare_is_a_view_of_the_match(hex3):
    result = compare(hex3, RandomActor(hex3, seed=1), RandomActor(hex3, seed=2), 6, starting_player=2)
    assert result["starting_player"] == 2 and result["games"] == 6
    assert result["a_as_player_1"]["games"] == result["a_as_player_2"]["games"] == 3
    # player 2 opens every game, so A moves first exactly when it is player 2
    assert result["a_moving_first"] == result["a_as_player_2"] and result["a_moving_second"] == result["a_as_player_1"]
    assert sum(sum(v.values()) for v in result["game_lengths"]["by_colour"].values()) == 6
    report = compare_report(result)
    assert "player 2 opens every game" in report and "A as player 1" in report


def test_compare_gives_players_that_choose_alike_the_games_openings_by_default():
    """Two players that play the same game every time meet in two games (one a seat) from
    the empty board; by default their pairs of games begin from the game's openings, so
    the games differ, and the same seed gives the same games."""
    game = mctsfw.make_game("gomoku", size=9)

    def play(**openings):
        low, high = PreferLowCells(81), PreferLowCells(81)
        high.probs = high.probs[::-1].copy()
        return compare(game, NetActor(game, low), NetActor(game, high), 8, **openings)

    alike = play(openings="none")
    assert alike["distinct_games"] == 2 and alike["openings"] is None
    report = compare_report(alike)
    assert "from the empty board" in report and "warning: only 2 of the 8 games differ" in report
    varied = play(seed=5)
    assert varied["distinct_games"] == 8 and varied["warning"] is None
    assert "each pair (A in each seat) from its own opening of 3 balanced stones near the centre" in compare_report(varied)
    assert play(seed=5)["game_lengths"] == varied["game_lengths"]  # the openings follow from the seed
    assert play(openings=4, seed=5)["openings"] == "4 random legal moves"


def test_players_that_draw_at_random_play_from_the_empty_board_unless_asked(hex3):
    a, b = RandomActor(hex3, seed=1), RandomActor(hex3, seed=2)
    assert not a.deterministic
    assert compare(hex3, a, b, 4)["openings"] is None
    assert compare(hex3, a, b, 4, openings="game")["openings"] == "2 random legal moves"


@pytest.mark.parametrize("spec, params, deterministic", [
    ("random", {}, False),
    ("mcts", {"search_games": 20}, False),  # UCT tries untried moves in a random order, random rollouts
    ("mcts", {"search_games": 20, "tree_policy": "puct"}, False),  # rollouts still
])
def test_actors_say_whether_they_would_replay_a_game(hex3, spec, params, deterministic):
    assert mctsfw.make_actor(spec, hex3, seed=0, **params).deterministic is deterministic


def test_a_greedy_network_and_a_search_on_its_value_head_alone_replay_their_games():
    game = mctsfw.make_game("hex", size=7)
    model = "models/hex7/pv_mlp_gen0300.keras"
    assert mctsfw.make_actor(model, game, search_games=0).deterministic
    assert not mctsfw.make_actor(model, game, search_games=0, selection="sample").deterministic
    assert mctsfw.make_actor(model, game, search_games=16, value_weight=1.0).deterministic
    assert not mctsfw.make_actor(model, game, search_games=16, value_weight=0.5).deterministic
    assert not mctsfw.make_actor(model, game, search_games=16, value_weight=1.0, temperature=1.0).deterministic


def test_openings_are_shared_by_each_pair_and_differ_between_pairs():
    game = mctsfw.make_game("hex", size=5)
    openings = Openings(game, seed=3)
    drawn = [openings(number, 1) for number in range(40)]
    assert all(drawn[2 * k] == drawn[2 * k + 1] and len(drawn[2 * k]) == 2 for k in range(20))
    assert len({tuple(moves) for moves in drawn}) == 20
    assert Openings(game, seed=3)(6, 1) == drawn[6] and Openings(game, seed=4)(6, 1) != drawn[6]
    with pytest.raises(ValueError, match="the same opener"):
        openings(1, 2)  # game 1 shares game 0's opening, which player 1 opened


def test_shared_openings_need_a_schedule_in_pairs(hex3):
    a, b = RandomActor(hex3), RandomActor(hex3)
    with pytest.raises(ValueError, match="in pairs"):
        play_match(hex3, a, b, 4, seating=(1,), openers=(1, 2), opening=Openings(hex3))
    for schedule in (BALANCED, PLAYER_1_OPENS):
        result = play_match(hex3, a, b, 8, opening=Openings(hex3, seed=1), **schedule)
        for k in range(4):
            first, second = result.records[2 * k], result.records[2 * k + 1]
            assert first.actions[:2] == second.actions[:2] and first.starting_player == second.starting_player
            assert result.a_players[2 * k] != result.a_players[2 * k + 1]


@pytest.mark.parametrize("name, params, count", [
    ("hex", {"size": 11}, 2), ("go", {"size": 9}, 2), ("gomoku", {"size": 15}, 3), ("gomoku", {"size": 7}, 3),
    ("connect4", {}, 0), ("nim", {}, 0),
])
def test_each_game_declares_its_openings(name, params, count):
    game = mctsfw.make_game(name, **params)
    for seed in range(20):
        moves = game.match_opening(1, np.random.default_rng(seed))
        assert len(moves) == count
        state = game.state_after(moves, 1)  # legal, and the game goes on
        assert not game.is_final(state) and game.pass_action not in moves
        if name == "gomoku":  # near the centre, the opener's two stones apart
            n, middle = game.size, (game.size - 1) // 2
            reach = 2 if n >= 9 else 1
            cells = [divmod(a, n) for a in moves]
            assert all(abs(r - middle) <= reach and abs(c - middle) <= reach for r, c in cells)
            assert max(abs(cells[0][0] - cells[2][0]), abs(cells[0][1] - cells[2][1])) > 1


def test_the_strength_report_balances_colours_and_first_moves(hex3):
    from scripts.strength_report import evaluate

    strong = mctsfw.make_actor("mcts", hex3, search_games=200, seed=3)
    r = evaluate(hex3, strong, RandomActor(hex3, seed=4), 8)
    assert r["games"] == 8 and r["wins"] >= 6 and r["draws"] == 0 and r["win_rate"] == r["wins"] / 8
    assert r["win_rate_moving_first"] == 1.0  # the opener wins 3x3 Hex: MCTS opens 4 of the 8 games
    wins_second = r["wins"] - 4
    assert r["win_rate_moving_second"] == wins_second / 4


def test_gating_plays_its_schedule_through_the_match_runner(tmp_path, monkeypatch):
    from hexzero.mctsfw import selfplay
    from hexzero.mctsfw.config import load_config
    from tests.test_training import DEFAULTS

    config = load_config(DEFAULTS, None, [
        "games.hex.size=3", "selfplay.search_games=8", "selfplay.batch_size=4", "nets.pv_mlp.hidden_layers=[8]",
        "selfplay.seed=1", "selfplay.temperature_moves=2", f'selfplay.run_dir="{tmp_path}"',
    ])
    trainer = selfplay.SelfPlayTrainer(config, tmp_path, progress=False)
    trainer._start_fresh()
    played = []

    def spy(*args, **kwargs):
        played.append(selfplay_play_match(*args, **kwargs))
        return played[-1]

    selfplay_play_match = selfplay.play_match
    monkeypatch.setattr(selfplay, "play_match", spy)
    score = trainer.match(trainer.net, trainer.best, 4)
    (result,) = played
    assert result.a_players == [1, 2, 1, 2] and [r.starting_player for r in result.records] == [1, 1, 2, 2]
    assert score == result.tally()


# ---- temperature ---------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [float("inf"), float("nan"), -0.5, "hot", None])
@pytest.mark.parametrize("spec", ["mcts", "random", "missing_model.keras"])
def test_an_unusable_temperature_is_refused_at_construction(hex3, spec, bad):
    with pytest.raises(ValueError, match="temperature must be"):
        mctsfw.make_actor(spec, hex3, temperature=bad)


def test_a_tiny_temperature_plays_the_most_visited_move(hex3):
    actor = mctsfw.make_actor("mcts", hex3, search_games=60, temperature=0.002, seed=1)
    state = hex3.initial_state()
    for _ in range(5):
        action = actor.select_action(state)
        assert actor.last_distribution[action] == actor.last_distribution.max()  # a most visited move (ties are equal)
        actor.reset()


class PreferLowCells:
    """A stand-in policy net: probabilities falling with the cell number."""

    def __init__(self, num_actions):
        self.probs = np.linspace(1.0, 0.1, num_actions, dtype=np.float32)

    def forward(self, x):
        return np.tile(self.probs / self.probs.sum(), (len(x), 1))


def test_a_net_actor_draws_through_the_one_sampler(hex3):
    from hexzero.mctsfw.sampling import sample_action

    state = hex3.next_state(hex3.initial_state(), 0)
    greedy = NetActor(hex3, PreferLowCells(9))
    assert greedy.select_action(state) == 1  # cell 0 is taken
    sampler = NetActor(hex3, PreferLowCells(9), selection="sample", seed=5)
    draws = [sampler.select_action(state) for _ in range(300)]
    assert 0 not in draws and len(set(draws)) == 8
    rng = np.random.default_rng(5)
    expected = [sample_action(sampler.policy(state), 1.0, rng) for _ in range(300)]
    assert draws == expected
    assert math.isclose(draws.count(1) / 300, sampler.policy(state)[1], abs_tol=0.08)


class Referee(RandomActor):
    """A random player that counts every finished game as won by player 2, as an outside
    engine's ``final_score`` may differ from the rules' winner (GNU Go's dead stones)."""

    def judge(self, state):
        return -1.0


def test_compare_lets_the_first_player_that_counts_games_referee_them(hex3):
    result = compare(hex3, Referee(hex3, seed=1), RandomActor(hex3, seed=2), 8)
    # A is player 2 in half the games: every game goes to player 2 whatever the board says
    assert result["a_as_player_2"]["win_rate"] == 1 and result["a_as_player_1"]["win_rate"] == 0


def test_the_strength_report_names_what_it_cannot_play_in_one_line(tmp_path):
    """A missing outside engine or a broken model file: one line, exit 2, no traceback."""
    root = Path(__file__).resolve().parent.parent
    broken = tmp_path / "broken.keras"
    broken.write_text("not a network")
    env = {**os.environ, "PATH": "/usr/bin:/bin", "HEXZERO_MOHEX": str(tmp_path / "no-mohex")}
    for model, opponents, said in ((root / "models/hex7/pv_mlp_gen0300.keras", "mohex:10", "MoHex"),
                                   (broken, "random", "broken.keras")):
        done = subprocess.run([sys.executable, str(root / "scripts/strength_report.py"), str(model), "--games", "2",
                               "--opponents", opponents], capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 2 and said in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_the_strength_report_searches_with_the_tree_policy_asked_for():
    """``--tree-policy gumbel``: the model's search is Gumbel's (its label says so), a
    PUCT-only option beside it is refused in one line with exit 2; ``--c-puct`` weighs the
    file's own PUCT's priors."""
    import argparse

    from benchmarks.search_options import add_search_options, check_search_options, search_label, search_params

    parser = argparse.ArgumentParser()
    add_search_options(parser)
    model = Path(__file__).resolve().parent.parent / "models/hex7/pv_mlp_gen0300.keras"
    game = mctsfw.make_model_game(model)
    args = parser.parse_args(["--tree-policy", "gumbel"])
    check_search_options(parser, args)
    actor = mctsfw.make_actor(model, game, search_games=16, seed=0, **search_params(args))
    assert actor.mcts.tree_policy.name == "gumbel" and search_label(args) == ", gumbel"
    assert mctsfw.make_actor(model, game, search_games=16, seed=0).mcts.tree_policy.name == "puct"  # the file's
    with pytest.raises(SystemExit) as refused:
        check_search_options(parser, parser.parse_args(["--tree-policy", "gumbel", "--first-play", "reduction"]))
    assert refused.value.code == 2
    args = parser.parse_args(["--c-puct", "0.75"])  # a setting of the file's own PUCT
    check_search_options(parser, args)
    actor = mctsfw.make_actor(model, game, search_games=16, seed=0, **search_params(args))
    assert actor.mcts.tree_policy.c_puct == 0.75 and search_label(args) == ", c 0.75"
