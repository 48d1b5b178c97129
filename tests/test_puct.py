"""Evaluator-driven search (PUCT): expansion with priors, values backed up for the right player."""

import functools
import itertools

import numpy as np
import pytest

import mctsfw
from mctsfw import MCTS, make_tree_policy
from tests.test_hex import place


class UniformEvaluator:
    """Every legal move equally likely, every position a coin flip."""

    def __init__(self, game):
        self.game = game
        self.calls = []

    def evaluate(self, states):
        self.calls.append(len(states))
        masks = np.stack([self.game.legal_mask(s) for s in states])
        return masks / masks.sum(axis=1, keepdims=True), np.full(len(states), 0.5)


class NimOracle(UniformEvaluator):
    """The exact value of a normal-play NIM position (xor rule), uniform priors."""

    def evaluate(self, states):
        priors, _ = super().evaluate(states)
        values = [1.0 if functools.reduce(lambda a, b: a ^ b, s[1]) else 0.0 for s in states]
        return priors, np.array(values)


def puct(**params):
    defaults = {"c_puct": 1.5, "dirichlet_epsilon": 0.0}
    return make_tree_policy("puct", **{**defaults, **params})


@pytest.mark.parametrize("to_move", [1, 2])
def test_puct_takes_a_win_in_one_with_an_uninformed_evaluator(to_move):
    game = mctsfw.make_game("hex", size=5)
    if to_move == 1:
        state = place(game, [(0, 2), (1, 2), (3, 2), (4, 2)], [(0, 0), (4, 4), (1, 4), (3, 0)], 1)
    else:
        state = place(game, [(0, 0), (4, 4), (1, 3), (3, 1)], [(2, 0), (2, 1), (2, 3), (2, 4)], 2)
    evaluator = UniformEvaluator(game)
    mcts = MCTS(game, puct(), evaluator=evaluator, seed=0, batch_size=8)
    root = mcts.search(state, search_games=400)
    assert mcts.best_action(root) == 12
    assert len(root.children) == 17 and all(ch.prior == pytest.approx(1 / 17) for ch in root.children)
    assert max(evaluator.calls) > 1  # leaves were judged in batches


@pytest.mark.parametrize("piles, start", [((1, 2, 3, 4), 1), ((2, 3, 5), 2), ((1, 4, 6), 1)])
def test_puct_with_exact_values_plays_nim_perfectly(piles, start):
    game = mctsfw.make_game("nim", piles=list(piles))
    for position in itertools.product(*[range(p + 1) for p in piles]):
        if not functools.reduce(lambda a, b: a ^ b, position):
            continue
        mcts = MCTS(game, puct(), evaluator=NimOracle(game), seed=1, batch_size=4)
        root = mcts.search((start, tuple(position)), search_games=60)
        pile, take = divmod(mcts.best_action(root), game.cap)
        after = list(position)
        after[pile] -= take + 1
        assert functools.reduce(lambda a, b: a ^ b, after) == 0, position


def test_values_are_for_the_player_to_move_at_the_leaf():
    """A lost position (xor 0) for the player to move: the root's value for that player is low."""
    game = mctsfw.make_game("nim", piles=[3, 5, 6])
    mcts = MCTS(game, puct(), evaluator=NimOracle(game), seed=2)
    root = mcts.search((2, (3, 5, 6)), search_games=10)  # the root and 10 of its children
    assert root.mover == 1 and root.q == 1.0  # a win for player 1, who moved into it
    visited = [child for child in root.children if child.visits]
    assert len(visited) == 10 and all(child.mover == 2 and child.q == 0.0 for child in visited)


def test_dirichlet_noise_is_added_once_per_search():
    game = mctsfw.make_game("hex", size=3)
    mcts = MCTS(game, puct(dirichlet_alpha=0.5, dirichlet_epsilon=0.5), evaluator=UniformEvaluator(game), seed=3)
    root = mcts.search(game.initial_state(), search_games=20)
    priors = [ch.prior for ch in root.children]
    assert sum(priors) == pytest.approx(1.0) and max(priors) - min(priors) > 0.01
    mcts.search(game.initial_state(), search_games=20)  # the same root again: no second dose
    assert [ch.prior for ch in root.children] == priors
    assert root.visits == 41  # the root's own evaluation plus 40 search games


def test_value_weight_mixes_in_playouts():
    game = mctsfw.make_game("hex", size=3)
    policy = puct(value_weight=0.0)  # playouts only: the evaluator's 0.5 is ignored
    mcts = MCTS(game, policy, evaluator=UniformEvaluator(game), seed=4)
    root = mcts.search(game.initial_state(), search_games=90)
    assert mcts.value_weight == 0.0
    assert len({round(child.q, 6) for child in root.children}) > 1  # playout results, not the constant 0.5
    only_values = MCTS(game, puct(), evaluator=UniformEvaluator(game), seed=4)
    root = only_values.search(game.initial_state(), search_games=9)  # no final state reached yet
    assert {child.q for child in root.children} == {0.5}


def test_puct_parameters_are_checked():
    with pytest.raises(ValueError, match="dirichlet_epsilon"):
        make_tree_policy("puct", dirichlet_epsilon=2)
    with pytest.raises(ValueError, match="c_pucct"):
        make_tree_policy("puct", c_pucct=1)
