"""Connect Four's kernels for the array search (numba): the rules of ``games.connect4``
on an int8 board.

A position is a row of ``rows*columns`` int8 cells in ``ConnectFour.encode``'s order (row
by row, row 0 at the bottom; 0 empty, 1 and 2 the players' stones) and int64 entries: the
player to move, the winner (0 while the game runs and for a draw), the stones on the
board, then each column's height. A move that makes four is found by counting the mover's
stones on the four lines through it. ``ConnectFourKernels`` (``ConnectFour.kernels()``)
calls them once a round; ``tests/test_array_search.py`` holds them to the game's rules.
"""

from __future__ import annotations

import numpy as np

from hexzero.mctsfw.jit import njit
from hexzero.mctsfw.search.arrays import DRAW, LOST_IN_2, SEARCH, UNKNOWN, WIN, WINS_NOW, rng_below
from hexzero.mctsfw.search.kernels import GameKernels, encode_stones

TO_MOVE, WINNER, STONES, HEIGHTS = 0, 1, 2, 3
LINE = 4
DR = np.array([0, 1, 1, 1], np.int64)  # across, up, the two diagonals
DC = np.array([1, 0, 1, -1], np.int64)
ONE = np.uint64(1)


@njit(cache=True, _nrt=False)
def _fours(row, rows, columns, r, c, who):
    """Whether a stone of ``who`` at (r, c) (on the board already, or not) makes four."""
    for d in range(4):
        run = 1
        for sign in (1, -1):
            rr, cc = r + sign * DR[d], c + sign * DC[d]
            while 0 <= rr < rows and 0 <= cc < columns and row[rr * columns + cc] == who:
                run += 1
                rr += sign * DR[d]
                cc += sign * DC[d]
        if run >= LINE:
            return True
    return False


@njit(cache=True)
def positions(parent, action, slot, player, proven, depth, board, aux, states, leaves, batch, rows, columns):
    """Each leaf without a position gets it: its parent's with its move played."""
    for g in range(leaves.shape[0]):
        for b in range(batch[g]):
            node = leaves[g, b]
            if slot[g, node] >= 0:
                continue
            src = slot[g, parent[g, node]]
            dst = states[g]
            states[g] = dst + 1
            slot[g, node] = dst
            row = board[g, dst]
            row[:] = board[g, src]
            aux[g, dst] = aux[g, src]
            c = action[g, node]
            r = aux[g, dst, HEIGHTS + c]
            who = aux[g, src, TO_MOVE]
            row[r * columns + c] = who
            aux[g, dst, HEIGHTS + c] = r + 1
            aux[g, dst, STONES] += 1
            aux[g, dst, TO_MOVE] = 3 - who
            if _fours(row, rows, columns, r, c, who):
                aux[g, dst, WINNER] = who
                player[g, node], proven[g, node], depth[g, node] = 0, WIN, 0
            elif aux[g, dst, STONES] == rows * columns:
                player[g, node], proven[g, node], depth[g, node] = 0, DRAW, 0
            else:
                player[g, node] = 3 - who


@njit(cache=True, _nrt=False)
def _completing(row, aux_row, rows, columns, who, out):
    """The columns whose next stone makes four for ``who``, in ``out``; how many."""
    found = 0
    for c in range(columns):
        r = aux_row[HEIGHTS + c]
        out[c] = r < rows and _fours(row, rows, columns, r, c, who)
        found += out[c]
    return found


