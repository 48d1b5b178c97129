"""Gomoku rules: every line wins for both players, overlines with exactly_five, draws,
symmetries, planes with history, playouts, people's input and the picture.

Positions are reached through ``next_state`` only (the win test is incremental from the
last stone). A naive checker on a 2D grid is the reference the bitboards are held to.
"""

import random

import numpy as np
import pytest

from hexzero import mctsfw
from tests.conftest import reachable_winners
from hexzero.mctsfw import IllegalMoveError
from hexzero.mctsfw.game import Game

DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))  # across, down, diagonal \, diagonal /


@pytest.fixture(scope="module")
def game():
    return mctsfw.make_game("gomoku", size=9)


# ---- the reference: a grid and a naive run count ----------------------------------------------
def naive_winners(grid, connect=5, exactly=False):
    """The players with a winning line on ``grid`` (grid[r][c], row 0 at the top): a
    maximal run of ``connect`` or more stones (exactly ``connect`` when ``exactly``)."""
    n = len(grid)
    found = set()
    for r in range(n):
        for c in range(n):
            player = grid[r][c]
            if not player:
                continue
            for dr, dc in DIRECTIONS:
                pr, pc = r - dr, c - dc
                if 0 <= pr < n and 0 <= pc < n and grid[pr][pc] == player:
                    continue  # not the start of the run
                length = 0
                rr, cc = r, c
                while 0 <= rr < n and 0 <= cc < n and grid[rr][cc] == player:
                    length, rr, cc = length + 1, rr + dr, cc + dc
                if length == connect or (length > connect and not exactly):
                    found.add(player)
    return found


def all_lines(n, connect=5):
    lines = []
    for r in range(n):
        for c in range(n):
            for dr, dc in DIRECTIONS:
                cells = [(r + k * dr, c + k * dc) for k in range(connect)]
                if all(0 <= rr < n and 0 <= cc < n for rr, cc in cells):
                    lines.append([rr * n + cc for rr, cc in cells])
    return lines


def scattered(n, avoid):
    """Cells no two of which are neighbours in any direction ((r + 2c) % 5 == 0), so no
    set of them holds even two in a row, outside ``avoid``."""
    return [r * n + c for r in range(n) for c in range(n) if (r + 2 * c) % 5 == 0 and r * n + c not in avoid]


def interleave(first, second):
    order = []
    for k in range(max(len(first), len(second))):
        order += first[k : k + 1] + second[k : k + 1]
    return order


def grid_of(game, state):
    return [[int(v) for v in row] for row in game.board(state)]


# ---- wins --------------------------------------------------------------------------------------
@pytest.mark.parametrize("winner", [1, 2])
def test_every_line_wins_for_both_players_from_every_stone(game, winner):
    """Each of the 140 lines of five on 9x9 (45 across, 45 down, 25 + 25 diagonal, those at
    the edges and corners included), completed by each of its five stones."""
    n = game.size
    lines = all_lines(n)
    assert len(lines) == 140
    for line in lines:
        loser = scattered(n, set(line))
        for last in range(5):
            own = [a for k, a in enumerate(line) if k != last] + [line[last]]
            if winner == 1:
                order = interleave(own, loser[:4])
            else:
                order = interleave(loser[:5], own)
            states = [game.initial_state(1)]
            for action in order:
                assert not game.is_final(states[-1]), (line, last)
                states.append(game.next_state(states[-1], action))
            final = states[-1]
            assert game.winner(final) == winner and game.is_final(final), (line, last)
            assert game.legal_actions(final) == []
            assert game.winning_line(final) == sorted(line)
            assert naive_winners(grid_of(game, final)) == {winner}


