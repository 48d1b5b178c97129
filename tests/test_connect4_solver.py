"""Connect Four against BitBully, a perfect solver nobody here wrote (the differential
extra): the same boards, the same immediate wins, and the solver's verdicts agree with a
search that proves them (benchmarks/connect4_perfect.py measures agents with it)."""

import random
import sys
from pathlib import Path

import pytest

from hexzero import mctsfw
from hexzero.mctsfw import MCTS, make_tree_policy

bitbully = pytest.importorskip("bitbully")
pytestmark = pytest.mark.solver  # the second step of CI runs them, with the extra installed
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from connect4_perfect import Perfect  # noqa: E402

GAME = mctsfw.make_game("connect4")


def random_positions(count, seed=0, longest=30):
    """(moves, state) of unfinished positions reached by random play (player 1 first)."""
    rng, found = random.Random(seed), []
    while len(found) < count:
        state, moves = GAME.initial_state(1), []
        for _ in range(rng.randrange(longest)):
            action = rng.choice(GAME.legal_actions(state))
            after = GAME.next_state(state, action)
            if GAME.is_final(after):
                break
            state, moves = after, moves + [action]
        found.append((moves, state))
    return found


def test_boards_and_immediate_wins_agree_with_the_solver():
    perfect = Perfect(GAME)
    for moves, state in random_positions(300):
        theirs = bitbully.Board.from_moves(moves)
        assert bitbully.Board.from_array(GAME.board(state)[::-1].tolist()).uid() == theirs.uid()
        forcing = GAME.forcing_actions(state)
        assert (forcing is not None and forcing.wins) == theirs.can_win_next()
        if forcing is not None and forcing.wins:
            assert all(theirs.can_win_next(a) for a in forcing.actions)
            assert all(perfect.scores(state)[a] > 0 for a in forcing.actions)


def test_a_search_that_proves_a_position_agrees_with_the_solver():
    """Late positions (22 to 30 stones) that UCT with proofs settles in 20,000 search games:
    its verdict is the solver's."""
    perfect, checked = Perfect(GAME), 0
    for moves, state in random_positions(40, seed=1, longest=34):
        if len(moves) < 22:
            continue
        root = MCTS(GAME, make_tree_policy("uct"), seed=0).search(state, search_games=20000)
        if root.result is None:
            continue
        best = max(perfect.scores(state).values())
        assert root.result == (1.0 if best > 0 else 0.5 if best == 0 else 0.0), moves
        checked += 1
    assert checked >= 5