@njit(cache=True)
def moves(slot, board, aux, leaves, judged, masks, forced, forced_move, threats, rows, columns):
    """The open columns of each judged leaf; with ``threats`` the forcing ones
    (``ConnectFour.forcing_actions``): a column where the player to move makes four wins at
    once (the first); else the columns where the opponent would must be taken, and where
    each of them leaves the opponent another the leaf is lost in 2 (the first)."""
    mine, theirs, after = np.empty(columns, np.bool_), np.empty(columns, np.bool_), np.empty(columns, np.bool_)
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            forced[g, b] = SEARCH
            if not judged[g, b]:
                continue
            s = slot[g, leaves[g, b]]
            row, aux_row = board[g, s], aux[g, s]
            mask = masks[g, b]
            for c in range(columns):
                mask[c] = aux_row[HEIGHTS + c] < rows
            if not threats or aux_row[STONES] < 5:  # nobody has three stones yet
                continue
            who = aux_row[TO_MOVE]
            if _completing(row, aux_row, rows, columns, who, mine):
                for c in range(columns):
                    if mine[c]:
                        forced[g, b], forced_move[g, b] = WINS_NOW, c
                        break
                continue
            if not _completing(row, aux_row, rows, columns, 3 - who, theirs):
                continue
            alive, first = 0, -1
            for c in range(columns):
                mask[c] = False
                if not theirs[c]:
                    continue
                if first < 0:
                    first = c
                r = aux_row[HEIGHTS + c]
                row[r * columns + c] = who  # the stop, then does the opponent make four at once?
                aux_row[HEIGHTS + c] = r + 1
                full = aux_row[STONES] + 1 == rows * columns
                if full or not _completing(row, aux_row, rows, columns, 3 - who, after):
                    mask[c] = True
                    alive += 1
                aux_row[HEIGHTS + c] = r
                row[r * columns + c] = 0
            if alive == 0:
                forced[g, b], forced_move[g, b] = LOST_IN_2, first


@njit(cache=True, _nrt=False)
def legal(slot, aux, leaves, judged, rows, columns, out):
    """The open columns of each judged leaf as float32 rows (``Game.legal_masks``)."""
    k = 0
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if judged[g, b]:
                s = slot[g, leaves[g, b]]
                for c in range(columns):
                    out[k, c] = 1.0 if aux[g, s, HEIGHTS + c] < rows else 0.0
                k += 1


@njit(cache=True, _nrt=False)
def _has_four(own, h):
    """Whether the bitboard ``own`` (``ConnectFour``'s layout: ``h`` = rows + 1 bits a column,
    bit ``c*h + r`` the cell at row r of column c) holds four in a row: the shift-and test
    along a column (1), a row (h) and the two diagonals (h + 1, h - 1)."""
    for d in (ONE, h, h + ONE, h - ONE):
        pairs = own & (own >> d)
        if pairs & (pairs >> (d + d)):
            return True
    return False


