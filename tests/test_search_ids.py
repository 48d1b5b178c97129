"""Search addressed by history: a node's ID (the moves from the start) without storing it,
positions rebuilt from IDs, searches started from IDs and kept subtrees found by ID."""

import random

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw import MCTS, IllegalMoveError, make_tree_policy
from hexzero.mctsfw.search import Node
from tests.test_puct import UniformEvaluator

GAMES = {
    "hex": {"size": 4},
    "connect4": {},
    "nim": {"piles": [3, 4, 5]},
}


def uct(game, seed=0):
    return MCTS(game, make_tree_policy("uct", c=1.4), seed=seed)


def random_ids(game, count, rng, starting_player):
    """IDs of random positions (none final), of every length a game reaches."""
    ids = []
    while len(ids) < count:
        state, moves = game.initial_state(starting_player), []
        for _ in range(rng.randrange(12)):
            action = rng.choice(game.legal_actions(state))
            if game.is_final(game.next_state(state, action)):
                break
            moves.append(action)
            state = game.next_state(state, action)
        ids.append(tuple(moves))
    return ids


def deep_nodes(mcts, rng, count):
    """(node, path from the root, actions from the root) for random descents to the tree's leaves."""
    found = []
    for _ in range(count):
        node, path, actions = mcts.root, [mcts.root], []
        while node.children:
            node = rng.choice(node.children)
            path.append(node)
            actions.append(node.action)
        found.append((node, path, tuple(actions)))
    return found


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("starting_player", [1, 2])
def test_a_nodes_id_is_the_moves_that_lead_to_it_and_rebuilds_its_state(name, starting_player):
    game = mctsfw.make_game(name, **GAMES[name])
    rng = random.Random(starting_player)
    deepest = 0
    for root_id in random_ids(game, 3, rng, starting_player):
        mcts = uct(game, seed=len(root_id))
        root = mcts.search_from(list(root_id), starting_player, search_games=400)
        assert mcts.root is root and mcts.root_id == root_id and mcts.starting_player == starting_player
        assert mcts.id_of(root) == root_id
        for node, path, actions in deep_nodes(mcts, rng, 20):
            deepest = max(deepest, len(actions))
            assert mcts.actions_to(node) == mcts.actions_to(path) == actions
            assert mcts.id_of(node) == mcts.id_of(path) == root_id + actions
            assert mcts.state_of(node) == mcts.state_of(path) == node.state
            assert mcts.state_of(root_id + actions) == node.state
            assert game.state_after(root_id + actions, starting_player) == node.state
    assert deepest >= 3  # the trees were searched deep enough to test anything


def test_the_path_select_returns_names_its_leaf():
    game = mctsfw.make_game("hex", size=4)
    mcts = uct(game)
    root = mcts.search_from((5, 10), search_games=200)
    path = mcts.select(root)
    assert mcts.state_of(path) == path[-1].state and mcts.id_of(path)[:2] == (5, 10)
    with pytest.raises(ValueError, match="root"):
        mcts.actions_to(path[1:])
    stranger = Node(game, game.initial_state(), None, 2)
    with pytest.raises(ValueError, match="not in the search tree"):
        mcts.actions_to(stranger)


@pytest.mark.parametrize("tree_policy", ["uct", "puct"])
@pytest.mark.parametrize("name", GAMES)
def test_a_search_from_an_id_equals_the_search_from_its_state(name, tree_policy):
    game = mctsfw.make_game(name, **GAMES[name])
    moves = random_ids(game, 1, random.Random(7), 2)[0]
    state = game.state_after(moves, 2)

    def searcher():
        evaluator = UniformEvaluator(game) if tree_policy == "puct" else None
        return MCTS(game, make_tree_policy(tree_policy), evaluator, seed=11)

    by_state, by_id = searcher(), searcher()
    a = by_state.search(state, search_games=300)
    b = by_id.search_from(moves, 2, search_games=300)
    assert b.state == a.state and b.visits == a.visits == by_state.last_search_games <= 300
    assert b.proven == a.proven and (a.visits == 300 or a.proven is not None)  # a proven root stops the search
    assert np.array_equal(by_id.visit_distribution(b), by_state.visit_distribution(a))
    stats = [(ch.action, ch.visits, ch.value) for ch in a.children]
    assert [(ch.action, ch.visits, ch.value) for ch in b.children] == stats


