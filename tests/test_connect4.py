"""Connect Four rules: every line wins for both players, no false wins, draws, people, encodings.

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

ROWS, COLUMNS = 6, 7
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))  # horizontal, vertical, diagonal /, diagonal \


@pytest.fixture
def game():
    return mctsfw.make_game("connect4")


# ---- the reference: a grid and a naive line test ---------------------------------------------
def naive_winner(grid):
    """The players with four in a row on ``grid`` (grid[r][c], row 0 at the bottom)."""
    rows, columns = len(grid), len(grid[0])
    found = set()
    for r in range(rows):
        for c in range(columns):
            player = grid[r][c]
            if not player:
                continue
            for dr, dc in DIRECTIONS:
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if all(0 <= rr < rows and 0 <= cc < columns and grid[rr][cc] == player for rr, cc in cells):
                    found.add(player)
    return found


def drop(grid, column, player):
    row = next(r for r in range(len(grid)) if not grid[r][column])
    grid[row][column] = player
    return row


def all_lines(rows=ROWS, columns=COLUMNS):
    lines = []
    for r in range(rows):
        for c in range(columns):
            for dr, dc in DIRECTIONS:
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if all(0 <= rr < rows and 0 <= cc < columns for rr, cc in cells):
                    lines.append(tuple(cells))
    return lines


def play(game, columns, starting_player=1):
    """Play 1-based-free column numbers (0..columns-1) in order; return every state."""
    states = [game.initial_state(starting_player)]
    for c in columns:
        states.append(game.next_state(states[-1], c))
    return states


def realise(picture, starting_player, last=None, must=True):
    """A move order (columns) that builds ``picture`` (strings, TOP row first, X/O/.) with
    the players alternating from ``starting_player``; ``last`` = (row from the bottom,
    column) is the cell played last."""
    target = [[{"X": 1, "O": 2, ".": 0}[ch] for ch in row] for row in reversed(picture)]
    rows, columns = len(target), len(target[0])
    total = sum(1 for row in target for v in row if v)
    heights = [0] * columns
    order = []
    budget = [2000]

    def search(player):
        if len(order) == total:
            return True
        budget[0] -= 1
        if budget[0] < 0:
            return False
        for c in range(columns):
            r = heights[c]
            if r == rows or target[r][c] != player or ((r, c) == last and len(order) != total - 1):
                continue
            heights[c] = r + 1
            order.append(c)
            if search(3 - player):
                return True
            order.pop()
            heights[c] = r
        return False

    if search(starting_player):
        return order
    assert not must, f"no move order builds {picture}"
    return None


def background(r, c):
    """The cells of a drawn full board: each column alternates, row 0 is X X O O X X O."""
    first = 1 if "XXOOXXO"[c] == "X" else 2
    return first if r % 2 == 0 else 3 - first


def line_picture(line, winner, starting_player):
    """A picture holding ``line`` for ``winner``, the cells under it from the drawn board,
    padded (at random, seeded) so the players can alternate from ``starting_player`` with
    ``winner`` completing the line last; no other line is on it. Returns the picture, the
    line's cell played last (the top of its column) and a move order building it."""
    base = [[0] * COLUMNS for _ in range(ROWS)]
    for r, c in line:
        for rr in range(r):
            base[rr][c] = background(rr, c)
    for r, c in line:
        base[r][c] = winner
    low_r, low_c = min(line)
    if line[1][1] == low_c and low_r > 0:  # vertical: the stone under it is the loser's, not a fifth
        base[low_r - 1][low_c] = 3 - winner
    tops = [(r, c) for r, c in line if r == ROWS - 1 or not base[r + 1][c]]
    last = tops[sum(line[0]) % len(tops)]
    wanted = 1 if starting_player == winner else 0
    rng = random.Random(str(line))
    for attempt in range(100):
        grid = [row[:] for row in base]
        extra = attempt % 4  # pairs of stones beyond the minimum, to give both players moves
        needed = [winner, 3 - winner] * extra
        balance = sum(v == winner for row in grid for v in row) - sum(v == 3 - winner for row in grid for v in row)
        needed += [3 - winner if balance > wanted else winner] * abs(balance - wanted)
        rng.shuffle(needed)
        for player in needed:
            free = [c for c in range(COLUMNS) if c != last[1] and not grid[ROWS - 1][c]]
            c = rng.choice(free)
            grid[next(r for r in range(ROWS) if not grid[r][c])][c] = player
        if not without_last_clean(grid, last):
            continue
        picture = ["".join(".XO"[v] for v in grid[r]) for r in reversed(range(ROWS))]
        order = realise(picture, starting_player, last, must=False)
        if order is not None:
            return picture, last, order
    raise AssertionError(f"cannot pad the picture of {line}")


