"""Hex rules: wins for both players on every size, no false wins, one winner on full boards."""

import random

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hexzero import mctsfw
from hexzero.mctsfw import IllegalMoveError

SIZES = range(3, 9)


def play(game, cells, starting_player=1):
    """Play (row, col) cells in order, the players alternating from ``starting_player``."""
    state = game.initial_state(starting_player)
    for r, c in cells:
        state = game.next_state(state, r * game.size + c)
    return state


def place(game, p1_cells, p2_cells, to_move=1):
    """A position holding exactly these stones, built through the flat OHT state."""
    flat = [to_move] + [0] * (game.size**2)
    for r, c in p1_cells:
        flat[1 + r * game.size + c] = 1
    for r, c in p2_cells:
        flat[1 + r * game.size + c] = 2
    return game.from_flat(flat)


def centre_wins(game, to_move):
    """5x5 Hex, ``to_move`` to play, one stone (the centre, action 12) from joining their
    sides: player 1 holds column 2 but for the centre, player 2 row 2 but for it."""
    if to_move == 1:
        return place(game, [(0, 2), (1, 2), (3, 2), (4, 2)], [(0, 0), (4, 4), (1, 4), (3, 0)], 1)
    return place(game, [(0, 0), (4, 4), (1, 3), (3, 1)], [(2, 0), (2, 1), (2, 3), (2, 4)], 2)


def interleave(own, other):
    """Moves alternating own/other (own first), own's chain completed last."""
    moves = []
    for i, cell in enumerate(own):
        moves.append(cell)
        if i < len(own) - 1:
            moves.append(other[i])
    return moves


def spare_cells(game, used, count):
    free = [(r, c) for r in range(game.size) for c in range(game.size) if (r, c) not in used]
    return free[:count]


def chain_win(game, chain, player):
    """Play ``chain`` for ``player`` with harmless opponent moves in between; return states."""
    other_cells = spare_cells(game, set(chain), len(chain))
    if player == 1:
        state = play(game, interleave(chain, other_cells), starting_player=1)
    else:
        state = play(game, interleave(chain, other_cells), starting_player=2)
    return state


def straight_column(n, c):  # player 1 joins row 0 to row n-1
    return [(r, c) for r in range(n)]


def straight_row(n, r):  # player 2 joins col 0 to col n-1
    return [(r, c) for c in range(n)]


def zigzag_p1(n):
    """Down the board alternating the (r+1, c-1) and (r+1, c) neighbours."""
    cells, c = [], n - 1
    for r in range(n):
        cells.append((r, c))
        if r % 2 == 0 and c > 0:
            c -= 1
    return cells


def edge_hug_p2(n):
    """Along row 0 to the far column: hugs player 1's north-east side the whole way."""
    return [(0, c) for c in range(n)]


