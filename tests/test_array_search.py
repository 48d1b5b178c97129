"""The search on compiled arrays (``mctsfw.search``): each game's kernels are its rules,
the array search visits as the object search does where nothing is drawn at random, and
searches alike where something is; where it cannot run, players keep the object search."""

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw import make_tree_policy
from hexzero.mctsfw.checkpoints import load_net
from hexzero.mctsfw.evaluators import RandomRollouts, value_evaluator
from hexzero.mctsfw.search import MCTS
from hexzero.mctsfw.search import arrays
from hexzero.mctsfw.search.arrays import ArrayTree
from hexzero.mctsfw.search.array_search import ArrayMCTS, array_problem, make_search

HEX7 = "models/hex7/pv_mlp_gen0300.keras"
HEX9 = "models/hex9/pv_resnet_gen0004.keras"  # convolutional heads: any board size


def random_positions(game, count, seed, longest=None):
    """Positions along random games (either player opening), none final."""
    rng = np.random.default_rng(seed)
    longest = longest or game.num_actions
    found = []
    while len(found) < count:
        state = game.initial_state(int(rng.integers(1, 3)))
        for _ in range(int(rng.integers(0, longest))):
            state = game.next_state(state, int(rng.choice(game.legal_actions(state))))
            if game.is_final(state):
                break
        if not game.is_final(state):
            found.append(state)
    return found


#: the games with kernels, on several boards
KERNEL_GAMES = [("hex", {"size": 3}), ("hex", {"size": 5}), ("hex", {"size": 8}), ("hex", {"size": 11}),
                ("connect4", {}), ("connect4", {"rows": 4, "columns": 5}), ("connect4", {"rows": 7, "columns": 9}),
                ("nim", {}), ("nim", {"piles": [7, 1, 12], "max_take": 3}), ("nim", {"piles": [5, 5], "misere": True}),
                ("go", {"size": 5, "history": 2}), ("go", {"size": 9, "max_moves": 60}),
                ("go", {"size": 7, "komi": 0.0, "history": 4}),
                ("gomoku", {"size": 9}), ("gomoku", {"size": 7, "connect": 4, "history": 3}),
                ("gomoku", {"size": 8, "exactly_five": True, "history": 1})]


# ---- the kernels are the rules -------------------------------------------------------------------
@pytest.mark.parametrize("name, params", KERNEL_GAMES)
def test_kernels_play_the_games_rules_move_for_move(name, params):
    """Along random games: every position the kernels work out (from the parent's and the
    move) is the game's, its player to move and its result; the masks are the legal moves;
    the encodings are ``encode`` and ``encode_planes`` row for row."""
    game = mctsfw.make_game(name, **params)
    kernels = game.kernels()
    rng = np.random.default_rng(len(str(params)))
    for _ in range(20):
        tree = ArrayTree(1, kernels.state_len, kernels.aux_len)
        state = game.initial_state(int(rng.integers(1, 3)))
        kernels.set_root(tree, 0, state)
        node = 0
        while not game.is_final(state):
            leaves, judged = np.array([[node]], np.int32), np.ones((1, 1), np.bool_)
            assert kernels.state(tree, 0, node) == state
            for kind, encode in (("flat", game.encode), ("planes", game.encode_planes)):
                if kind in kernels.encodings:
                    assert np.array_equal(kernels.encode(tree, leaves, judged, kind)[0], encode(state))
            assert np.array_equal(kernels.legal(tree, leaves, judged)[0], game.legal_mask(state))
            masks = np.zeros((1, 1, game.num_actions), np.bool_)
            kernels.moves(tree, leaves, judged, masks, *(np.zeros((1, 1), t) for t in (np.int8, np.int32, np.int32)),
                          False)  # the round's moves, without threats: what legal_after_moves may read
            assert np.array_equal(kernels.legal_after_moves(tree, leaves, judged, masks)[0], game.legal_mask(state))
            action = int(rng.choice(game.legal_actions(state)))
            mover = game.current_player(state)
            state = game.next_state(state, action)
            child = int(tree.size[0])  # a child as a descent makes it: its parent and its move
            tree.reserve(1, 0, 1)
            tree.size[0] += 1
            tree.parent[0, child], tree.action[0, child] = node, action
            kernels.positions(tree, np.array([[child]], np.int32), np.ones(1, np.int32))
            node = child
            final = game.is_final(state)
            assert tree.player[0, node] == (0 if final else game.current_player(state))
            winner = game.winner(state)
            result = arrays.UNKNOWN if not final else arrays.DRAW if winner is None else \
                arrays.WIN if winner == mover else arrays.LOSS  # for the mover
            assert tree.proven[0, node] == result
        assert kernels.state(tree, 0, node) == state


