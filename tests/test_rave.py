"""RAVE (plugins/rave.py): all-moves-as-first statistics from the playouts, blended with
UCT's means; its statistics reach it through the evaluator's results and ``observe``."""

import pytest

from hexzero import mctsfw
from hexzero.mctsfw import MCTS, make_tree_policy
from hexzero.mctsfw.evaluators import RandomRollouts
from tests.test_hex import centre_wins


def rave_search(game, state, games, seed=1, **options):
    mcts = MCTS(game, make_tree_policy("rave"), seed=seed, **options)
    return mcts, mcts.search(state, search_games=games)


def test_the_root_counts_every_move_its_player_made_in_each_search_game():
    """On Hex every playout fills the board: each search game gives the player to move at
    the root one AMAF sample for each cell they end up holding (tree moves and playout's)."""
    game = mctsfw.make_game("hex", size=4)
    state = game.initial_state()
    mcts, root = rave_search(game, state, 300, threats=False, solver=False)
    samples = sum(n for n, _ in root.stats.values())
    assert samples == 300 * 8  # 16 cells: the starter holds 8 of them at the end of every game
    assert all(0 <= wins <= n for n, wins in root.stats.values())
    assert set(root.stats) == set(range(16))


@pytest.mark.parametrize("to_move", [1, 2])
def test_rave_finds_the_winning_move_on_its_own(to_move):
    game = mctsfw.make_game("hex", size=5)
    state = centre_wins(game, to_move)
    mcts, root = rave_search(game, state, 2000, threats=False, solver=False)
    assert mcts.best_action(root) == 12


def test_rave_plays_whole_games_through_the_cli_config():
    game = mctsfw.make_game("gomoku", size=7, connect=4)
    agent = mctsfw.make_actor("mcts", game, search_games=200, tree_policy="rave", seed=3)
    state = game.initial_state()
    while not game.is_final(state):
        state = game.next_state(state, agent.select_action(state))
    assert game.is_final(state)


def test_rave_needs_an_evaluator_that_reports_its_playouts():
    from tests.test_puct import UniformEvaluator

    game = mctsfw.make_game("hex", size=3)
    with pytest.raises(ValueError, match="rave tree policy learns from the moves of playouts; the .* "
                                         "evaluator does not say them"):
        MCTS(game, make_tree_policy("rave"), UniformEvaluator(game))
    assert MCTS(game, make_tree_policy("rave"), RandomRollouts(game, seed=1)).evaluator.record_playouts


def test_go_reports_the_moves_of_its_light_playouts():
    """Go's playouts (``random_moves``) say each player's moves for RAVE, as stepping
    through ``next_state`` with the same random numbers would."""
    import random

    game = mctsfw.make_game("go", size=5)
    state = game.state_after([12, 6])
    winner, (black, white) = game.playout_played(state, random.Random(4))
    moves, same_winner = game.random_moves(state, random.Random(4))
    assert winner == same_winner and black == moves[0::2] and white == moves[1::2]  # black (player 1) to move
    replayed = state
    for action in moves:
        replayed = game.next_state(replayed, action)
    assert game.is_final(replayed) and game.winner(replayed) == winner