def without_last_clean(grid, last):
    r, c = last
    keep, grid[r][c] = grid[r][c], 0
    clean = not naive_winner(grid)
    grid[r][c] = keep
    return clean


def grid_of(game, state):
    return [[int(v) for v in row] for row in game.board(state)]


# ---- wins ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("winner", [1, 2])
@pytest.mark.parametrize("starting_player", [1, 2])
def test_every_line_wins_for_both_players(game, winner, starting_player):
    lines = all_lines()
    assert len(lines) == 69  # 24 horizontal, 21 vertical, 12 + 12 diagonal
    for line in lines:
        picture, last, order = line_picture(line, winner, starting_player)
        states = play(game, order, starting_player)
        assert not any(game.is_final(s) for s in states[:-1]), picture
        assert game.is_final(states[-1]) and game.winner(states[-1]) == winner, picture
        assert game.legal_actions(states[-1]) == []
        assert grid_of(game, states[-1]) == [[".XO".index(ch) for ch in row] for row in reversed(picture)]


@pytest.mark.parametrize(
    "picture, last, direction",
    [
        (["......."] * 5 + ["XXXXOOO"], (0, 0), "horizontal at the left edge, completed at its end"),
        (["......."] * 5 + ["OOOXXXX"], (0, 4), "horizontal at the right edge, completed in the middle"),
        (["......."] * 2 + ["...X...", "...X...", "...XO..", "...XOO."], (3, 3), "vertical in the middle"),
        (["......X", "......X", "......X", "......X", "O.....O", "XOXO..O"], (5, 6), "vertical up to the top row"),
        (["......."] * 2 + ["...X...", "..XO...", ".XOX...", "XOOO..."], (3, 3), "diagonal / from the bottom-left corner"),
        (["......."] * 2 + ["X......", "OX.....", "OOX....", "XOOX..."], (3, 0), "diagonal \\ at the left edge"),
        (["X.O....", "XXOO...", "OOXX...", "XXOX...", "OOXX...", "XXOO..O"], (4, 1), "diagonal \\ from the top-left corner"),
        (["......."] * 2 + ["......X", "...O.XO", "...OXOX", "O..XXXO"], (2, 5), "diagonal \\ at the right edge"),
    ],
)
def test_hand_drawn_wins(game, picture, last, direction):
    """Player 1 (X) completes the line at ``last`` (row from the bottom, column)."""
    x_count = sum(row.count("X") for row in picture)
    o_count = sum(row.count("O") for row in picture)
    starting_player = 1 if x_count > o_count else 2
    states = play(game, realise(picture, starting_player, last=last), starting_player)
    assert not any(game.is_final(s) for s in states[:-1]), direction
    assert game.winner(states[-1]) == 1, direction
    assert naive_winner(grid_of(game, states[-1])) == {1}


# ---- no false wins --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "picture, reason",
    [
        (["......."] * 5 + ["XXX.OOO"], "three in a row and three in a row"),
        (["......."] * 3 + ["X.....O", "X.OO..O", "X.XXX.O"], "three high, three across, with a gap"),
        (["......."] * 4 + ["XX.....", "OO.O.XX"], "four split across rows 0 and 1 (neighbours in row-major order)"),
        (["X......", "X......", "X......", "O......", "O.....O", "XX...OO"], "three at a column's top, one at the next's bottom"),
        (["X......", "X......", "OO.....", "XO.....", "OX....O", "XX....O"], "two at a column's top, two at the next's bottom"),
        (["XO....O", "XO....X", "OX....X", "OX....O", "XO...OX", "XOXOXOO"], "stones around the board's edges"),
    ],
)
def test_no_false_wins(game, picture, reason):
    x_count = sum(row.count("X") for row in picture)
    o_count = sum(row.count("O") for row in picture)
    if abs(x_count - o_count) > 1:
        pytest.fail(f"bad picture {reason}")
    starting_player = 1 if x_count >= o_count else 2
    states = play(game, realise(picture, starting_player), starting_player)
    assert naive_winner(grid_of(game, states[-1])) == set(), reason
    for s in states:
        assert game.winner(s) is None, reason


