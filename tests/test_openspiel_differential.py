"""Differential tests against OpenSpiel's Hex and NIM, move for move (optional dependency).

Install with ``pip install -e .[differential]``; skipped when ``pyspiel`` is missing.
OpenSpiel's Hex uses the same cell numbering and neighbours; its player 0 ("x") joins
top and bottom like our player 1 and always starts.
"""

import random

import numpy as np
import pytest

from hexzero import mctsfw

pytestmark = pytest.mark.openspiel  # the second step of CI runs them, with the extra installed
pyspiel = pytest.importorskip("pyspiel")


@pytest.mark.parametrize("n", range(3, 9))
def test_hex_agrees_with_openspiel(n):
    ours = mctsfw.make_game("hex", size=n)
    theirs = pyspiel.load_game("hex", {"board_size": n})
    rng = random.Random(n)
    for _ in range(40):
        state, spiel = ours.initial_state(1), theirs.new_initial_state()
        while True:
            assert ours.is_final(state) == spiel.is_terminal()
            if spiel.is_terminal():
                winner = 1 if spiel.returns()[0] > 0 else 2
                assert ours.winner(state) == winner
                break
            assert ours.current_player(state) == spiel.current_player() + 1
            assert sorted(ours.legal_actions(state)) == sorted(spiel.legal_actions())
            action = rng.choice(ours.legal_actions(state))
            state = ours.next_state(state, action)
            spiel.apply_action(action)


@pytest.mark.parametrize("misere", [False, True])
@pytest.mark.parametrize("piles", [[1, 2, 3], [3, 4, 5], [7], [2, 2, 6, 1]])
def test_nim_agrees_with_openspiel(piles, misere):
    ours = mctsfw.make_game("nim", piles=piles, misere=misere)
    theirs = pyspiel.load_game("nim", {"pile_sizes": ";".join(map(str, piles)), "is_misere": misere})
    rng = random.Random(sum(piles))

    def spiel_moves(spiel):
        moves = {}
        for a in spiel.legal_actions():
            text = spiel.action_to_string(a)  # "pile:P, take:T;"
            pile = int(text.split("pile:")[1].split(",")[0]) - 1
            take = int(text.split("take:")[1].rstrip(";"))
            moves[(pile, take)] = a
        return moves

    for _ in range(30):
        state, spiel = ours.initial_state(1), theirs.new_initial_state()
        while True:
            assert ours.is_final(state) == spiel.is_terminal()
            if spiel.is_terminal():
                assert ours.winner(state) == (1 if spiel.returns()[0] > 0 else 2)
                break
            moves = spiel_moves(spiel)
            ours_moves = {divmod(a, ours.cap) for a in ours.legal_actions(state)}
            assert {(p, t - 1) for p, t in moves} == ours_moves
            pile, take = rng.choice(sorted(moves))
            state = ours.next_state(state, ours.action(pile, take))
            spiel.apply_action(moves[(pile, take)])


@pytest.mark.parametrize("rows, columns", [(6, 7), (4, 4), (5, 4), (4, 6), (7, 9)])
def test_connect4_agrees_with_openspiel(rows, columns):
    """OpenSpiel's ``connect_four``: action = column, its player 0 ("x") starts like our
    player 1; its board prints top row first with x, o and '.'."""
    ours = mctsfw.make_game("connect4", rows=rows, columns=columns)
    theirs = pyspiel.load_game("connect_four", {"rows": rows, "columns": columns})
    rng = random.Random(rows * 100 + columns)
    draws = 0
    for _ in range(60):
        state, spiel = ours.initial_state(1), theirs.new_initial_state()
        while True:
            assert ours.is_final(state) == spiel.is_terminal()
            picture = ["".join(".xo"[v] for v in row) for row in ours.board(state)[::-1]]
            assert str(spiel).split() == picture
            if spiel.is_terminal():
                returns = spiel.returns()
                expected = None if returns[0] == 0 else 1 if returns[0] > 0 else 2
                assert ours.winner(state) == expected
                draws += expected is None
                break
            assert ours.current_player(state) == spiel.current_player() + 1
            assert ours.legal_actions(state) == sorted(spiel.legal_actions())
            action = rng.choice(ours.legal_actions(state))
            state = ours.next_state(state, action)
            spiel.apply_action(action)
    if (rows, columns) == (4, 4):
        assert draws  # small boards fill up often: draws are compared too