@pytest.mark.parametrize("name, params", [("hex", {"size": 4, "pairing": True}), ("hex", {"size": 6, "pairing": True}),
                                          ("hex", {"size": 9, "pairing": True}), ("hex", {"size": 9}),
                                          ("hex", {"size": 6, "vc": True}), ("hex", {"size": 9, "pairing": True, "vc": True}),
                                          ("hex", {"size": 6, "prune": True}), ("hex", {"size": 7, "vc": True, "prune": True}),
                                          ("connect4", {}), ("connect4", {"rows": 5, "columns": 4}),
                                          ("gomoku", {"size": 9}), ("gomoku", {"size": 15}),
                                          ("gomoku", {"size": 9, "exactly_five": True})])
def test_kernels_force_the_moves_the_object_search_forces(name, params):
    """Where the player to move wins at once (or, in Gomoku, by continuous fours, in Hex by
    a pairing connection or H-search's), where every stop of the opponent's win leaves another, and
    otherwise which stops (or answers to a three, or cells of the opponent's pairing
    connections) are searched: as ``MCTS.forced_for`` finds them, the proofs as deep."""
    game = mctsfw.make_game(name, **params)
    kernels = game.kernels()
    search = MCTS(game, make_tree_policy("uct"), RandomRollouts(game, seed=0))
    kinds = set()
    for state in random_positions(game, 150, seed=len(str(params)), longest=game.num_actions * 4):
        tree = ArrayTree(1, kernels.state_len, kernels.aux_len)
        kernels.set_root(tree, 0, state)
        leaves, judged = np.zeros((1, 1), np.int32), np.ones((1, 1), np.bool_)
        masks = np.zeros((1, 1, game.num_actions), np.bool_)
        forced, move = np.zeros((1, 1), np.int8), np.zeros((1, 1), np.int32)
        plies = np.zeros((1, 1), np.int32)
        kernels.moves(tree, leaves, judged, masks, forced, move, plies, True)
        root = search._fresh_root(state)
        stops = search.forced_for(root)
        if root.proven is not None:
            expected = arrays.WINS_NOW if root.proven == 0.0 else arrays.LOST_IN_2
            assert forced[0, 0] == expected and move[0, 0] == root.children[0].action
            assert (plies[0, 0] or (1 if expected == arrays.WINS_NOW else 2)) == root.depth
        else:
            assert forced[0, 0] == arrays.SEARCH
            legal = stops if stops is not None else game.legal_actions(state)
            assert sorted(np.flatnonzero(masks[0, 0])) == sorted(legal)
        kinds.add((int(forced[0, 0]), stops is not None, int(plies[0, 0]) > 2))
    assert {(arrays.WINS_NOW, False, False), (arrays.SEARCH, True, False), (arrays.SEARCH, False, False)} <= kinds
    if name == "gomoku" and not params.get("exactly_five") or name == "hex" and params["size"] > 4:
        # a victory by continuous fours, a pairing connection (none where the pairing proofs are off)
        assert ((arrays.WINS_NOW, False, True) in kinds) == (name == "gomoku" or params.get("pairing", False)
                                                             or params.get("vc", False))


@pytest.mark.parametrize("name, params", [("hex", {"size": 5}), ("connect4", {}), ("nim", {"piles": [4, 6, 9]}),
                                          ("go", {"size": 5}), ("go", {"size": 9}), ("gomoku", {"size": 9}),
                                          ("gomoku", {"size": 7, "connect": 4, "exactly_five": True}),
                                          ("nim", {"piles": [3, 8], "max_take": 2, "misere": True})])
