"""The MCTS engine: tactics on Hex, perfect small NIM, two-player backup, the kept subtree."""

import functools
import itertools

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw import MCTS, make_tree_policy
from tests.test_hex import place


def uct_search(game, state, games=1000, seed=0, **options):
    mcts = MCTS(game, make_tree_policy("uct", c=1.4), seed=seed, **options)
    root = mcts.search(state, search_games=games)
    return mcts, root


@pytest.mark.parametrize("to_move", [1, 2])
def test_takes_a_win_in_one_on_5x5(to_move):
    game = mctsfw.make_game("hex", size=5)
    if to_move == 1:  # player 1 has column 2 but for (2, 2)
        state = place(game, [(0, 2), (1, 2), (3, 2), (4, 2)], [(0, 0), (4, 4), (1, 4), (3, 0)], 1)
    else:  # player 2 has row 2 but for (2, 2)
        state = place(game, [(0, 0), (4, 4), (1, 3), (3, 1)], [(2, 0), (2, 1), (2, 3), (2, 4)], 2)
    mcts, root = uct_search(game, state)
    action = mcts.best_action(root)
    after = game.next_state(state, action)
    assert game.winner(after) == to_move, game.render(state)


@pytest.mark.parametrize("to_move", [1, 2])
def test_blocks_a_loss_in_one_on_5x5(to_move):
    game = mctsfw.make_game("hex", size=5)
    other = 3 - to_move
    if other == 1:  # player 1 threatens to finish column 2 at (2, 2)
        threat = [(0, 2), (1, 2), (3, 2), (4, 2)]
        defence = [(0, 0), (4, 4), (1, 4)]
        state = place(game, threat, defence, to_move)
        blocking = 2 * 5 + 2
    else:  # player 2 threatens to finish row 2 at (2, 3)
        threat = [(2, 0), (2, 1), (2, 2), (2, 4)]
        defence = [(0, 0), (4, 4), (4, 1)]
        state = place(game, defence, threat, to_move)
        blocking = 2 * 5 + 3
    mcts, root = uct_search(game, state)
    assert mcts.best_action(root) == blocking, game.render(state)


@functools.lru_cache(maxsize=None)
def nim_value(piles, max_take):
    """True when the player to move wins (normal play), by exhaustive search."""
    for i, p in enumerate(piles):
        for t in range(1, (min(p, max_take) if max_take else p) + 1):
            rest = piles[:i] + (p - t,) + piles[i + 1 :]
            if not nim_value(rest, max_take):
                return True
    return False


def test_exhaustive_values_agree_with_the_xor_rule():
    for piles in itertools.product(range(4), repeat=3):
        assert nim_value(piles, 0) == (piles[0] ^ piles[1] ^ piles[2] != 0)


@pytest.mark.parametrize("piles", [(1, 2), (2, 3), (1, 5), (1, 2, 3), (1, 2, 4), (2, 2, 3)])
def test_plays_small_nim_perfectly(piles):
    """From every winning position of these games (up to 7 stones) MCTS picks a move leaving xor 0.

    Larger positions need more than 1,000 search games with random rollouts (measured:
    (3, 4, 5) and its 8+ stone subpositions sometimes miss the only winning move)."""
    game = mctsfw.make_game("nim", piles=list(piles))
    positions = set(itertools.product(*[range(p + 1) for p in piles]))
    for position in sorted(positions):
        xor = functools.reduce(lambda a, b: a ^ b, position)
        if xor == 0:
            continue
        state = (1, tuple(position))
        mcts, root = uct_search(game, state, games=1000, seed=sum(position))
        pile, count = divmod(mcts.best_action(root), game.cap)
        after = list(position)
        after[pile] -= count + 1
        assert functools.reduce(lambda a, b: a ^ b, after) == 0, (position, pile, count + 1)


def test_plays_nim_with_a_cap_perfectly():
    game = mctsfw.make_game("nim", piles=[5, 6], max_take=3)
    for position in itertools.product(range(6), range(7)):
        if not nim_value(position, 3):
            continue
        mcts, root = uct_search(game, (2, position), games=1000, seed=7)
        pile, count = divmod(mcts.best_action(root), game.cap)
        after = list(position)
        after[pile] -= count + 1
        assert not nim_value(tuple(after), 3), position