def test_connect4_full_board_draw_agrees_with_openspiel():
    ours = mctsfw.make_game("connect4")
    spiel = pyspiel.load_game("connect_four").new_initial_state()
    state = ours.initial_state(1)
    order = [c for a, b in ((0, 2), (1, 3), (4, 6)) for c in [a, b, b, a] * 3] + [5] * 6
    for action in order:
        assert not ours.is_final(state) and not spiel.is_terminal()
        state = ours.next_state(state, action)
        spiel.apply_action(action)
    assert ours.is_final(state) and spiel.is_terminal()
    assert ours.winner(state) is None and spiel.returns() == [0.0, 0.0]


@pytest.mark.parametrize("size, games", [(9, 60), (15, 20), (5, 60)])
def test_gomoku_agrees_with_openspiel(size, games):
    """OpenSpiel's ``gomoku`` (freestyle: five or more wins): action = row*size + col with
    row 0 at the top, its player 0 (black, "b") opens like our player 1; its board prints
    the player to move (B/W) then the rows, top row first, with b, w and '.'. Random games
    move for move: the board, the player to move, the legal actions, the end and the returns.
    On 5x5 many games fill the board: draws are compared too."""
    ours = mctsfw.make_game("gomoku", size=size)
    theirs = pyspiel.load_game("gomoku", {"size": size})
    rng = random.Random(size)
    outcomes = set()
    for _ in range(games):
        state, spiel = ours.initial_state(1), theirs.new_initial_state()
        while True:
            assert ours.is_final(state) == spiel.is_terminal()
            picture = ["".join(".bw"[v] for v in row) for row in ours.board(state)]
            assert str(spiel).split()[1:] == picture
            if spiel.is_terminal():
                returns = spiel.returns()
                expected = None if returns[0] == 0 else 1 if returns[0] > 0 else 2
                assert ours.winner(state) == expected
                assert ours.legal_actions(state) == []
                outcomes.add(expected)
                break
            assert ours.current_player(state) == spiel.current_player() + 1
            assert ours.legal_actions(state) == spiel.legal_actions()
            action = rng.choice(ours.legal_actions(state))
            assert ours.action_to_text(action) == "abcdefghijklmnopqrs"[action % size] + str(action // size + 1)
            assert spiel.action_to_string(spiel.current_player(), action) == f"{action // size},{action % size}"
            state = ours.next_state(state, action)
            spiel.apply_action(action)
    assert {1, 2} <= outcomes
    if size == 5:
        assert None in outcomes


def go_move(rng, legal, pass_action, pass_share):
    """A random move that passes with probability ``pass_share`` when anything else is
    legal: rarely, so that games run long with many captures to the cut-off, or often,
    so that games end by two passes."""
    points = [a for a in legal if a != pass_action]
    return rng.choice(points) if points and rng.random() >= pass_share else pass_action


@pytest.mark.parametrize("size, komi, games", [(9, 7.5, 40), (5, 7.5, 60), (7, 0.5, 30), (13, 7.5, 6), (19, 7.5, 4)])
def test_go_agrees_with_openspiel(size, komi, games):
    """OpenSpiel's ``go``: action = row*size + col with row 0 at the bottom (its "B a1" is
    action 0, letters skip i), pass = size*size, its player 0 is black like our player 1;
    its observation tensor holds black's stones, white's, the empty points (action order)
    and the colour to move; it ends a game after two passes or at ``max_game_length``
    moves (2*size*size, passes counted, as our cut-off). Random games move for move: the
    board, the player to move, the legal actions, the end and the winner by area score.

    Superko: OpenSpiel allows a move that repeats an earlier whole-board position and then
    ends the game as a draw; ours forbids the move. Where the legal moves differ, the
    moves only OpenSpiel allows must all be such repetitions (our reason says so), and
    that game is left there (counted; rare)."""
    ours = mctsfw.make_game("go", size=size, komi=komi)
    theirs = pyspiel.load_game("go", {"board_size": size, "komi": komi})
    assert theirs.num_distinct_actions() == ours.num_actions and theirs.max_game_length() == ours.max_moves
    n2 = size * size
    rng = random.Random(size)
    outcomes, superko, cut_off = set(), 0, 0
    for k in range(games):
        pass_share = 0.25 if k % 3 == 2 else 0.02
        state, spiel = ours.initial_state(), theirs.new_initial_state()
        while True:
            assert ours.is_final(state) == spiel.is_terminal()
            planes = np.array(spiel.observation_tensor(0)).reshape(-1, n2)
            assert np.array_equal(planes[0] + 2 * planes[1], ours.board(state).reshape(-1))
            if spiel.is_terminal():
                returns = spiel.returns()
                assert returns[0] != 0  # komi x.5: no draws but superko's, which we skip
                assert ours.winner(state) == (1 if returns[0] > 0 else 2)
                assert ours.legal_actions(state) == []
                outcomes.add(ours.winner(state))
                cut_off += len(state[4]) == ours.max_moves
                break
            assert ours.current_player(state) == spiel.current_player() + 1
            legal, spiel_legal = ours.legal_actions(state), spiel.legal_actions()
            if legal != spiel_legal:
                extra = set(spiel_legal) - set(legal)
                assert extra and set(legal) < set(spiel_legal)
                for action in extra:
                    with pytest.raises(mctsfw.IllegalMoveError, match="positional superko"):
                        ours.next_state(state, action)
                superko += 1
                break
            action = go_move(rng, legal, ours.pass_action, pass_share)
            expected = "PASS" if action == n2 else "abcdefghjklmnopqrst"[action % size] + str(action // size + 1)
            assert spiel.action_to_string(spiel.current_player(), action) == ("B " if spiel.current_player() == 0
                                                                            else "W ") + expected
            assert ours.action_to_text(action).lower() == expected.lower()
            state = ours.next_state(state, action)
            spiel.apply_action(action)
    print(f"go {size}x{size}: {games - superko} games compared to the end ({cut_off} at the cut-off), "
          f"{superko} left at a superko repetition")
    assert superko <= games // 2
    if games >= 30:
        assert outcomes == {1, 2} and 0 < cut_off < games - superko


@pytest.mark.parametrize("name, params, spiel_name, spiel_params, games", [
    ("hex", {"size": 5}, "hex", {"board_size": 5}, 30), ("hex", {"size": 8}, "hex", {"board_size": 8}, 10),
    ("connect4", {}, "connect_four", {}, 40), ("gomoku", {"size": 9}, "gomoku", {"size": 9}, 20),
    ("go", {"size": 7, "komi": 0.5}, "go", {"board_size": 7, "komi": 0.5}, 10),
])
def test_the_array_trees_kernels_agree_with_openspiel(name, params, spiel_name, spiel_params, games):
    """The array search's own rules, move for move against OpenSpiel (the action numbers
    are the same): along random games, each position the kernels work out from its
    parent's and the move has OpenSpiel's legal moves (``legal``), and a final one
    OpenSpiel's winner (``positions``: the result for the mover). Go's superko, which
    OpenSpiel does not forbid, leaves a game where the two differ (as above)."""
    from hexzero.mctsfw.search import arrays
    from hexzero.mctsfw.search.arrays import ArrayTree

    game = mctsfw.make_game(name, **params)
    kernels = game.kernels()
    theirs = pyspiel.load_game(spiel_name, spiel_params)
    rng = random.Random(len(name) * 7 + games)
    one, ones = np.ones((1, 1), np.bool_), np.ones(1, np.int32)
    for _ in range(games):
        spiel = theirs.new_initial_state()
        tree = ArrayTree(1, kernels.state_len, kernels.aux_len)
        kernels.set_root(tree, 0, game.initial_state(1))
        node = 0
        while not spiel.is_terminal():
            leaves = np.array([[node]], np.int32)
            legal = np.flatnonzero(kernels.legal(tree, leaves, one)[0]).tolist()
            if legal != sorted(spiel.legal_actions()):
                assert name == "go" and set(legal) < set(spiel.legal_actions())  # superko
                break
            mover = spiel.current_player() + 1
            action = rng.choice(legal)
            spiel.apply_action(action)
            child = int(tree.size[0])
            tree.reserve(1, 0, 1)
            tree.size[0] += 1
            tree.parent[0, child], tree.action[0, child] = node, action
            kernels.positions(tree, np.array([[child]], np.int32), ones)
            node = child
            if spiel.is_terminal():
                returns = spiel.returns()
                winner = None if returns[0] == 0 else 1 if returns[0] > 0 else 2
                assert tree.proven[0, node] == (arrays.DRAW if winner is None else
                                                arrays.WIN if winner == mover else arrays.LOSS)
            else:
                assert tree.player[0, node] == spiel.current_player() + 1