def test_playouts_win_as_often_as_the_games_own(name, params):
    """A random playout from a position: the kernels' results (a win 1, a draw a half)
    average what ``Game.playout`` gives."""
    import random

    game = mctsfw.make_game(name, **params)
    kernels = game.kernels()
    rng = random.Random(0)
    for state in random_positions(game, 6, seed=3, longest=8):
        tree = ArrayTree(1, kernels.state_len, kernels.aux_len)
        kernels.set_root(tree, 0, state)
        n = 4000
        leaves, judged = np.zeros((1, n), np.int32), np.ones((1, n), np.bool_)
        ours = kernels.playouts(tree, leaves, judged, np.array([12345], np.uint64)).mean()
        player = game.current_player(state)
        results = [game.playout(state, rng) for _ in range(n)]
        theirs = np.mean([0.5 if w is None else float(w == player) for w in results])
        assert abs(ours - theirs) < 0.04, (ours, theirs)


# ---- the same search ---------------------------------------------------------------------------
@pytest.mark.parametrize("model, name, params", [
    (HEX7, "hex", {"size": 7}), (HEX9, "hex", {"size": 5}), (HEX9, "hex", {"size": 9}),
    ("models/connect4/pv_mlp_gen0617.keras", "connect4", {}),
    ("models/connect4-student/pv_resnet_ep0005.keras", "connect4", {}),
    ("models/go9/pv_resnet_gen0010.keras", "go", {"size": 9}),
    ("models/go13/pv_resnet_gnugo_ep0009.keras", "go", {"size": 13, "max_moves": 400, "history": 4}),
    ("models/gomoku9/pv_mlp_gen0051.keras", "gomoku", {"size": 9}),
    ("models/gomoku15/pv_resnet_rapfi_ep0002.keras", "gomoku", {"size": 15, "history": 2}),
])
def test_puct_with_a_network_visits_exactly_as_the_object_search(model, name, params):
    """A network's priors and values, nothing drawn at random: the same visit counts and
    the same move, budget after budget, from positions of random games, the tree kept from
    move to move (every first-play value)."""
    visits_exactly_as_the_object_search("puct", model, name, params)


@pytest.mark.parametrize("model, name, params", [
    (HEX7, "hex", {"size": 7}), (HEX9, "hex", {"size": 5}),
    ("models/connect4/pv_mlp_gen0617.keras", "connect4", {}),
    ("models/go9/pv_resnet_gen0010.keras", "go", {"size": 9}),
    ("models/gomoku9/pv_mlp_gen0051.keras", "gomoku", {"size": 9}),
])
def test_gumbel_with_a_network_visits_exactly_as_the_object_search(model, name, params):
    """Gumbel without noise (a player's search) on the array tree: the halving at the
    root and the improved policy below it give the same targets and the same move."""
    visits_exactly_as_the_object_search("gumbel", model, name, params)


@pytest.mark.parametrize("model, name, params", [
    (HEX7, "hex", {"size": 7}), ("models/go9/pv_resnet_gen0010.keras", "go", {"size": 9}),
])
def test_gumbel_self_play_search_draws_and_plays_as_the_object_search(model, name, params):
    """Self-play's Gumbel search (root noise: each move's Gumbel draw): the same seed draws
    the same noise on both trees, and the compiled root (its plan, its move and its
    improved-policy target) gives the same targets and moves along whole openings."""
    game = mctsfw.make_game(name, **params)
    net = load_net(model, game)
    for seed in range(2):
        objects = MCTS(game, make_tree_policy("gumbel"), value_evaluator(game, net), seed=seed, root_noise=True)
        ours = ArrayMCTS(game, make_tree_policy("gumbel"), value_evaluator(game, net), seed=seed, root_noise=True)
        state = game.initial_state()
        for _ in range(10):
            root = objects.search(state, 40)
            ours.search(state, 40)
            assert np.array_equal(objects.targets(root), ours.targets())
            action = objects.best_action(root)
            assert ours.best_action() == action
            objects.advance(action)
            ours.advance(action)
            state = game.next_state(state, action)