@pytest.mark.parametrize("n", SIZES)
class TestWins:
    def test_player1_straight_wins_every_column(self, n):
        game = mctsfw.make_game("hex", size=n)
        for c in range(n):
            state = chain_win(game, straight_column(n, c), 1)
            assert game.is_final(state) and game.winner(state) == 1

    def test_player2_straight_wins_every_row(self, n):
        game = mctsfw.make_game("hex", size=n)
        for r in range(n):
            state = chain_win(game, straight_row(n, r), 2)
            assert game.is_final(state) and game.winner(state) == 2

    def test_zigzag_and_diagonal_chains(self, n):
        game = mctsfw.make_game("hex", size=n)
        state = chain_win(game, zigzag_p1(n), 1)
        assert game.winner(state) == 1
        # the anti-diagonal (r, n-1-r) is connected through the (r+1, c-1) neighbour
        state = chain_win(game, [(r, n - 1 - r) for r in range(n)], 1)
        assert game.winner(state) == 1
        # transposed zig-zag for player 2
        state = chain_win(game, [(c, r) for r, c in zigzag_p1(n)], 2)
        assert game.winner(state) == 2

    def test_edge_hugging_chains(self, n):
        game = mctsfw.make_game("hex", size=n)
        assert game.winner(place(game, [], edge_hug_p2(n))) == 2
        assert game.winner(place(game, [], straight_row(n, n - 1))) == 2
        assert game.winner(place(game, straight_column(n, 0), [])) == 1
        assert game.winner(place(game, straight_column(n, n - 1), [])) == 1
        # a winding path along two sides: down column 0 (player 2's start side), then... player 1 still joins rows
        hook = [(r, 0) for r in range(n)]
        assert game.winner(play(game, interleave(hook, [(0, c) for c in range(1, n)]))) == 1

    def test_no_false_wins(self, n):
        game = mctsfw.make_game("hex", size=n)
        # (r, c) and (r+1, c+1) are NOT neighbours: the main diagonal does not connect
        diagonal = [(r, r) for r in range(n)]
        state = place(game, diagonal, [])
        assert not game.is_final(state) and game.winner(state) is None
        # a full row of player 1 joins nothing for player 1 (wrong sides) and is no player 2 chain
        assert game.winner(place(game, straight_row(n, n // 2), [])) is None
        # player 2 owning a full column is not a player 2 win
        assert game.winner(place(game, [], straight_column(n, n // 2))) is None
        # a column missing its last cell is not yet a win, and the game goes on
        state = chain_win(game, straight_column(n, 0)[:-1], 1)
        assert not game.is_final(state)
        assert game.legal_actions(state)


def test_win_is_detected_by_the_move_that_bridges_two_groups():
    game = mctsfw.make_game("hex", size=5)
    top = [(0, 2), (1, 2)]
    bottom = [(3, 2), (4, 2)]
    state = place(game, top + bottom, [(0, 0), (1, 0), (2, 0), (3, 0)], to_move=1)
    assert not game.is_final(state)
    state = game.next_state(state, 2 * 5 + 2)
    assert game.winner(state) == 1


@pytest.mark.parametrize("n", SIZES)
def test_neighbour_graph_is_the_oht_one(n):
    game = mctsfw.make_game("hex", size=n)
    assert isinstance(game.graph, nx.Graph)
    for r in range(n):
        for c in range(n):
            expected = {
                rr * n + cc
                for rr, cc in [(r - 1, c), (r - 1, c + 1), (r, c - 1), (r, c + 1), (r + 1, c - 1), (r + 1, c)]
                if 0 <= rr < n and 0 <= cc < n
            }
            assert set(game.graph.neighbors(r * n + c)) == expected


@settings(max_examples=300, deadline=None)
@given(n=st.integers(3, 8), seed=st.integers(0, 2**32 - 1))
def test_every_full_board_has_exactly_one_winner(n, seed):
    game = mctsfw.make_game("hex", size=n)
    rng = random.Random(seed)
    cells = list(range(n * n))
    rng.shuffle(cells)
    flat = [1] + [0] * (n * n)
    for i, a in enumerate(cells):
        flat[1 + a] = 1 + i % 2
    ones = sum(1 << a for a in range(n * n) if flat[1 + a] == 1)
    twos = sum(1 << a for a in range(n * n) if flat[1 + a] == 2)
    assert game._connects(ones, 1) != game._connects(twos, 2)
    # and networkx agrees about who connects
    graph = game.graph
    for player, own in ((1, ones), (2, twos)):
        sub = graph.subgraph([a for a in range(n * n) if own >> a & 1])
        start, end = game.sides[player]
        joined = any(
            any(b in comp for b in range(n * n) if end >> b & 1)
            for comp in nx.connected_components(sub)
            if any(a in comp for a in range(n * n) if start >> a & 1)
        )
        assert joined == game._connects(own, player)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(3, 8), seed=st.integers(0, 2**32 - 1), start=st.sampled_from([1, 2]))
def test_random_games_end_with_the_first_connection(n, seed, start):
    """Stepping through next_state stops at the first connection, and the winner is the one
    that the filled board shows (what fill-then-test playouts rely on)."""
    game = mctsfw.make_game("hex", size=n)
    rng = random.Random(seed)
    state = game.initial_state(start)
    moves = 0
    while not game.is_final(state):
        assert game.current_player(state) == (start if moves % 2 == 0 else 3 - start)
        state = game.next_state(state, rng.choice(game.legal_actions(state)))
        moves += 1
    winner = game.winner(state)
    player, ones, twos, _ = state
    assert game._connects(ones if winner == 1 else twos, winner)
    # fill the rest at random: the same player still is the only one connected
    assert game.playout((player, ones, twos, 0), rng) == winner


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 9), seed=st.integers(0, 2**32 - 1))
def test_the_threats_and_wins_a_search_reads_from_kept_reaches_are_a_fresh_games(n, seed):
    """A search asks both players' completing cells at every node, and the game grows the
    mover's from the parent's by the new stone (``next_state``): along descents as a search
    makes them, every winner and every completing cell is what a game that kept nothing finds."""
    game = mctsfw.make_game("hex", size=n)
    rng = random.Random(seed)
    state = game.initial_state()
    while not game.is_final(state):
        for _ in range(4):  # descents from the position, asking the threats at each node
            node = state
            for _ in range(rng.randint(1, 6)):
                game.forcing_actions(node)
                action = rng.choice(game.legal_actions(node))
                fresh = mctsfw.make_game("hex", size=n)
                child = game.next_state(node, action)
                assert child == fresh.next_state(node, action)
                if game.is_final(child):
                    break
                empty = game.full & ~(child[1] | child[2])
                for player in (1, 2):
                    assert game.completing_cells(child[player], player, empty) == fresh.completing_cells(
                        child[player], player, empty)
                node = child
        state = game.next_state(state, rng.choice(game.legal_actions(state)))


def test_illegal_moves_are_refused_and_change_nothing():
    game = mctsfw.make_game("hex", size=4)
    state = game.next_state(game.initial_state(), 5)
    before = state
    with pytest.raises(IllegalMoveError, match="already taken"):
        game.next_state(state, 5)
    for bad in (-1, 16, 3.5, "a1"):
        with pytest.raises(IllegalMoveError):
            game.next_state(state, bad)
    assert state == before
    won = place(game, straight_column(4, 0), [])
    with pytest.raises(IllegalMoveError, match="over"):
        game.next_state(won, 15)
    assert isinstance(IllegalMoveError("x"), ValueError)


def test_either_player_may_start():
    game = mctsfw.make_game("hex", size=3)
    assert game.current_player(game.initial_state(2)) == 2
    state = game.next_state(game.initial_state(2), 4)
    assert game.to_flat(state) == (1, 0, 0, 0, 0, 2, 0, 0, 0, 0)


def test_flat_state_round_trip_and_errors():
    game = mctsfw.make_game("hex", size=4)
    rng = random.Random(3)
    state = game.initial_state()
    for _ in range(7):
        state = game.next_state(state, rng.choice(game.legal_actions(state)))
        assert game.from_flat(game.to_flat(state)) == state
    with pytest.raises(ValueError, match="17 values"):
        game.from_flat([1] * 5)
    with pytest.raises(ValueError, match="0, 1 or 2"):
        game.from_flat([1] + [0] * 15 + [3])
    with pytest.raises(ValueError, match="1 or 2"):
        game.from_flat([0] + [0] * 16)


def test_bad_sizes_are_refused():
    for size in (2, 20, "5", 4.0, True):
        with pytest.raises(ValueError, match="size"):
            mctsfw.make_game("hex", size=size)
    assert mctsfw.make_game("hex", size=11).num_actions == 121


def test_person_notation():
    game = mctsfw.make_game("hex", size=5)
    state = game.initial_state()
    assert game.parse_action("b3", state) == 2 * 5 + 1
    assert game.parse_action(" 2 1 ", state) == 2 * 5 + 1
    assert game.action_to_text(11) == "b3"
    for bad, reason in [("z9", "off the"), ("hello", "cannot read"), ("5 0", "off the")]:
        with pytest.raises(IllegalMoveError, match=reason):
            game.parse_action(bad, state)
    state = game.next_state(state, 11)
    with pytest.raises(IllegalMoveError, match="taken"):
        game.parse_action("b3", state)


def test_encoding_marks_stones_and_player():
    game = mctsfw.make_game("hex", size=3)
    state = play(game, [(0, 0), (2, 2)])
    x = game.encode(state)
    assert x.shape == (2 * 9 + 2,)
    assert x[0] == 1 and x[9 + 8] == 1 and x[:18].sum() == 2
    assert list(x[-2:]) == [1, 0]


def test_render_is_a_diamond_with_one_cell_on_top():
    game = mctsfw.make_game("hex", size=4)
    state = play(game, [(0, 0), (3, 3)])
    picture = game.render(state)
    rows = [line for line in picture.splitlines() if any(ch in line for ch in ".XO") and "player" not in line]
    counts = [sum(line.count(ch) for ch in ".XO") for line in rows]
    assert counts == [1, 2, 3, 4, 3, 2, 1]
    assert "X" in rows[0] and "O" in rows[-1]
    assert "player 1" in picture and "player 2" in picture


def test_the_180_degree_turn_is_a_symmetry():
    game = mctsfw.make_game("hex", size=4)
    rng = random.Random(5)
    state = game.initial_state()
    for _ in range(5):
        state = game.next_state(state, rng.choice(game.legal_actions(state)))
    target = np.zeros(16, dtype=np.float32)
    target[game.legal_actions(state)[0]] = 1.0
    (x0, t0), (x1, t1), _, _ = game.symmetries(game.encode(state), target)
    assert np.array_equal(x0, game.encode(state)) and np.array_equal(t0, target)
    player, ones, twos, _ = state
    turn = lambda bits: sum(1 << (15 - a) for a in range(16) if bits >> a & 1)  # noqa: E731
    turned = (player, turn(ones), turn(twos), 0)
    assert np.array_equal(x1, game.encode(turned))
    assert t1[15 - game.legal_actions(state)[0]] == 1.0
    # a winning chain stays a win for the same player when turned
    won = place(game, straight_column(4, 1), [])
    player, ones, twos, _ = won
    assert game.from_flat(game.to_flat((player, turn(ones), turn(twos), 0)))[3] == 1


def test_planes_hold_the_same_facts_as_the_flat_encoding_and_turn_with_it():
    game = mctsfw.make_game("hex", size=4)
    state = play(game, [(0, 1), (2, 3), (3, 0)])
    planes = game.encode_planes(state)
    assert planes.shape == (4, 4, 6)
    assert planes[0, 1, 0] == 1 and planes[3, 0, 0] == 1 and planes[2, 3, 1] == 1 and planes[:, :, :2].sum() == 3
    assert (planes[:, :, 3] == 1).all() and (planes[:, :, 2] == 0).all()  # player 2 to move
    assert (planes[:, :, :4] == game.planes_of_encoded(game.encode(state)[None])[0]).all()
    target = np.arange(16, dtype=np.float32)
    for (turned, t), (flat_turned, flat_t) in zip(game.symmetries(planes, target), game.symmetries(game.encode(state), target)):
        for channel in range(4):  # each plane is its flat part moved the same way
            flat_part = flat_turned[16 * channel:16 * channel + 16] if channel < 2 else np.full(16, flat_turned[30 + channel])
            assert np.array_equal(turned[:, :, channel].reshape(-1), flat_part)
        assert np.array_equal(turned[:, :, 4:], planes[:, :, 4:])  # every symmetry keeps each side's edges its own
        assert np.array_equal(t, flat_t)
    assert game.symmetries(planes, target)[1][1][0] == 15  # the turn: cell 0 gets cell 15's target


@pytest.mark.parametrize("size", [3, 5, 11])
def test_the_planes_show_each_players_two_edges(size):
    """Player 1 connects row 0 to row n-1, player 2 column 0 to column n-1: planes 4 and 5
    are ones on exactly those cells, whatever the position."""
    game = mctsfw.make_game("hex", size=size)
    planes = game.encode_planes(game.state_after([0, size * size - 1]))
    rows, cols = np.indices((size, size))
    assert np.array_equal(planes[:, :, 4], ((rows == 0) | (rows == size - 1)).astype(np.float32))
    assert np.array_equal(planes[:, :, 5], ((cols == 0) | (cols == size - 1)).astype(np.float32))


def test_the_mirror_with_colours_swapped_is_a_symmetry_for_the_mover():
    """The third and fourth cases: the board mirrored across the long diagonal (and turned),
    each stone the other player's and the other player to move. Along random games to the
    end, the mirrored position is the one the moves mirrored and recoloured lead to, and a
    finished game is won by the other colour: the mover's prospects are unchanged."""
    game = mctsfw.make_game("hex", size=5)
    mirror = lambda a: (a % 5) * 5 + a // 5  # noqa: E731
    index = np.arange(25)
    rng = random.Random(3)
    for _ in range(20):
        starting = rng.choice([1, 2])
        moves = []
        state = game.initial_state(starting)
        while not game.is_final(state):
            moves.append(rng.choice(game.legal_actions(state)))
            state = game.next_state(state, moves[-1])
            cases = game.symmetries(game.encode(state), index)
            assert len(cases) == 4
            mirrored = game.state_after([mirror(a) for a in moves], 3 - starting)
            turned_mirrored = game.state_after([24 - mirror(a) for a in moves], 3 - starting)
            assert np.array_equal(cases[2][0], game.encode(mirrored))
            assert np.array_equal(cases[3][0], game.encode(turned_mirrored))
            assert [int(cases[2][1][mirror(a)]) for a in range(25)] == list(range(25))
            planes = game.symmetries(game.encode_planes(state), index)
            assert np.array_equal(planes[2][0], game.encode_planes(mirrored))
        assert game.winner(mirrored) == game.winner(turned_mirrored) == 3 - game.winner(state)


@pytest.mark.parametrize("size", [3, 5, 7, 8, 11, 19])
def test_all_boards_at_once_are_decided_as_one_at_a_time(size):
    """The lock-step playouts' packed flood (``_decided``) agrees with ``_connects`` board
    by board and player by player, on full and partly filled boards of sizes whose
    padding differs, for batches of one board and more."""
    game = mctsfw.make_game("hex", size=size)
    n2 = size * size
    rng = np.random.default_rng(size)

    def bits(row):
        return sum(1 << int(a) for a in np.flatnonzero(row))

    for count in (1, 2, 37):
        for filled in (0.3, 0.6, 1.0):
            cells = rng.random((count, n2))
            ones = cells < filled / 2
            twos = (cells >= filled / 2) & (cells < filled)
            if count > 1:
                ones[0], twos[0] = True, False  # every cell player 1's
                ones[1], twos[1] = False, True
            x = np.concatenate([ones, twos, np.ones((count, 1)), np.zeros((count, 1))], axis=1).astype(np.float32)
            expected = [1 if game._connects(bits(a), 1) else 2 if game._connects(bits(b), 2) else 0
                        for a, b in zip(ones, twos)]
            assert game._decided(x).tolist() == expected
            if filled == 1.0:
                assert 0 not in expected  # a full board has a winner


def test_a_state_is_rebuilt_from_its_moves(hex4):
    state, moves = hex4.initial_state(2), []
    for action in (5, 0, 10, 15):
        state = hex4.next_state(state, action)
        moves.append(action)
    assert hex4.state_after(moves, starting_player=2) == state
    with pytest.raises(mctsfw.IllegalMoveError):
        hex4.state_after([5, 5])