def test_the_shift_and_test_is_exact_on_every_four_cells():
    """A bitboard holds a line iff some 4 of its stones do, so checking every set of four
    cells proves ``has_line`` exact: no line across a column's top into the next column
    (the always-empty guard bit), none past the board's edges."""
    from itertools import combinations

    from hexzero.games.connect4 import has_line

    height = ROWS + 1
    lines = {frozenset(line) for line in all_lines()}
    cells = [(r, c) for r in range(ROWS) for c in range(COLUMNS)]
    bit = {(r, c): 1 << (c * height + r) for r, c in cells}
    found = 0
    for four in combinations(cells, 4):
        stones = bit[four[0]] | bit[four[1]] | bit[four[2]] | bit[four[3]]
        if has_line(stones, height):
            assert frozenset(four) in lines, four
            found += 1
    assert found == len(lines)


def test_random_games_agree_with_the_naive_checker(game):
    rng = random.Random(4)
    for starting_player in (1, 2):
        for _ in range(150):
            state = game.initial_state(starting_player)
            grid = [[0] * COLUMNS for _ in range(ROWS)]
            player = starting_player
            while True:
                winners = naive_winner(grid)
                full = all(grid[ROWS - 1][c] for c in range(COLUMNS))
                assert game.winner(state) == (next(iter(winners)) if winners else None)
                assert game.is_final(state) == bool(winners or full)
                assert grid_of(game, state) == grid
                if game.is_final(state):
                    assert game.legal_actions(state) == []
                    break
                assert game.current_player(state) == player
                assert game.legal_actions(state) == [c for c in range(COLUMNS) if not grid[ROWS - 1][c]]
                column = rng.choice(game.legal_actions(state))
                drop(grid, column, player)
                state = game.next_state(state, column)
                player = 3 - player


# ---- draws --------------------------------------------------------------------------------------------
def draw_order():
    """A full board with no line: each column alternates from the bottom, starting with
    X X O O X X O across row 0 (so no run of four in any direction)."""
    order = []
    for a, b in ((0, 2), (1, 3), (4, 6)):  # an X-first column beside an O-first column
        order += [a, b, b, a] * 3
    return order + [5] * 6


@pytest.mark.parametrize("starting_player", [1, 2])
def test_a_full_board_without_a_line_is_a_draw(game, starting_player):
    order = draw_order()
    states = play(game, order, starting_player)
    final = states[-1]
    assert len(order) == ROWS * COLUMNS
    assert not any(game.is_final(s) for s in states[:-1])
    assert game.is_final(final) and game.winner(final) is None
    assert game.legal_actions(final) == []
    assert "draw" in game.render(final)
    assert game.playout(final, random.Random(0)) is None
    with pytest.raises(IllegalMoveError, match="draw"):
        game.next_state(final, 0)
    # the board is the pattern described: every column alternates, row 0 as X X O O X X O
    board = game.board(final)
    first = 1 if starting_player == 1 else 2
    assert [int(v) for v in board[0]] == [first if ch == "X" else 3 - first for ch in "XXOOXXO"]
    assert (board[1:] != board[:-1]).all()


# ---- illegal moves, players, parameters -------------------------------------------------------
def test_illegal_moves_are_refused_and_change_nothing(game):
    state = play(game, [2] * 6)[-1]  # column 3 full, nobody has won (alternating stones)
    before = state
    for bad, reason in [(2, "column 3 is full"), (7, "not a column"), (-1, "not a column"), ("3", "not a column"), (True, "not a column")]:
        with pytest.raises(IllegalMoveError, match=reason):
            game.next_state(state, bad)
    assert state == before and 2 not in game.legal_actions(state)
    won = play(game, [0, 1, 0, 1, 0, 1, 0])[-1]
    with pytest.raises(IllegalMoveError, match="over: player 1 has won"):
        game.next_state(won, 3)
    assert game.next_state(state, np.int64(3)) == game.next_state(state, 3)