def visits_exactly_as_the_object_search(policy, model, name, params):
    game = mctsfw.make_game(name, **params)
    net = load_net(model, game)
    rng = np.random.default_rng(game.num_actions)
    for i, state in enumerate(random_positions(game, 3, seed=game.num_actions, longest=game.num_actions - 4
                                               if name == "hex" else 40 if name == "gomoku" else 30)):
        params = {"first_play": ("parent", "reduction", "loss", "win")[i % 4]} if policy == "puct" else {}
        objects = MCTS(game, make_tree_policy(policy, **params), value_evaluator(game, net), seed=1)
        ours = ArrayMCTS(game, make_tree_policy(policy, **params), value_evaluator(game, net), seed=1)
        for _ in range(4):
            budget = int(rng.integers(1, 160))
            root = objects.search(state, budget)
            ours.search(state, budget)
            assert np.array_equal(objects.targets(root), ours.targets())
            action = objects.best_action(root)
            assert ours.best_action() == action
            assert ours.progress(0, 0).win_estimate == pytest.approx(objects.progress(0, 0).win_estimate)
            objects.advance(action)
            ours.advance(action)
            state = game.next_state(state, action)
            if game.is_final(state):
                break
            state = game.next_state(state, int(rng.choice(game.legal_actions(state))))
            if game.is_final(state):
                break


@pytest.mark.parametrize("policy, params", [("uct", {"c": 1.4}), ("puct", {})])
def test_random_playouts_judge_positions_as_on_the_object_search(policy, params):
    """Random playouts draw other numbers: what either proves is what a perfect solver
    says, and where neither proves they value the root alike (PUCT without a network:
    uniform priors on both)."""
    from hexzero.games.hex_solver import HexSolver

    game = mctsfw.make_game("hex", size=4)
    solver = HexSolver(game)
    for state in random_positions(game, 8, seed=5, longest=6):
        objects = MCTS(game, make_tree_policy(policy, **params), RandomRollouts(game, seed=2), seed=2)
        ours = ArrayMCTS(game, make_tree_policy(policy, **params), RandomRollouts(game, seed=2), seed=2)
        objects.search(state, 3000)
        ours.search(state, 3000)
        theirs, mine = objects.progress(0, 0), ours.progress(0, 0)
        truth = 1.0 if solver.wins(state) else 0.0
        for progress in (theirs, mine):
            assert progress.proven in (None, truth)
        if theirs.proven is None and mine.proven is None:
            assert abs(theirs.win_estimate - mine.win_estimate) < 0.08, (theirs.win_estimate, mine.win_estimate)
        if mine.proven == 1.0:  # a proven win is played
            assert not solver.wins(game.next_state(state, ours.best_action()))


# ---- where it runs -----------------------------------------------------------------------------
def test_players_search_on_arrays_where_the_game_has_kernels_and_objects_elsewhere():
    hex5 = mctsfw.make_game("hex", size=5)
    assert type(mctsfw.make_actor("mcts", hex5, search_games=10).mcts) is ArrayMCTS
    assert type(mctsfw.make_actor("mcts", hex5, search_games=10, engine="objects").mcts) is MCTS
    assert type(mctsfw.make_actor("mcts", hex5, search_games=10, tree_policy="rave").mcts) is MCTS
    assert type(mctsfw.make_actor("mcts", hex5, search_games=10, playouts="tactical").mcts) is MCTS
    assert type(mctsfw.make_actor(HEX7, mctsfw.make_game("hex", size=7), search_games=10).mcts) is ArrayMCTS
    nim = mctsfw.make_game("nim")
    assert type(mctsfw.make_actor("mcts", nim, search_games=10).mcts) is ArrayMCTS
    go = mctsfw.make_game("go", size=9)
    assert type(mctsfw.make_actor("mcts", go, search_games=10).mcts) is ArrayMCTS
    gomoku = mctsfw.make_game("gomoku", size=9)
    assert type(mctsfw.make_actor("mcts", gomoku, search_games=10).mcts) is ArrayMCTS
    assert array_problem(gomoku, make_tree_policy("rave"), RandomRollouts(gomoku)) is not None
    assert type(make_search(hex5, make_tree_policy("gumbel"), value_evaluator(hex5, load_net(HEX9, hex5)))) is ArrayMCTS
    with pytest.raises(ValueError, match="array search cannot run this search: Gumbel without a network's priors"):
        make_search(hex5, make_tree_policy("gumbel"), RandomRollouts(hex5), engine="arrays")
    with pytest.raises(ValueError, match="array search cannot run this search: the rave tree policy"):
        make_search(hex5, make_tree_policy("rave"), RandomRollouts(hex5), engine="arrays")


