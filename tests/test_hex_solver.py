"""The Hex solver (games/hex_solver.py) against plain minimax: the same verdicts and the
same winning moves on 3x3 and 4x4 positions, and the known winning openings."""

import random

import pytest

from hexzero import mctsfw
from hexzero.games.hex_solver import HexSolver


def minimax(game, state, memo):
    """Whether the player to move wins, by trying every move to the end."""
    if state not in memo:
        if game.is_final(state):
            memo[state] = game.winner(state) == game.current_player(state)
        else:
            memo[state] = any(not minimax(game, game.next_state(state, a), memo) for a in game.legal_actions(state))
    return memo[state]


def random_positions(game, count, fewest, most, seed):
    """Unfinished positions after ``fewest``..``most`` random moves, either player first."""
    rng, found = random.Random(seed), []
    while len(found) < count:
        state = game.initial_state(rng.choice((1, 2)))
        for _ in range(rng.randint(fewest, most)):
            state = game.next_state(state, rng.choice(game.legal_actions(state)))
            if game.is_final(state):
                break
        if not game.is_final(state):
            found.append(state)
    return found


@pytest.mark.parametrize("size, count, fewest, seed", [(3, 120, 0, 0), (4, 60, 5, 1)])
def test_verdicts_and_winning_moves_agree_with_minimax(size, count, fewest, seed):
    game = mctsfw.make_game("hex", size=size)
    memo = {}
    for state in random_positions(game, count, fewest, size * size - 1, seed):
        solver = HexSolver(game)  # a fresh table: each verdict is searched, not remembered
        expected = [a for a in game.legal_actions(state) if not minimax(game, game.next_state(state, a), memo)]
        assert solver.wins(state) == minimax(game, state, memo), game.render(state)
        assert sorted(solver.winning_moves(state)) == expected, game.render(state)
        move = solver.winning_move(state)
        assert move in expected if expected else move is None


def test_winning_openings_on_small_boards():
    """The first player wins 3x3 and 4x4 Hex; on 4x4 only the short diagonal wins. Player
    2 joins the other pair of sides: their winning openings are player 1's reflected in the
    long diagonal (a3 for c1)."""
    for size, openings in ((3, ["c1", "a2", "b2", "c2", "a3"]), (4, ["d1", "c2", "b3", "a4"])):
        game = mctsfw.make_game("hex", size=size)
        solver = HexSolver(game)
        reflected = [f"{chr(ord('a') + int(name[1:]) - 1)}{ord(name[0]) - ord('a') + 1}" for name in openings]
        for player, expected in ((1, openings), (2, reflected)):
            state = game.initial_state(player)
            assert solver.wins(state)
            assert sorted(game.cell_name(a) for a in solver.winning_moves(state)) == sorted(expected)


def test_finished_games_and_one_move_wins():
    game = mctsfw.make_game("hex", size=5)
    solver = HexSolver(game)
    state = game.initial_state(1)
    for action in (0, 1, 5, 6, 10, 11, 15, 16):  # player 1 holds a1..a4, player 2 b1..b4
        state = game.next_state(state, action)
    assert solver.wins(state) and 20 in solver.winning_moves(state)  # a5 joins player 1's column
    won = game.next_state(state, 20)
    assert game.winner(won) == 1 and not solver.wins(won) and solver.winning_moves(won) == []


def test_the_pie_rule_is_refused():
    with pytest.raises(ValueError, match="pie rule"):
        HexSolver(mctsfw.make_game("hex", size=4, swap=True))


def test_the_perfect_play_benchmark_scores_moves_by_the_solver():
    """benchmarks/hex_perfect.py: a perfect agent keeps every won position it meets; a
    random one lets some slip, and wins fewer games."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from hex_perfect import kept_share

    from hexzero.mctsfw.actors import Actor, RandomActor

    game = mctsfw.make_game("hex", size=4)
    solver = HexSolver(game)

    class Perfect(Actor):
        def select_action(self, state):
            move = solver.winning_move(state)
            return random.choice(game.legal_actions(state)) if move is None else move

    perfect = kept_share(Perfect(game), game, solver, games=30, opening=4, seed=0)
    won = sum(n for n, _ in perfect["counts"].values())
    assert won > 20 and all(n == kept for n, kept in perfect["counts"].values())
    randomly = kept_share(RandomActor(game, seed=0), game, solver, games=30, opening=4, seed=0)
    assert sum(kept for _, kept in randomly["counts"].values()) < sum(n for n, _ in randomly["counts"].values())
    assert sum(randomly["results"].values()) == 30 and randomly["results"]["wins"] < perfect["results"]["wins"]