@pytest.mark.parametrize("starter", [1, 2])
def test_values_are_backed_up_for_the_player_who_moved(starter):
    """From a lost NIM position (xor 0) every move loses: the root's children look bad for
    the mover (the averages alone: no proofs)."""
    game = mctsfw.make_game("nim", piles=[2, 2])
    mcts, root = uct_search(game, (starter, (2, 2)), games=2000, solver=False)
    assert root.visits == 2000 and sum(ch.visits for ch in root.children) == 2000
    for child in root.children:
        assert child.mover == starter
        assert child.q < 0.5  # the mover loses against good play
    # from the winning position (2, 1), the best child is a clear win for the mover
    mcts, root = uct_search(game, (starter, (2, 1)), games=2000, solver=False)
    best = max(root.children, key=lambda ch: ch.visits)
    assert best.mover == starter and best.q > 0.9


def test_kept_subtree_carries_its_statistics():
    game = mctsfw.make_game("hex", size=4)
    mcts, root = uct_search(game, game.initial_state(), games=800)
    action = mcts.best_action(root)
    child = root.child(action)
    visits, value = child.visits, child.value
    grandchild_visits = {ch.action: ch.visits for ch in child.children}
    mcts.advance(action)
    assert mcts.root is child
    new_root = mcts.search(game.next_state(game.initial_state(), action), search_games=100)
    assert new_root is child and new_root.visits == visits + 100
    assert new_root.value >= value
    for ch in new_root.children:
        assert ch.visits >= grandchild_visits.get(ch.action, 0)
    # the opponent's reply is found among the kept children too
    reply = mcts.best_action(new_root)
    kept = new_root.child(reply)
    again = mcts.search(game.next_state(new_root.state, reply), search_games=10)
    assert again is kept


def test_visit_distribution_and_budgets():
    game = mctsfw.make_game("hex", size=3)
    mcts, root = uct_search(game, game.initial_state(), games=300)
    d = mcts.visit_distribution(root)
    assert d.shape == (9,) and np.isclose(d.sum(), 1.0)
    assert np.argmax(d) == mcts.best_action(root)
    timed = MCTS(game, make_tree_policy("uct"), seed=1)
    timed.search(game.initial_state(), time_limit=0.05)
    assert timed.last_search_games > 10
    with pytest.raises(ValueError):
        timed.search(game.initial_state())


def test_actors_play_through_the_public_api():
    game = mctsfw.make_game("hex", size=4)
    agent = mctsfw.make_actor("mcts", game, search_games=200, c=1.0, seed=3)
    rand = mctsfw.make_actor("random", game, seed=3)
    from hexzero.mctsfw.match import play_match

    result = play_match(game, agent, rand, games=4)
    assert result.games == 4 and result.wins_a >= 3
    with pytest.raises(ValueError):
        mctsfw.make_actor("alphago", game)


class FirstCellNet:
    """A stand-in policy network that always prefers the lowest-numbered cell."""

    name = "first_cell"
    roles = ("policy",)
    input_kind = "flat"

    def __init__(self, num_actions):
        self.probs = np.linspace(1.0, 0.1, num_actions, dtype=np.float32)
        self.probs /= self.probs.sum()

    def forward(self, x):
        return np.tile(self.probs, (len(x), 1))