def test_four_is_not_five_and_gaps_break_lines(game):
    # X X X X . X on row 0, O far away: no line until the gap is filled
    x_moves, o_moves = [0, 1, 2, 3, 5], [80, 78, 62, 60, 44]
    state = game.state_after(interleave(x_moves, o_moves))
    assert not game.is_final(state)
    assert naive_winners(grid_of(game, state)) == set()
    won = game.next_state(state, 4)  # six in a row: freestyle wins
    assert game.winner(won) == 1 and game.winning_line(won) == [0, 1, 2, 3, 4, 5]
    # five actions in steps of 1, 8 (size - 1) and 10 (size + 1) that wrap around the
    # board's edge: lines for a bitboard without the guard column, none on the board
    # (g1 h1 i1 a2 b2; a2 i2 h3 g4 f5; g1 h2 i3 a5 b6)
    for x_moves in ([6, 7, 8, 9, 10], [9, 17, 25, 33, 41], [6, 16, 26, 36, 46]):
        state = game.state_after(interleave(x_moves, [80, 78, 60, 58]))
        assert naive_winners(grid_of(game, state)) == set() and not game.is_final(state), x_moves


def test_random_games_agree_with_the_naive_checker():
    rng = random.Random(4)
    variants = [(9, 5, False), (9, 5, True), (7, 4, False), (7, 4, True), (5, 3, True), (6, 5, False)]
    for size, connect, exactly in variants:
        game = mctsfw.make_game("gomoku", size=size, connect=connect, exactly_five=exactly)
        for starting_player in (1, 2):
            for _ in range(40):
                state = game.initial_state(starting_player)
                grid = [[0] * size for _ in range(size)]
                player = starting_player
                while True:
                    winners = naive_winners(grid, connect, exactly)
                    full = all(all(row) for row in grid)
                    assert game.winner(state) == (next(iter(winners)) if winners else None)
                    assert game.is_final(state) == bool(winners or full)
                    assert grid_of(game, state) == grid
                    if game.is_final(state):
                        assert game.legal_actions(state) == []
                        break
                    assert game.current_player(state) == player
                    assert game.legal_actions(state) == [r * size + c for r in range(size) for c in range(size)
                                                         if not grid[r][c]]
                    action = rng.choice(game.legal_actions(state))
                    grid[action // size][action % size] = player
                    state = game.next_state(state, action)
                    player = 3 - player


# ---- exactly five -----------------------------------------------------------------------------
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_an_overline_wins_only_in_freestyle(direction):
    """X X X X X . in a line, then the sixth stone at the end or in a gap: freestyle wins
    with the five already; with exactly_five an overline of six is no win."""
    free = mctsfw.make_game("gomoku", size=9)
    exact = mctsfw.make_game("gomoku", size=9, exactly_five=True)
    dr, dc = direction
    r0, c0 = (1, 1) if dc >= 0 else (1, 7)
    line = [(r0 + k * dr) * 9 + c0 + k * dc for k in range(6)]  # six cells
    loser = scattered(9, set(line))
    # X plays 0 1 2 4 5 then 3 (the middle, completing six): no five before it
    x_order = [line[0], line[1], line[2], line[4], line[5], line[3]]
    order = interleave(x_order, loser[:5])
    won = free.state_after(order)
    assert free.winner(won) == 1 and len(free.winning_line(won)) == 6
    over = exact.state_after(order)
    assert exact.winner(over) is None and not exact.is_final(over)
    assert exact.winning_line(over) == []
    # exactly five: X X X X X with the sixth cell empty (or the other player's) wins
    five = exact.state_after(interleave([line[0], line[1], line[2], line[4], line[3]], loser[:4]))
    assert exact.winner(five) == 1 and exact.winning_line(five) == sorted(line[:5])
    # X X X X X . X: a five with an own stone beyond the gap wins with exactly_five
    seven = [(r0 + k * dr) * 9 + c0 + k * dc for k in range(7)]
    loser = scattered(9, set(seven))
    state = exact.state_after(interleave([seven[6], seven[0], seven[1], seven[3], seven[4], seven[2]], loser[:5]))
    assert exact.winner(state) == 1 and exact.winning_line(state) == sorted(seven[:5])


def test_exactly_five_wins_in_another_direction_of_the_same_stone():
    """The last stone makes six across and exactly five down: a win with exactly_five."""
    exact = mctsfw.make_game("gomoku", size=9, exactly_five=True)
    across = [4 * 9 + c for c in (1, 2, 3, 5, 6)]  # row 5: X X X . X X (the gap at e5 = 40)
    down = [r * 9 + 4 for r in (0, 1, 2, 3)]  # column e, rows 0-3
    loser = scattered(9, set(across) | set(down) | {40})
    order = interleave(across + down, loser[:9]) + [40]
    state = exact.state_after(order)
    assert exact.winner(state) == 1
    assert exact.winning_line(state) == sorted(down + [40])
    assert naive_winners(grid_of(exact, state), 5, True) == {1}
    assert 1 in naive_winners(grid_of(exact, state), 6, False)  # the six across is there too


# ---- draws -------------------------------------------------------------------------------------
def draw_order(n):
    """A full board without five in a row: cell (r, c) is X when (c + 2r) % 4 < 2 (across
    X X O O, down alternating, diagonals X O O X and X X O O), the players alternating."""
    xs = [r * n + c for r in range(n) for c in range(n) if (c + 2 * r) % 4 < 2]
    os_ = [r * n + c for r in range(n) for c in range(n) if (c + 2 * r) % 4 >= 2]
    if len(xs) >= len(os_):
        return 1, interleave(xs, os_)
    return 2, interleave(os_, xs)


@pytest.mark.parametrize("n", [9, 15])
def test_a_full_board_without_a_line_is_a_draw(n):
    game = mctsfw.make_game("gomoku", size=n)
    starting_player, order = draw_order(n)
    state = game.initial_state(starting_player)
    for action in order:
        assert not game.is_final(state)
        state = game.next_state(state, action)
    assert len(order) == n * n
    assert game.is_final(state) and game.winner(state) is None
    assert naive_winners(grid_of(game, state)) == set()
    assert game.legal_actions(state) == []
    assert "draw" in game.render(state)
    assert game.playout(state, random.Random(0)) is None
    with pytest.raises(IllegalMoveError, match="draw"):
        game.next_state(state, 0)


# ---- illegal moves, players, parameters ------------------------------------------------------------
def test_illegal_moves_are_refused_with_the_reason_and_change_nothing(game):
    state = game.state_after([40, 41])
    before = state
    for bad, reason in [(40, "e5 is already occupied"), (41, "f5 is already occupied"), (81, "off the 9x9 board"),
                        (-1, "off the 9x9 board"), ("3", "off the"), (True, "off the"), (2.0, "off the")]:
        with pytest.raises(IllegalMoveError, match=reason):
            game.next_state(state, bad)
    assert state == before and 40 not in game.legal_actions(state)
    won = game.state_after(interleave([0, 1, 2, 3, 4], [80, 79, 78, 77]))
    with pytest.raises(IllegalMoveError, match="over: player 1 has won"):
        game.next_state(won, 40)
    assert game.next_state(state, np.int64(3)) == game.next_state(state, 3)


def test_either_player_may_start_and_states_are_ids(game):
    for first in (1, 2):
        states = [game.initial_state(first)]
        for a in interleave([0, 1, 2, 3, 4], [80, 79, 78, 77]):
            states.append(game.next_state(states[-1], a))
        assert [game.current_player(s) for s in states[:3]] == [first, 3 - first, first]
        assert game.winner(states[-1]) == first
        assert states[-1][4] == tuple(interleave([0, 1, 2, 3, 4], [80, 79, 78, 77]))
        assert game.state_after(states[-1][4], first) == states[-1]
    with pytest.raises(ValueError, match="starting_player"):
        game.initial_state(3)
    a, b = game.state_after([0, 1, 2]), game.state_after([0, 1, 2])
    assert a == b and hash(a) == hash(b)
    assert game.state_after([2, 1, 0]) != a  # another history: another ID (and other history planes)


def test_state_after_rebuilds_every_state_of_random_games():
    """The fast ``state_after`` gives what stepping through ``next_state`` gives, for every
    prefix of random games from either opener (won and drawn ends included), and refuses
    what stepping refuses with the same reason."""
    rng = random.Random(7)
    for size, params in [(9, {}), (5, {}), (7, {"exactly_five": True}), (7, {"connect": 4})]:
        game = mctsfw.make_game("gomoku", size=size, **params)
        for first in (1, 2):
            for _ in range(15):
                states, moves = [game.initial_state(first)], []
                while not game.is_final(states[-1]):
                    moves.append(rng.choice(game.legal_actions(states[-1])))
                    states.append(game.next_state(states[-1], moves[-1]))
                for k, state in enumerate(states):
                    assert game.state_after(moves[:k], first) == state
                assert game.state_after(np.array(moves, dtype=np.int64), first) == states[-1]
                empty = [a for a in range(size * size) if a not in moves]
                if game.winner(states[-1]) and empty:  # a stone after the win
                    with pytest.raises(IllegalMoveError, match="over: player"):
                        game.state_after(moves + empty[:1], first)
    game = mctsfw.make_game("gomoku", size=9)
    for bad, reason in [([40, 40], "e5 is already occupied"), ([40, 81], "off the"), ([40, "3"], "off the"),
                        ([40, True], "off the")]:
        with pytest.raises(IllegalMoveError, match=reason):
            game.state_after(bad)


@pytest.mark.parametrize(
    "params, problem",
    [({"size": 4}, "size"), ({"size": 21}, "size"), ({"size": "9"}, "size"), ({"connect": 2}, "connect"),
     ({"size": 5, "connect": 6}, "connect: 6 in a row cannot fit"), ({"exactly_five": 1}, "exactly_five"),
     ({"history": -1}, "history"), ({"history": 9}, "history"), ({"rows": 9}, "rows")],
)
def test_bad_parameters_are_refused(params, problem):
    with pytest.raises(ValueError, match=problem):
        mctsfw.make_game("gomoku", **params)


def test_defaults_and_params():
    game = mctsfw.make_game("gomoku")
    assert game.params() == {"size": 15, "connect": 5, "exactly_five": False, "history": 0}
    assert game.num_actions == 225
    assert mctsfw.default_registries().games.get("gomoku") is type(game)


# ---- encodings, history and symmetries -----------------------------------------------------------
def test_flat_encoding(game):
    state = game.state_after([40, 0, 80])  # X e5, O a1, X i9; player 2 to move
    x = game.encode(state)
    n2 = 81
    assert x.dtype == np.float32 and x.shape == (3 * n2 + 2,)
    assert np.flatnonzero(x[:n2]).tolist() == [40, 80]
    assert np.flatnonzero(x[n2 : 2 * n2]).tolist() == [0]
    assert np.flatnonzero(x[2 * n2 : 3 * n2]).tolist() == [80]
    assert x[-2:].tolist() == [0.0, 1.0]
    start = game.encode(game.initial_state())
    assert start[: 3 * n2].sum() == 0 and start[-2:].tolist() == [1.0, 0.0]


def test_planes_and_history():
    game = mctsfw.make_game("gomoku", size=9, history=2)
    state = game.state_after([40, 0, 80])  # player 2 (O) to move
    planes = game.encode_planes(state)
    assert planes.dtype == np.float32 and planes.shape == (9, 9, 8)
    own, other, last, black = (planes[:, :, k].ravel() for k in range(4))
    assert np.flatnonzero(own).tolist() == [0]  # O's stones: the player to move
    assert np.flatnonzero(other).tolist() == [40, 80]
    assert np.flatnonzero(last).tolist() == [80]
    assert (black == 0).all()
    # one move back: X had only e5; two moves back: O had nothing yet
    assert np.flatnonzero(planes[:, :, 4].ravel()).tolist() == [0]
    assert np.flatnonzero(planes[:, :, 5].ravel()).tolist() == [40]
    assert np.flatnonzero(planes[:, :, 6].ravel()).tolist() == []
    assert np.flatnonzero(planes[:, :, 7].ravel()).tolist() == [40]
    # before the start the history planes are empty; player 1 to move: the colour plane is ones
    first = game.encode_planes(game.state_after([40]))
    assert (first[:, :, 3] == 0).all() and first[:, :, 6:].sum() == 0
    assert (game.encode_planes(game.initial_state())[:, :, 3] == 1).all()
    assert mctsfw.make_game("gomoku", size=9).encode_planes(state).shape == (9, 9, 4)


def transformed_actions(game, case):
    """The action map of symmetry number ``case``: where a one-hot target lands."""
    n2 = game.num_actions
    x = game.encode(game.initial_state())
    mapping = []
    for a in range(n2):
        target = np.zeros(n2, dtype=np.float32)
        target[a] = 1.0
        mapping.append(int(np.argmax(game.symmetries(x, target)[case][1])))
    return mapping


@pytest.mark.parametrize("history", [0, 2])
def test_the_eight_symmetries_are_symmetries_of_the_game(history):
    """Each symmetric case is the encoding of the game played with every move mapped the
    same way (planes with history too), the target mapped alike, and a won game stays won."""
    game = mctsfw.make_game("gomoku", size=7, history=history)
    n2 = game.num_actions
    maps = [transformed_actions(game, k) for k in range(8)]
    assert maps[0] == list(range(n2))
    assert len({tuple(m) for m in maps}) == 8 and all(sorted(m) == list(range(n2)) for m in maps)
    rng = random.Random(3)
    for _ in range(6):
        moves, state = [], game.initial_state()
        while not game.is_final(state):
            moves.append(rng.choice(game.legal_actions(state)))
            state = game.next_state(state, moves[-1])
        for cut in (3, len(moves) - 1, len(moves)):
            position = game.state_after(moves[:cut])
            target = np.arange(n2, dtype=np.float32)
            for encode in (game.encode, game.encode_planes):
                cases = game.symmetries(encode(position), target)
                assert len(cases) == 8
                assert cases[0][0] is not None and (cases[0][0] == encode(position)).all()
                for k, (x_sym, t_sym) in enumerate(cases):
                    image = game.state_after([maps[k][a] for a in moves[:cut]])
                    assert x_sym.shape == encode(position).shape
                    assert (x_sym == encode(image)).all(), k
                    assert t_sym[maps[k]].tolist() == target.tolist()  # the target of a lands on maps[k][a]
                    assert game.winner(image) == game.winner(position)
                    assert game.is_final(image) == game.is_final(position)


# ---- playouts ----------------------------------------------------------------------------------------
def test_playouts_agree_in_distribution_with_stepping_random_moves():
    """The stretch-tested playouts and the base class's move-by-move ones give the same
    distribution of results: from the start, from a middle game and where a line is one
    move away (found inside the first stretch), on 9x9 and on 5x5 (where draws are common)."""
    for size, moves in [(9, []), (9, [40, 41, 31, 32, 22, 23]), (9, [0, 80, 1, 79, 2, 78, 3]), (5, [12, 6])]:
        game = mctsfw.make_game("gomoku", size=size)
        start = game.state_after(moves)
        n = 3000
        fast = [game.playout(start, random.Random(i)) for i in range(n)]
        slow = [Game.playout(game, start, random.Random(10**6 + i)) for i in range(n)]
        for outcome in (1, 2, None):
            p, q = fast.count(outcome) / n, slow.count(outcome) / n
            assert abs(p - q) < 5 * (0.25 / n * 2) ** 0.5, (size, moves, outcome, p, q)


def test_playouts_find_the_first_line_exactly():
    """The same random numbers drawn the same way (a uniformly random index into the empty
    cells, the last one moved into its place), stepping through ``next_state``: the
    stretch-tested playout ends with exactly the winner of that move sequence, whichever
    move of a stretch made the first line (the stretches start at different offsets)."""

    def stepping(game, state, rng):
        cells = game.legal_actions(state)
        left = len(cells)
        while not game.is_final(state):
            k = int(rng.random() * left)
            left -= 1
            action, cells[k] = cells[k], cells[left]
            state = game.next_state(state, action)
        return game.winner(state)

    for size, params in [(5, {}), (9, {}), (15, {}), (9, {"exactly_five": True}), (7, {"connect": 4})]:
        game = mctsfw.make_game("gomoku", size=size, **params)
        for seed in range(300 if not params else 100):
            start = game.state_after(random.Random(seed).sample(range(size * size), seed % 7))
            if game.is_final(start):
                continue
            assert game.playout(start, random.Random(seed)) == stepping(game, start, random.Random(seed)), (game, seed)


def test_playout_results_are_reachable():
    """With few cells left every playout's result is one that some order of the remaining
    moves reaches, and each reachable one appears; a decided state returns its winner."""
    game = mctsfw.make_game("gomoku", size=5)
    starting_player, order = draw_order(5)
    for removed in (2, 3, 4, 5):
        state = game.state_after(order[: len(order) - removed], starting_player)

        possible = reachable_winners(game, state)
        seen = {game.playout(state, random.Random(seed)) for seed in range(200)}
        assert seen == possible, (removed, seen, possible)
    won = game.state_after(interleave([0, 1, 2, 3, 4], [20, 21, 22, 23]))
    assert game.playout(won, random.Random(0)) == 1


def test_playouts_of_the_variants_and_with_choose():
    for params in ({"size": 7, "exactly_five": True}, {"size": 7, "connect": 4}):
        game = mctsfw.make_game("gomoku", **params)
        results = [game.playout(game.initial_state(), random.Random(s)) for s in range(100)]
        assert set(results) <= {1, 2, None} and 1 in results and 2 in results
    game = mctsfw.make_game("gomoku", size=9)
    first_empty = lambda s: game.legal_actions(s)[0]  # noqa: E731: fills row by row: X gets a1 c1 e1 g1 i1 ...
    assert game.playout(game.initial_state(), random.Random(0), choose=first_empty) in (1, 2, None)
    # X X X X . with X to move: choosing the gap always wins
    state = game.state_after(interleave([0, 1, 2, 3], [80, 79, 78, 77]))
    assert game.playout(state, random.Random(0), choose=lambda s: 4) == 1


# ---- people ----------------------------------------------------------------------------------------
def test_parse_action_and_text(game):
    state = game.state_after([40])
    assert game.parse_action("e4", state) == 3 * 9 + 4
    assert game.parse_action(" A1 ", state) == 0
    assert game.parse_action("i9", state) == 80
    assert game.parse_action("4 5", state) == 41
    assert game.parse_action("8,0", state) == 72
    assert game.action_to_text(40) == "e5" and game.cell_name(80) == "i9"
    assert "e5" in game.move_help and "a-i" in game.move_help
    assert mctsfw.make_game("gomoku").parse_action("h8", mctsfw.make_game("gomoku").initial_state()) == 7 * 15 + 7
    for bad, reason in [("e5", "e5 is already occupied"), ("4 4", "e5 is already occupied"), ("j1", "off the 9x9"),
                        ("a10", "off the 9x9"), ("a0", "off the"), ("9 0", "off the"), ("-1 2", "off the"),
                        ("x", "cannot read"), ("", "cannot read"), ("e", "cannot read"), ("1 2 3", "cannot read")]:
        with pytest.raises(IllegalMoveError, match=reason):
            game.parse_action(bad, state)
    won = game.state_after(interleave([0, 1, 2, 3, 4], [80, 79, 78, 77]))
    with pytest.raises(IllegalMoveError, match="over"):
        game.parse_action("e5", won)


def test_render_marks_the_last_move_and_the_winning_line(game):
    state = game.state_after([40, 0])
    lines = game.render(state).splitlines()
    assert lines[0].split() == list("abcdefghi") and lines[10].split() == list("abcdefghi")
    assert lines[1].split() == ["1", "(O)"] + ["."] * 8 + ["1"]  # a1 is the last move
    assert lines[5].split() == ["5"] + ["."] * 4 + ["X"] + ["."] * 4 + ["5"]
    assert "player 1 (X) to move" in lines[-1]
    won = game.state_after(interleave([9, 19, 29, 39, 49], [0, 8, 72, 80]))  # a2 .. e6, diagonal \
    text = game.render(won)
    assert text.count("[X]") == 5 and "(" not in "".join(text.splitlines()[:-1])  # the last stone is in the line
    assert "player 1 (X) has won: 5 in a row, a2-e6" in text
    row2 = text.splitlines()[2].split()
    assert row2[:2] == ["2", "[X]"]


def test_gif_frames_draw_stones_and_the_winning_line(game, tmp_path):
    from PIL import Image

    from hexzero.mctsfw.match import play_game
    from hexzero.plugins.gif import GOMOKU_COLOURS, PAINTERS, GifDisplay

    assert "gomoku" in PAINTERS
    actors = {1: mctsfw.make_actor("mcts", game, search_games=30, seed=0), 2: mctsfw.make_actor("random", game, seed=1)}
    gif = GifDisplay(title="mcts vs random")
    record = play_game(game, actors, display=gif)
    path = gif.save(tmp_path / "gomoku.gif")
    with Image.open(path) as image:
        assert image.n_frames == len(record.states)
    frames = gif.frames()
    last = {c for _, c in frames[-1].getcolors(1 << 16)}
    assert GOMOKU_COLOURS["board"] in last and GOMOKU_COLOURS[1] in last and GOMOKU_COLOURS[2] in last
    won = game.is_final(record.states[-1]) and game.winner(record.states[-1])
    assert (GOMOKU_COLOURS["line"] in last) == bool(won)
    assert GOMOKU_COLOURS["line"] not in {c for _, c in frames[-2].getcolors(1 << 16)}


# ---- the command line ----------------------------------------------------------------------------
def test_people_play_through_the_command_line():
    """Two people through piped input: X takes row 1 (a1 .. e1), O row 9; the refused
    inputs name their reason and change nothing; the last picture shows the line."""
    from tests.test_plugins import run_cli

    moves = ["a1", "a9", "a1", "j1", "1 2 3", "b1", "8 1", "c1", "c9", "d1", "d9", "e1"]
    result = run_cli("play", "--game", "gomoku", "--size", "9", "--p1", "human", "--p2", "human",
                     stdin="\n".join(moves) + "\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "refused: a1 is already occupied" in out
    assert "refused: 'j1' is off the 9x9 board" in out
    assert "refused: cannot read '1 2 3'" in out
    assert "player 2 plays b9" in out  # '8 1': row 8, column 1 counted from 0
    assert "player 1 (X) has won: 5 in a row, a1-e1" in out
    assert "  1 [X][X][X][X][X] .  .  .  .  1" in out
    assert "game 1: player 1 started, 9 moves, player 1 (human) wins" in out


def test_agents_play_gomoku_through_the_command_line():
    from tests.test_plugins import run_cli

    result = run_cli("play", "--game", "gomoku", "--size", "9", "--p1", "random", "--p2", "mcts",
                     "--search-games", "100", "--no-display", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert "Gomoku(size=9, connect=5, exactly_five=False, history=0)" in result.stdout
    assert "game 1:" in result.stdout