def test_either_player_may_start(game):
    for first in (1, 2):
        states = play(game, [3, 4, 3, 4, 3, 4, 3], first)
        assert [game.current_player(s) for s in states[:3]] == [first, 3 - first, first]
        assert game.winner(states[-1]) == first
    with pytest.raises(ValueError, match="starting_player"):
        game.initial_state(3)


def test_states_are_hashable_and_equal_by_position(game):
    a = play(game, [0, 1, 2])[-1]
    b = play(game, [2, 1, 0])[-1]
    assert a == b and hash(a) == hash(b)
    assert len({a, b, game.initial_state()}) == 2


@pytest.mark.parametrize(
    "params, problem",
    [({"rows": 3}, "rows"), ({"columns": 17}, "columns"), ({"rows": "6"}, "rows"), ({"columns": True}, "columns"),
     ({"size": 7}, "size"), ({"rows": 6.0}, "rows")],
)
def test_bad_parameters_are_refused(params, problem):
    with pytest.raises(ValueError, match=problem):
        mctsfw.make_game("connect4", **params)


def test_other_board_sizes():
    game = mctsfw.make_game("connect4", rows=5, columns=4)
    assert game.num_actions == 4 and game.params() == {"rows": 5, "columns": 4}
    states = play(game, [0, 0, 1, 1, 2, 2, 3])
    assert game.winner(states[-1]) == 1
    assert game.encode(states[-1]).shape == (2 * 20 + 2,)
    assert game.encode_planes(states[-1]).shape == (5, 4, 4)
    tall = mctsfw.make_game("connect4", rows=9, columns=9)
    states = play(tall, [8, 7] * 3 + [8])
    assert tall.winner(states[-1]) == 1 and tall.board(states[-1])[3, 8] == 1


# ---- encodings and symmetry -------------------------------------------------------------------------
def test_flat_and_plane_encodings(game):
    state = play(game, [3, 3, 0])[-1]  # X at (0,3), O at (1,3), X at (0,0); player 2 to move
    x = game.encode(state)
    n = ROWS * COLUMNS
    assert x.dtype == np.float32 and x.shape == (2 * n + 2,)
    assert np.flatnonzero(x[:n]).tolist() == [0 * COLUMNS + 0, 0 * COLUMNS + 3]  # row 0 is the bottom
    assert np.flatnonzero(x[n : 2 * n]).tolist() == [1 * COLUMNS + 3]
    assert x[-2:].tolist() == [0.0, 1.0]
    planes = game.encode_planes(state)
    assert planes.dtype == np.float32 and planes.shape == (ROWS, COLUMNS, 4)
    assert (planes[:, :, 0].ravel() == x[:n]).all() and (planes[:, :, 1].ravel() == x[n : 2 * n]).all()
    assert (planes[:, :, 2] == 0).all() and (planes[:, :, 3] == 1).all()
    assert game.encode(game.initial_state())[-2:].tolist() == [1.0, 0.0]


def test_mirror_symmetry(game):
    state = play(game, [0, 1, 1, 5, 6])[-1]
    mirrored = play(game, [6, 5, 5, 1, 0])[-1]
    target = np.arange(COLUMNS, dtype=np.float32) / 21
    cases = game.symmetries(game.encode(state), target)
    assert len(cases) == 2
    assert (cases[0][0] == game.encode(state)).all() and (cases[0][1] == target).all()
    assert (cases[1][0] == game.encode(mirrored)).all()
    assert cases[1][1].tolist() == target[::-1].tolist()
    plane_cases = game.symmetries(game.encode_planes(state), target)
    assert (plane_cases[1][0] == game.encode_planes(mirrored)).all()
    assert plane_cases[1][1].tolist() == target[::-1].tolist()