@pytest.mark.parametrize("name, params", [("hex", {"size": 5}), ("nim", {"piles": [3, 4, 5]})])
def test_batched_playouts_agree_with_single_playouts(name, params):
    import random

    from hexzero.mctsfw.evaluators import NetRolloutPolicy
    from hexzero.mctsfw.game import Game

    game = mctsfw.make_game(name, **params)
    policy = NetRolloutPolicy(game, FirstCellNet(game.num_actions), epsilon=0.0, seed=0)
    rng = random.Random(0)
    states = []
    for i in range(40):
        state = game.initial_state(1 + i % 2)
        for _ in range(rng.randrange(6)):
            state = game.next_state(state, rng.choice(game.legal_actions(state)))
        if not game.is_final(state):
            states.append(state)
    singles = [game.playout(state, rng, policy) for state in states]
    assert game.playout_batch(states, rng, policy) == singles
    assert Game.playout_batch(game, states, rng, policy) == singles  # the generic lock-step version
    if name == "hex":  # a random playout gives the mover a uniformly random half of the empty cells
        state = place(game, [(0, 0), (1, 1), (2, 0), (3, 3), (4, 2)], [(0, 4), (1, 0), (2, 2), (3, 1), (4, 4)], 1)
        empty = game.legal_actions(state)
        from itertools import combinations

        def p1_wins(cells):
            ones = state[1] | sum(1 << a for a in cells)
            return game._connects(ones, 1)

        share = (len(empty) + 1) // 2
        subsets = list(combinations(empty, share))
        exact = sum(p1_wins(cells) for cells in subsets) / len(subsets)
        draws = 20000
        observed = sum(game.playout(state, rng) == 1 for _ in range(draws)) / draws
        assert 0.1 < exact < 0.9 and abs(observed - exact) < 4 * (exact * (1 - exact) / draws) ** 0.5
        assert np.array_equal(game.encode_boards(game.boards(states), np.array([s[0] for s in states])),
                              np.stack([game.encode(s) for s in states]))


def test_batched_search_with_a_network_policy_still_finds_the_win():
    from hexzero.mctsfw.evaluators import NetRollouts

    game = mctsfw.make_game("hex", size=5)
    state = place(game, [(0, 2), (1, 2), (3, 2), (4, 2)], [(0, 0), (4, 4), (1, 4), (3, 0)], 1)
    rollouts = NetRollouts(game, FirstCellNet(25), epsilon=0.2, seed=1)
    mcts = MCTS(game, make_tree_policy("uct"), rollouts, seed=1)
    assert mcts.batch_size > 1
    root = mcts.search(state, search_games=500)
    # the game declares the winning move (a threat): the root is proven before any search game
    assert mcts.best_action(root) == 2 * 5 + 2 and root.result == 1.0 and root.depth == 1
    assert mcts.last_search_games == 0
    # without threats, the winning move is tried in the first batch: the root is proven and the search stops
    mcts = MCTS(game, make_tree_policy("uct"), NetRollouts(game, FirstCellNet(25), epsilon=0.2, seed=1), seed=1,
                threats=False)
    root = mcts.search(state, search_games=500)
    assert root.visits == sum(ch.visits for ch in root.children) == mcts.last_search_games == mcts.batch_size
    assert mcts.best_action(root) == 2 * 5 + 2 and root.result == 1.0 and root.depth == 1
    # without proofs either, the averages find it
    mcts = MCTS(game, make_tree_policy("uct"), NetRollouts(game, FirstCellNet(25), epsilon=0.2, seed=1), seed=1,
                threats=False, solver=False)
    root = mcts.search(state, search_games=500)
    assert root.visits == 500 and sum(ch.visits for ch in root.children) == 500
    assert mcts.best_action(root) == 2 * 5 + 2


def test_network_rollouts_gather_bigger_batches_in_bigger_searches():
    """32 leaves a call up to 2,048 search games, a 64th of the budget above, at most 128;
    a time-limited search (budget unknown) and a batch set by hand keep theirs."""
    from hexzero.mctsfw.evaluators import NetRollouts

    game = mctsfw.make_game("hex", size=5)
    sizes = []

    class Counted(NetRollouts):
        def evaluate(self, states, with_priors=False):
            sizes.append(len(states))
            return super().evaluate(states, with_priors)

    for games, batch, expected in ((500, None, 32), (4000, None, 62), (20000, None, 128), (4000, 16, 16)):
        sizes.clear()
        mcts = MCTS(game, make_tree_policy("uct"), Counted(game, FirstCellNet(25), epsilon=0.5, seed=1), seed=1,
                    batch_size=batch, threats=False, solver=False)
        mcts.search(game.initial_state(1), search_games=games)
        assert max(sizes) == expected and sum(sizes) <= games
    sizes.clear()
    mcts = MCTS(game, make_tree_policy("uct"), Counted(game, FirstCellNet(25), epsilon=0.5, seed=1), seed=1)
    mcts.search(game.initial_state(1), time_limit=0.3)
    assert max(sizes) == 32
