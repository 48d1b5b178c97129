"""Evaluator-driven search (PUCT): expansion with priors, values backed up for the right player."""

import functools
import itertools

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw import MCTS, make_tree_policy
from hexzero.mctsfw.evaluators import LeafEvaluator, MixedEvaluator, RandomRollouts
from tests.test_hex import centre_wins


class UniformEvaluator(LeafEvaluator):
    """Every legal move equally likely (as priors from a network would be), every position a coin flip."""

    name = "uniform"
    informed_priors = True
    batch_size = 8

    def __init__(self, game):
        super().__init__(game)
        self.calls = []

    def evaluate(self, states, with_priors=True):
        self.calls.append(len(states))
        masks = np.stack([self.game.legal_mask(s) for s in states])
        return np.full(len(states), 0.5), masks / masks.sum(axis=1, keepdims=True)


class NimOracle(UniformEvaluator):
    """The exact value of a normal-play NIM position (xor rule), uniform priors."""

    def evaluate(self, states, with_priors=True):
        _, priors = super().evaluate(states)
        values = [1.0 if functools.reduce(lambda a, b: a ^ b, s[1]) else 0.0 for s in states]
        return np.array(values), priors


def root_priors(root):
    """The root's prior of every legal action, by action (children and untried actions alike)."""
    priors = {child.action: child.prior for child in root.children}
    priors.update((a, root.untried_prior(i)) for i, a in enumerate(root.untried))
    return priors


def puct(**params):
    defaults = {"c_puct": 1.5, "dirichlet_epsilon": 0.0}
    return make_tree_policy("puct", **{**defaults, **params})


@pytest.mark.parametrize("to_move", [1, 2])
def test_puct_takes_a_win_in_one_with_an_uninformed_evaluator(to_move):
    game = mctsfw.make_game("hex", size=5)
    state = centre_wins(game, to_move)
    evaluator = UniformEvaluator(game)
    mcts = MCTS(game, puct(), evaluator=evaluator, seed=0, batch_size=8)
    root = mcts.search(state, search_games=400)
    assert mcts.best_action(root) == 12 and root.result == 1.0  # the game declares the winning move
    assert mcts.last_search_games == 0 and not evaluator.calls
    # and the search finds it without the game's help
    mcts = MCTS(game, puct(), evaluator=evaluator, seed=0, batch_size=8, threats=False)
    root = mcts.search(state, search_games=400)
    assert mcts.best_action(root) == 12
    priors = root_priors(root)
    assert len(priors) == 17 and all(p == pytest.approx(1 / 17) for p in priors.values())
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


def test_root_noise_is_fresh_at_every_search_and_reproducible():
    """Each search mixes new Dirichlet noise into the root's clean priors, the same root
    searched twice included; the same seed gives the same noise; no noise unless asked."""
    game = mctsfw.make_game("hex", size=3)

    def two_searches(seed):
        mcts = MCTS(game, puct(dirichlet_alpha=0.5, dirichlet_epsilon=0.5), UniformEvaluator(game), seed=seed,
                    root_noise=True)
        first = root_priors(mcts.search(game.initial_state(), search_games=20))
        root = mcts.search(game.initial_state(), search_games=20)  # the same root again
        assert root.visits == 40
        return first, root_priors(root)

    first, second = two_searches(3)
    for priors in (first, second):
        assert sum(priors.values()) == pytest.approx(1.0) and max(priors.values()) - min(priors.values()) > 0.01
        noise = [(p - 0.5 / 9) / 0.5 for p in priors.values()]  # noise mixed into the clean 1/9, not into noise
        assert min(noise) >= -1e-9 and sum(noise) == pytest.approx(1.0)
    assert first != second
    assert two_searches(3) == (first, second) and two_searches(4) != (first, second)
    clean = MCTS(game, puct(dirichlet_alpha=0.5, dirichlet_epsilon=0.5), UniformEvaluator(game), seed=3)
    assert list(root_priors(clean.search(game.initial_state(), search_games=20)).values()) == pytest.approx([1 / 9] * 9)


def test_a_kept_subtree_root_gets_noise_at_its_own_search():
    game = mctsfw.make_game("hex", size=3)
    mcts = MCTS(game, puct(dirichlet_alpha=0.3, dirichlet_epsilon=0.5), UniformEvaluator(game), seed=5,
                root_noise=True)
    root = mcts.search(game.initial_state(), search_games=60)
    action = mcts.best_action(root)
    child = root.child(action)
    clean = root_priors(child) if child.untried is not None else None
    mcts.advance(action)
    new_root = mcts.search(game.next_state(game.initial_state(), action), search_games=20)
    assert new_root is child and clean is not None
    assert root_priors(new_root) != clean and list(clean.values()) == pytest.approx([1 / 8] * 8)


def test_value_weight_mixes_in_playouts():
    game = mctsfw.make_game("hex", size=3)
    playouts_only = MixedEvaluator(UniformEvaluator(game), RandomRollouts(game, seed=4), 0.0)  # the 0.5 is ignored
    mcts = MCTS(game, puct(), playouts_only, seed=4)
    root = mcts.search(game.initial_state(), search_games=90)
    assert len({round(child.q, 6) for child in root.children}) > 1  # playout results, not the constant 0.5
    only_values = MCTS(game, puct(), UniformEvaluator(game), seed=4)
    root = only_values.search(game.initial_state(), search_games=9)  # no final state reached yet
    assert {child.q for child in root.children} == {0.5}
    with pytest.raises(ValueError, match="lambda"):
        MixedEvaluator(UniformEvaluator(game), RandomRollouts(game), 1.5)


def test_puct_parameters_are_checked():
    with pytest.raises(ValueError, match="dirichlet_epsilon"):
        make_tree_policy("puct", dirichlet_epsilon=2)
    with pytest.raises(ValueError, match="c_pucct"):
        make_tree_policy("puct", c_pucct=1)


@pytest.mark.parametrize("first_play, tried", [("win", 49), ("parent", 49), ("reduction", 3), ("loss", 1)])
def test_the_first_play_value_decides_how_wide_puct_looks(first_play, tried):
    """With every position a coin flip and uniform priors (7x7 Hex, 60 search games): an
    untried move assumed a win, or worth the parent's value, is tried before a move is
    searched much; worth a little less (Leela Zero's reduction), the first moves are
    searched deeper first; assumed a loss, one move takes every search game."""
    game = mctsfw.make_game("hex", size=7)
    mcts = MCTS(game, puct(first_play=first_play), evaluator=UniformEvaluator(game), seed=0, batch_size=1)
    root = mcts.search(game.initial_state(), search_games=60)
    assert len(root.children) == tried
    assert mcts.tree_policy.first_play_value(root) == pytest.approx({"win": 1.0, "loss": 0.0}.get(
        first_play, max(0.0, 1.0 - root.q - (0.2 if first_play == "reduction" else 0.0))))