def test_a_search_from_an_extended_id_reuses_the_kept_subtree():
    game = mctsfw.make_game("hex", size=4)
    mcts = uct(game)
    root = mcts.search_from((), search_games=2000)
    first = max(root.children, key=lambda ch: ch.visits)
    second = max(first.children, key=lambda ch: ch.visits)
    visits, value = second.visits, second.value
    moves = (first.action, second.action)
    again = mcts.search_from(list(moves), search_games=100)
    assert again is second and mcts.root_id == moves
    assert again.visits == visits + 100 and again.value >= value
    assert mcts.id_of(again) == moves
    # deeper still, in one step, through a kept node
    third = max(again.children, key=lambda ch: ch.visits)
    fourth = max(third.children, key=lambda ch: ch.visits)
    deeper = moves + (third.action, fourth.action)
    assert mcts.search_from(deeper, search_games=10) is fourth and mcts.root_id == deeper
    # an ID that does not extend the root's starts afresh, at the right position
    other = mcts.search_from((first.action,), search_games=10)
    assert other is not first and other.visits == 10 and other.state == game.state_after((first.action,))
    # another starting player names another game
    assert mcts.search_from((first.action,), starting_player=2, search_games=10).state == game.state_after(
        (first.action,), 2)


def test_advance_extends_the_roots_id():
    game = mctsfw.make_game("connect4")
    mcts = uct(game)
    root = mcts.search_from((3,), search_games=300)
    action = mcts.best_action(root)
    mcts.advance(action)
    assert mcts.root is root.child(action) and mcts.root_id == (3, action)
    # the opponent's reply, seen as a state by an actor, is found among the kept children: the ID follows
    reply = mcts.best_action(mcts.search(game.state_after((3, action)), search_games=300))
    kept = mcts.root.child(reply)
    assert mcts.search(game.state_after((3, action, reply)), search_games=10) is kept
    assert mcts.root_id == (3, action, reply)
    # a move the search never entered still moves the root, and its ID, on
    moves = (3, action, reply)
    few = uct(game)
    root = few.search_from(moves, search_games=3)  # 3 of the 7 columns entered
    unentered = next(a for a in game.legal_actions(root.state) if root.child(a) is None)
    few.advance(unentered)
    moves += (unentered,)
    assert few.root_id == moves and few.root.state == game.state_after(moves) and few.root.visits == 0
    assert few.search_from(moves, search_games=20) is few.root
    with pytest.raises(IllegalMoveError):  # NIM has no child here, so the action is checked
        nim = uct(mctsfw.make_game("nim", piles=[1]))
        nim.search_from((), search_games=5)
        nim.advance(5)


def test_an_id_reaches_a_position_kept_from_a_search_by_state():
    """A search started from a state has a root of unknown ID; a search from an ID then finds
    the kept position by state, and knows the ID from there on."""
    game = mctsfw.make_game("hex", size=4)
    mcts = uct(game)
    root = mcts.search(game.initial_state(), search_games=500)
    assert mcts.root_id is None
    with pytest.raises(ValueError, match="ID is unknown"):
        mcts.id_of(root.children[0])
    assert mcts.actions_to(root.children[0]) == (root.children[0].action,)
    child = max(root.children, key=lambda ch: ch.visits)
    visits = child.visits
    assert mcts.search_from([child.action], search_games=50) is child and child.visits == visits + 50
    assert mcts.root_id == (child.action,)
    # a search from a state the tree does not hold forgets the ID
    mcts.search(game.state_after((0, 1, 2)), search_games=10)
    assert mcts.root_id is None


@pytest.mark.parametrize("moves", [(5, 5), (99,), (-1,), (0, 1.5), ("a1",)])
def test_an_illegal_id_raises_and_keeps_the_tree(moves):
    game = mctsfw.make_game("hex", size=4)
    mcts = uct(game)
    root = mcts.search_from((3,), search_games=50)
    with pytest.raises(IllegalMoveError):
        mcts.search_from(moves, search_games=10)
    with pytest.raises(IllegalMoveError):
        mcts.state_of(moves)
    assert mcts.root is root and mcts.root_id == (3,) and root.visits == 50


def test_an_id_past_the_end_of_the_game_raises():
    game = mctsfw.make_game("nim", piles=[2])
    mcts = uct(game)
    with pytest.raises(IllegalMoveError, match="over"):
        mcts.search_from((1, 0), search_games=10)  # take 2, then take 1 from nothing
    with pytest.raises(ValueError, match="over"):
        mcts.search_from((1,), search_games=10)  # a finished game: nothing to search
    with pytest.raises(ValueError, match="search_games"):
        mcts.search_from((0,), search_games=-1)


def test_nothing_is_stored_per_node():
    assert Node.__slots__ == ("state", "action", "mover", "player", "winner", "prior", "visits", "value", "children",
                              "untried", "priors", "proven", "depth", "stats")
    game = mctsfw.make_game("hex", size=3)
    mcts = uct(game)
    root = mcts.search_from((4,), search_games=50)
    assert not hasattr(root, "__dict__") and not hasattr(root.children[0], "__dict__")
