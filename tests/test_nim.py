"""NIM rules: normal and misère play, the cap per move, illegal moves."""

import random

import pytest

from hexzero import mctsfw
from hexzero.mctsfw import IllegalMoveError


def take(game, state, pile, count):
    return game.next_state(state, game.action(pile, count))


def test_normal_play_last_stone_wins():
    game = mctsfw.make_game("nim", piles=[1, 2])
    state = game.initial_state()
    state = take(game, state, 1, 2)  # player 1
    assert not game.is_final(state) and game.current_player(state) == 2
    state = take(game, state, 0, 1)  # player 2 takes the last stone
    assert game.is_final(state) and game.winner(state) == 2


def test_misere_last_stone_loses():
    game = mctsfw.make_game("nim", piles=[1, 2], misere=True)
    state = take(game, take(game, game.initial_state(), 1, 2), 0, 1)
    assert game.winner(state) == 1


def test_either_player_may_start():
    game = mctsfw.make_game("nim", piles=[3])
    state = take(game, game.initial_state(starting_player=2), 0, 3)
    assert game.winner(state) == 2


def test_max_take_limits_moves_and_action_space():
    game = mctsfw.make_game("nim", piles=[5, 2], max_take=3)
    assert game.num_actions == 2 * 3
    state = game.initial_state()
    legal = game.legal_actions(state)
    assert sorted(legal) == [0, 1, 2, 3, 4]  # pile 1: take 1-3, pile 2: take 1-2
    with pytest.raises(IllegalMoveError):
        game.parse_action("1 4", state)


def test_no_cap_uses_the_largest_pile():
    game = mctsfw.make_game("nim", piles=[4, 7])
    assert game.num_actions == 14
    assert len(game.legal_actions(game.initial_state())) == 11


def test_illegal_moves_are_refused_and_change_nothing():
    game = mctsfw.make_game("nim", piles=[2, 3], max_take=3)
    state = game.initial_state()
    with pytest.raises(IllegalMoveError, match="pile 1 has 2"):
        game.next_state(state, game.action(0, 3))
    for bad, reason in [("4 1", "no pile 4"), ("1 0", "at least one"), ("x", "cannot read"), ("1 3", "only 2")]:
        with pytest.raises(IllegalMoveError, match=reason):
            game.parse_action(bad, state)
    assert state == game.initial_state()
    assert game.parse_action("2 3", state) == game.action(1, 3)
    final = take(game, take(game, state, 0, 2), 1, 3)
    with pytest.raises(IllegalMoveError, match="over"):
        game.next_state(final, 0)


@pytest.mark.parametrize(
    "params, problem",
    [({"piles": []}, "piles"), ({"piles": [3, 0]}, "piles"), ({"max_take": -1}, "max_take"), ({"misere": "yes"}, "misere"), ({"heaps": [1]}, "heaps")],
)
def test_bad_parameters_are_refused(params, problem):
    with pytest.raises(ValueError, match=problem):
        mctsfw.make_game("nim", **params)


def test_render_and_encode():
    game = mctsfw.make_game("nim", piles=[2, 4])
    state = take(game, game.initial_state(), 1, 1)
    assert "pile 2: o o o" in game.render(state)
    assert list(game.encode(state)) == [1.0, 0.75, 0.0, 1.0]


def random_play_win_chance(game, state, player=1) -> float:
    """The exact chance that ``player`` wins when both play uniformly random legal moves."""
    if game.is_final(state):
        return float(game.winner(state) == player)
    actions = game.legal_actions(state)
    return sum(random_play_win_chance(game, game.next_state(state, a), player) for a in actions) / len(actions)


@pytest.mark.parametrize("params", [{"piles": [3], "max_take": 2}, {"piles": [3, 5], "max_take": 2, "misere": True},
                                    {"piles": [3, 4, 5]}])
def test_the_fast_playout_draws_moves_as_the_rules_list_them(params):
    """Nim's own playout skips the move list and the checks; its winners come with the
    chances of uniformly random legal moves (4 standard deviations over 20,000 playouts;
    player 1 wins 1 in 4 from a pile of 3 taking 1 or 2, 47% of the misère game)."""
    game = mctsfw.make_game("nim", **params)
    state = game.initial_state()
    rng, n = random.Random(7), 20000
    wins = sum(game.playout(state, rng) == 1 for _ in range(n))
    p = random_play_win_chance(game, state)
    assert abs(wins / n - p) < 4 * (p * (1 - p) / n) ** 0.5 + 1e-9
    one_left = (2, (0,) * (len(params["piles"]) - 1) + (1,))  # player 2 takes the last stone
    assert game.playout(one_left, rng) == (1 if params.get("misere") else 2)