@njit(cache=True)
def playouts(slot, board, aux, leaves, judged, rng, rows, columns, values):
    """A random playout from each judged leaf (uniformly random open columns until four in
    a row or a full board, ``ConnectFour.playout``); ``values`` the result for the player
    to move (a draw 0.5). Where a column's cells and one more fit a 64-bit word (7 x 8 at
    most; the standard 6 x 7 takes 49 bits), the stones are two bitboards and four in a
    row the shift-and test, as ``ConnectFour.playout``; else the four lines through each
    new stone are walked on the board."""
    cells = rows * columns
    bits = (rows + 1) * columns <= 64
    h = np.uint64(rows + 1)
    row = np.empty(cells, np.int8)
    heights = np.empty(columns, np.int64)
    open_columns = np.empty(columns, np.int64)
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            s = slot[g, leaves[g, b]]
            first = aux[g, s, TO_MOVE]
            k = 0
            for c in range(columns):
                heights[c] = aux[g, s, HEIGHTS + c]
                if heights[c] < rows:
                    open_columns[k] = c
                    k += 1
            own, other = np.uint64(0), np.uint64(0)  # (bitboards: the player to move's stones, the other's)
            if bits:
                for p in range(cells):
                    if board[g, s, p] != 0:
                        bit = ONE << np.uint64((p % columns) * (rows + 1) + p // columns)
                        if board[g, s, p] == first:
                            own |= bit
                        else:
                            other |= bit
            else:
                row[:] = board[g, s]
            who, winner = first, 0
            while k > 0:
                i = rng_below(rng, g, k)
                c = open_columns[i]
                r = heights[c]
                heights[c] = r + 1
                if heights[c] == rows:
                    k -= 1
                    open_columns[i] = open_columns[k]
                if bits:
                    own |= ONE << np.uint64(c * (rows + 1) + r)
                    four = _has_four(own, h)
                    own, other = other, own
                else:
                    row[r * columns + c] = who
                    four = _fours(row, rows, columns, r, c, who)
                if four:
                    winner = who
                    break
                who = 3 - who
            values[g, b] = 0.5 if winner == 0 else 1.0 if winner == first else 0.0


@njit(cache=True, _nrt=False)
def encode_planes(slot, board, aux, leaves, judged, rows, columns, out):
    """``ConnectFour.encode_planes`` of each judged leaf: (rows, columns, 4) planes."""
    k = 0
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            s = slot[g, leaves[g, b]]
            row, who = board[g, s], aux[g, s, TO_MOVE]
            for r in range(rows):
                for c in range(columns):
                    v = row[r * columns + c]
                    out[k, r, c, 0] = 1.0 if v == 1 else 0.0
                    out[k, r, c, 1] = 1.0 if v == 2 else 0.0
                    out[k, r, c, 2] = 1.0 if who == 1 else 0.0
                    out[k, r, c, 3] = 1.0 if who == 2 else 0.0
            k += 1


class ConnectFourKernels(GameKernels):
    """``ConnectFour``'s kernels for the array search (``mctsfw.search.kernels``)."""

    encodings = ("flat", "planes")

    def __init__(self, game):
        self.game = game
        self.rows, self.columns = game.rows, game.columns
        self.state_len = self.max_depth = game.rows * game.columns
        self.aux_len = HEIGHTS + game.columns
        self.num_actions = game.columns

    def set_root(self, tree, g: int, state) -> None:
        player, ones, twos, winner = state
        cells = self.game.board(state).reshape(-1)
        tree.clear(g)
        tree.board[g, 0] = cells
        aux = tree.aux[g, 0]
        aux[TO_MOVE], aux[WINNER], aux[STONES] = player, winner, int((cells != 0).sum())
        aux[HEIGHTS:] = (cells.reshape(self.rows, self.columns) != 0).sum(axis=0)
        tree.states[g], tree.slot[g, 0] = 1, 0
        final = self.game.is_final(state)
        tree.player[g, 0] = 0 if final else player
        tree.mover[g, 0] = 3 - player
        tree.proven[g, 0] = (WIN if winner else DRAW) if final else UNKNOWN

    def positions(self, tree, leaves, batch) -> None:
        positions(tree.parent, tree.action, tree.slot, tree.player, tree.proven, tree.depth, tree.board, tree.aux,
                  tree.states, leaves, batch, self.rows, self.columns)

    def moves(self, tree, leaves, judged, masks, forced, forced_move, plies, threats: bool) -> None:
        moves(tree.slot, tree.board, tree.aux, leaves, judged, masks, forced, forced_move, threats, self.rows,
              self.columns)

    def legal(self, tree, leaves, judged) -> np.ndarray:
        out = np.empty((int(judged.sum()), self.columns), np.float32)
        legal(tree.slot, tree.aux, leaves, judged, self.rows, self.columns, out)
        return out

    def playouts(self, tree, leaves, judged, rng) -> np.ndarray:
        values = np.zeros(leaves.shape, np.float64)
        playouts(tree.slot, tree.board, tree.aux, leaves, judged, rng, self.rows, self.columns, values)
        return values

    def encode(self, tree, leaves, judged, kind: str) -> np.ndarray:
        count, rows, columns = int(judged.sum()), self.rows, self.columns
        if kind == "flat":
            out = np.empty((count, 2 * rows * columns + 2), np.float32)
            encode_stones(tree.slot, tree.board, tree.aux, leaves, judged, TO_MOVE, out)
        else:
            out = np.empty((count, rows, columns, 4), np.float32)
            encode_planes(tree.slot, tree.board, tree.aux, leaves, judged, rows, columns, out)
        return out

    def state(self, tree, g: int, node: int):
        s = int(tree.slot[g, node])
        cells = tree.board[g, s].reshape(self.rows, self.columns)
        h = self.game.height
        ones = sum(1 << int(r + c * h) for r, c in zip(*np.nonzero(cells == 1)))
        twos = sum(1 << int(r + c * h) for r, c in zip(*np.nonzero(cells == 2)))
        return (int(tree.aux[g, s, TO_MOVE]), ones, twos, int(tree.aux[g, s, WINNER]))