# ---- playouts -----------------------------------------------------------------------------------------
def test_playout_results_are_consistent_with_stepping(game):
    state = play(game, [0, 1, 0, 1, 0, 1])[-1]  # X has three in column 1 and is to move
    assert all(game.playout(state, random.Random(s), choose=lambda st: 0) == 1 for s in range(3))
    for seed in range(20):
        result = game.playout(state, random.Random(seed))
        assert result in (1, 2, None)
    # a won state returns its winner; playouts with ``choose`` step through next_state
    won = game.next_state(state, 0)
    assert game.playout(won, random.Random(0)) == 1
    # the fast playouts and the base class's stepping playouts agree in distribution
    for moves in ([], [3, 3, 2]):
        start = play(game, moves)[-1]
        n = 3000
        fast = [game.playout(start, random.Random(i)) for i in range(n)]
        slow = [Game.playout(game, start, random.Random(10**6 + i)) for i in range(n)]
        for outcome in (1, 2):
            p, q = fast.count(outcome) / n, slow.count(outcome) / n
            assert abs(p - q) < 5 * (0.25 / n * 2) ** 0.5, (moves, outcome, p, q)


def test_playout_with_few_cells_left_matches_every_order(game):
    """From the draw board with its last cells taken away, each playout's result is one
    that stepping through the remaining moves can reach, and each reachable one appears."""
    order = draw_order()
    for removed in (1, 2, 3, 4):
        prefix = order[: len(order) - removed]
        state = play(game, prefix)[-1]

        possible = reachable_winners(game, state)
        seen = {game.playout(state, random.Random(seed)) for seed in range(60)}
        assert seen == possible, (removed, seen, possible)


def test_playout_batch_works(game):
    states = [play(game, [3])[-1], play(game, [0, 6, 0])[-1]]
    results = game.playout_batch(states, random.Random(1))
    assert len(results) == 2 and all(r in (1, 2, None) for r in results)


# ---- people -------------------------------------------------------------------------------------------
def test_parse_action_and_text(game):
    state = play(game, [2] * 6)[-1]
    assert game.parse_action("4", state) == 3
    assert game.parse_action(" column 1 ", state) == 0
    assert game.action_to_text(3) == "column 4"
    assert "1 to 7" in game.move_help
    for bad, reason in [("3", "column 3 is full"), ("8", "no column 8"), ("0", "no column 0"), ("x", "cannot read"),
                        ("", "cannot read"), ("-2", "no column -2")]:
        with pytest.raises(IllegalMoveError, match=reason):
            game.parse_action(bad, state)
    won = play(game, [0, 1, 0, 1, 0, 1, 0])[-1]
    with pytest.raises(IllegalMoveError, match="over"):
        game.parse_action("4", won)


def test_render(game):
    states = play(game, [3, 3, 4])
    text = game.render(states[-1])
    lines = text.splitlines()
    assert lines[ROWS - 1].split() == [".", ".", ".", "X", "X", ".", "."]  # the bottom row, last of the board
    assert lines[ROWS - 2].split() == [".", ".", ".", "O", ".", ".", "."]
    assert lines[ROWS].split() == [str(c) for c in range(1, 8)]
    assert "player 2 (O) to move" in text
    won = play(game, [3, 3, 4, 4, 5, 5, 6])[-1]
    assert "player 1 (X) has won" in game.render(won)


def test_registered_and_gif_frames(game, tmp_path):
    from PIL import Image

    from hexzero.mctsfw.match import play_game
    from hexzero.plugins.gif import PAINTERS, GifDisplay

    assert mctsfw.default_registries().games.get("connect4") is type(game)
    assert "connect4" in PAINTERS
    actors = {1: mctsfw.make_actor("mcts", game, search_games=20, seed=0), 2: mctsfw.make_actor("random", game, seed=1)}
    gif = GifDisplay(title="mcts vs random")
    record = play_game(game, actors, display=gif)
    path = gif.save(tmp_path / "c4.gif")
    with Image.open(path) as image:
        assert image.n_frames == len(record.states)
    last = gif.frames()[-1]
    colours = {c for _, c in last.getcolors(1 << 16)}
    assert (25, 80, 190) in colours and (214, 39, 40) in colours  # the blue board, a red X disc