def test_a_game_without_kernels_plays_on_the_object_search_as_before():
    """The tictactoe example plugin (a user's Python game) offers no kernels: its players
    search on the object tree, unchanged."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "examples" / "tictactoe_plugin" / "tictactoe.py"
    if not path.exists():
        path = next((Path(__file__).resolve().parent.parent / "examples").rglob("tictactoe*.py"))
    spec = importlib.util.spec_from_file_location("tictactoe_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    game = next(v for v in vars(module).values() if isinstance(v, type) and issubclass(v, mctsfw.Game)
                and v is not mctsfw.Game)()
    actor = mctsfw.make_actor("mcts", game, search_games=200, seed=1)
    assert type(actor.mcts) is MCTS
    assert actor.select_action(game.initial_state()) in game.legal_actions(game.initial_state())


@pytest.mark.parametrize("policy", ["puct", "gumbel"])
def test_self_play_searches_with_root_noise_and_in_lock_step_as_the_object_search(policy):
    """Self-play's searches: PUCT with Dirichlet noise at every root, Gumbel with its
    Gumbel noise (drawn from the search's seed as the object search draws it), and a group
    of games in lock-step sharing one array tree visit exactly as the object search's,
    game for game, move for move, and Gumbel plays the same move."""
    from hexzero.mctsfw.search import search_together
    from hexzero.mctsfw.search.array_search import share_tree
    from hexzero.nets.twohead import PolicyValueMLP

    game = mctsfw.make_game("hex", size=4)
    net = PolicyValueMLP(game, hidden_layers=[16], seed=1)

    def searches(kind):
        made = [kind(game, make_tree_policy(policy), value_evaluator(game, net), seed=seed, batch_size=8,
                     root_noise=True) for seed in range(4)]
        if kind is ArrayMCTS:
            share_tree(made)
        return made

    objects, ours = searches(MCTS), searches(ArrayMCTS)
    states = [game.initial_state(1 + seed % 2) for seed in range(4)]
    rng = np.random.default_rng(0)
    for _ in range(game.num_actions):
        playing = [i for i, s in enumerate(states) if not game.is_final(s)]
        if not playing:
            break
        budgets = [int(rng.integers(4, 40)) for _ in playing]
        roots = search_together([(objects[i], states[i]) for i in playing], budgets)
        search_together([(ours[i], states[i]) for i in playing], budgets)
        for i, root in zip(playing, roots):
            assert np.array_equal(objects[i].targets(root), ours[i].targets())
            assert ours[i].root_value() == pytest.approx(objects[i].root_value())
            assert ours[i].best_action() == objects[i].best_action(root)
            action = int(rng.choice(np.flatnonzero(objects[i].targets(root)))) if objects[i].targets(root).any() \
                else objects[i].best_action(root)
            objects[i].advance(action)
            ours[i].advance(action)
            states[i] = game.next_state(states[i], action)


def test_go_kernels_refuse_repeated_boards_and_pass_as_the_game_does():
    """Along random 5x5 games, descended as a search descends (a child a move): each
    position's legal moves, the moves a search considers (``Go.search_actions``: pass only
    after a pass or when every point left fills an own eye) and the history planes are
    the game's, where boards that stood before (in the tree and before its root) are
    refused, as they come up often on a small board."""
    game = mctsfw.make_game("go", size=5, history=3)
    kernels = game.kernels()
    rng = np.random.default_rng(7)
    repeats = passes_searched = 0
    for _ in range(40):
        state = game.initial_state()
        for _ in range(int(rng.integers(0, 12))):  # the tree's root some way into the game
            state = game.next_state(state, int(rng.choice(game.legal_actions(state))))
        if game.is_final(state):
            continue
        tree = ArrayTree(1, kernels.state_len, kernels.aux_len)
        kernels.set_root(tree, 0, state)
        node = 0
        while not game.is_final(state):
            leaves, judged = np.array([[node]], np.int32), np.ones((1, 1), np.bool_)
            masks = np.zeros((1, 1, game.num_actions), np.bool_)
            kernels.moves(tree, leaves, judged, masks, np.zeros((1, 1), np.int8), np.zeros((1, 1), np.int32),
                          np.zeros((1, 1), np.int32), False)
            assert sorted(np.flatnonzero(masks[0, 0])) == sorted(game.search_actions(state))
            passes_searched += bool(masks[0, 0, game.pass_action])
            assert np.array_equal(kernels.legal(tree, leaves, judged)[0], game.legal_mask(state))
            assert np.array_equal(kernels.encode(tree, leaves, judged, "planes")[0], game.encode_planes(state))
            repeats += sum("repeat" in str(game._play(state, a)) for a in range(game.pass_action))
            stones = game.legal_actions(state)[:-1]
            action = int(rng.choice(stones)) if stones and rng.random() > 0.05 else game.pass_action
            state = game.next_state(state, action)
            child = int(tree.size[0])
            tree.reserve(1, 0, 1)
            tree.size[0] += 1
            tree.parent[0, child], tree.action[0, child] = node, action
            kernels.positions(tree, np.array([[child]], np.int32), np.ones(1, np.int32))
            node = child
    assert repeats >= 10 and passes_searched >= 20, (repeats, passes_searched)


def test_go_roots_keep_the_boards_that_stood_move_after_move():
    """A tree re-rooted at each move of one game after another (as self-play keeps its
    subtree) holds exactly the boards that stood before each root, and their filter, though
    it adds only the new ones between captures, and refuses their repetition at the root
    as the game does."""
    from hexzero.games.go_kernels import root_filter

    game = mctsfw.make_game("go", size=5)
    kernels = game.kernels()
    rng = np.random.default_rng(11)
    tree = ArrayTree(1, kernels.state_len, kernels.aux_len)
    added = rebuilt = 0
    for _ in range(12):
        state = game.initial_state()
        while not game.is_final(state):
            before = getattr(tree, "go_known", None) and tree.go_known[0]
            kernels.set_root(tree, 0, state)
            _, _, _, _, _, _, seen, recent, _ = state
            known = tree.go_hashes[0, :tree.go_nhashes[0]]
            assert np.array_equal(known, np.sort(np.array([*seen, *recent], np.uint64)))
            marked = np.zeros_like(tree.go_filter[0])  # (what the leaves' lookups skip by)
            root_filter(known.copy(), len(known), marked)
            assert np.array_equal(tree.go_filter[0], marked)
            added += bool(before) and before[0] is seen
            rebuilt += not (before and before[0] is seen)
            masks = np.zeros((1, 1, game.num_actions), np.bool_)
            kernels.moves(tree, np.zeros((1, 1), np.int32), np.ones((1, 1), np.bool_), masks,
                          np.zeros((1, 1), np.int8), np.zeros((1, 1), np.int32), np.zeros((1, 1), np.int32), False)
            assert sorted(np.flatnonzero(masks[0, 0])) == sorted(game.search_actions(state))
            stones = game.legal_actions(state)[:-1]
            state = game.next_state(state, int(rng.choice(stones)) if stones and rng.random() > 0.05
                                    else game.pass_action)
    assert added >= 100 and rebuilt >= 20, (added, rebuilt)


def test_a_round_of_forced_leaves_stays_inside_the_tree(monkeypatch):
    """Each leaf of a round may take two nodes: its own when selected, and the winning
    child a forcing move proves (a round once wrote past the end of a full tree). A tree
    grown only as far as each round asks, searching Hex where most leaves have a winning
    cell, never holds more nodes than it has room for."""
    monkeypatch.setattr(ArrayTree, "growth", 1)  # grown to what a round asks, no more
    monkeypatch.setattr(ArrayTree.__init__, "__defaults__", (2, 16384, None))
    game = mctsfw.make_game("hex", size=4)
    state = game.initial_state()
    for action in (5, 6, 9, 10):  # the centre: a win a move away almost everywhere
        state = game.next_state(state, action)
    for seed in range(20):
        search = ArrayMCTS(game, make_tree_policy("uct", c=1.4), RandomRollouts(game), seed=seed)
        search.search(state, search_games=300)
        assert search.tree.size.max() <= search.tree.capacity
