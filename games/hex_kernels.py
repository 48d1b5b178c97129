"""Hex's kernels for the array search (numba): the rules of ``games.hex`` on an int8 board.

A position is a row of ``n*n`` int8 cells (0 empty, 1 and 2 the players' stones, in
action order) and four int64 entries: the player to move, the winner (0 while the game
runs), the stones on the board and how many pairing chains (``games.hex_pairing``) the
opponent of the player to move holds (-1: not known): a leaf whose parent saw none for its
player to move has none either, and is not walked again. A move that wins is found by a flood from the new
stone through the mover's stones; a playout gives the player to move a uniformly random
half (rounded up) of the empty cells, the other player the rest, and tests player 1's
connection once, as ``Hex.playout`` does. ``HexKernels`` (``Hex.kernels()``) calls them
once a round; ``tests/test_array_search.py`` holds them to ``games.hex`` move for move.
"""

from __future__ import annotations

import functools

import numpy as np

from hexzero.games.hex_pairing import defences, won_line
from hexzero.games.hex_pairing import scratch as pairing_scratch
from hexzero.games.hex_vc import must_play as vc_must_play
from hexzero.games.hex_vc import prune as vc_prune
from hexzero.games.hex_vc import won_line as vc_won_line
from hexzero.mctsfw.jit import njit
from hexzero.mctsfw.search.arrays import LOST_IN_2, SEARCH, UNKNOWN, WIN, WINS_NOW, rng_below
from hexzero.mctsfw.search.kernels import GameKernels, empty_cells, encode_stones

TO_MOVE, WINNER, STONES, CHAINS = 0, 1, 2, 3
#: the six neighbours (row, column) offsets of a cell
DR = np.array([-1, -1, 0, 0, 1, 1], np.int64)
DC = np.array([0, 1, -1, 1, -1, 0], np.int64)


@njit(cache=True, _nrt=False)
def _on_side(player, cell, n, end):
    """Whether ``cell`` lies on the player's start (``end`` False) or end side."""
    r, c = cell // n, cell % n
    line = r if player == 1 else c
    return line == (n - 1 if end else 0)


@njit(cache=True, _nrt=False)
def _joins(board, n, player, cell, stack, mark, stamp):
    """Whether the group of ``player`` through ``cell`` touches both of the player's sides."""
    stack[0] = cell
    top = 1
    mark[cell] = stamp
    start = end = False
    while top > 0:
        top -= 1
        p = stack[top]
        if _on_side(player, p, n, False):
            start = True
        if _on_side(player, p, n, True):
            end = True
        if start and end:
            return True
        r, c = p // n, p % n
        for d in range(6):
            rr, cc = r + DR[d], c + DC[d]
            if 0 <= rr < n and 0 <= cc < n:
                q = rr * n + cc
                if board[q] == player and mark[q] != stamp:
                    mark[q] = stamp
                    stack[top] = q
                    top += 1
    return start and end


@functools.lru_cache(maxsize=None)
def neighbour_table(n: int) -> np.ndarray:
    """Each cell's six neighbours (-1 off the board), a row a cell (made once a size)."""
    table = np.full((n * n, 6), -1, np.int64)
    for cell in range(n * n):
        r, c = divmod(cell, n)
        for d in range(6):
            rr, cc = r + DR[d], c + DC[d]
            if 0 <= rr < n and 0 <= cc < n:
                table[cell, d] = rr * n + cc
    return table


@njit(cache=True, _nrt=False)
def _reach(board, n, player, end, reach, stack, nbr):
    """``reach[cell]`` set where a stone of ``player`` there touches (or lies on) the
    player's chain from one side (``end``: the far side), or the side itself: the player's
    stones connected to the side flooded, then every cell next to them."""
    reach[:] = 0
    top = 0
    line = n - 1 if end else 0
    for i in range(n):  # the side's cells: a row for player 1, a column for player 2
        p = line * n + i if player == 1 else i * n + line
        reach[p] = 1
        if board[p] == player:
            reach[p] = 2  # a stone of the chain
            stack[top] = p
            top += 1
    while top > 0:
        top -= 1
        p = stack[top]
        for d in range(6):
            q = nbr[p, d]
            if q < 0:
                continue
            if board[q] == player:
                if reach[q] != 2:
                    reach[q] = 2
                    stack[top] = q
                    top += 1
            elif reach[q] == 0:
                reach[q] = 1


@njit(cache=True, _nrt=False)
def _completing(board, n, player, out, near, far, stack, nbr):
    """The empty cells where one more stone of ``player`` joins its two sides, in ``out``
    (``Hex.completing_cells``); their number."""
    _reach(board, n, player, False, near, stack, nbr)
    _reach(board, n, player, True, far, stack, nbr)
    found = 0
    for p in range(n * n):
        out[p] = board[p] == 0 and near[p] != 0 and far[p] != 0
        found += out[p]
    return found


@njit(cache=True)
def positions(parent, action, slot, player, proven, depth, board, aux, states, leaves, batch, n):
    """Each leaf without a position gets it: its parent's with its move played."""
    stack = np.empty(n * n, np.int64)
    mark = np.zeros(n * n, np.int64)
    for g in range(leaves.shape[0]):
        for b in range(batch[g]):
            node = leaves[g, b]
            if slot[g, node] >= 0:
                continue
            src = slot[g, parent[g, node]]
            dst = states[g]
            states[g] = dst + 1
            slot[g, node] = dst
            row, cell = board[g, dst], action[g, node]
            row[:] = board[g, src]
            who = aux[g, src, TO_MOVE]
            row[cell] = who
            aux[g, dst, STONES] = aux[g, src, STONES] + 1
            aux[g, dst, TO_MOVE] = 3 - who
            aux[g, dst, CHAINS] = aux[g, src, CHAINS]  # (the parent's: ``moves`` reads it, then writes the leaf's)
            won = aux[g, dst, STONES] >= n and _joins(row, n, who, cell, stack, mark, dst + 1)
            aux[g, dst, WINNER] = who if won else 0
            if won:
                player[g, node], proven[g, node], depth[g, node] = 0, WIN, 0
            else:
                player[g, node] = 3 - who


@njit(cache=True)
def moves(slot, board, aux, leaves, judged, masks, forced, forced_move, plies, threats, pairing, vc, prune, n, nbr,
          ints, bits, line):
    """The moves the search considers at each judged leaf, as masks: the empty cells; with
    ``threats`` the forcing ones (``Hex.forcing_actions``): a cell that joins the player to
    move's sides wins at once (``forced`` WINS_NOW, the first such cell the move); else the
    cells that would join the opponent's must be taken, and where each of them leaves the
    opponent another the leaf is lost in 2 (``LOST_IN_2``, the first of them the move).
    Where neither, with ``pairing`` (``Hex.pairing``), the pairing connections
    (``Hex.forced_win``, ``Hex.threat_defences``):
    the player to move's wins (WINS_NOW, ``plies`` the line's length and 2), else only the
    cells of the opponent's chains masked (``ints``, ``bits`` and ``line``: ``hex_pairing``'s
    working arrays, a line's room). Where neither, with ``vc`` (``Hex.vc``), H-search's
    connections (``games.hex_vc``): the player to move's (WINS_NOW, ``plies`` the carrier's
    cells and 2), else where the pairing walk masked nothing the opponent's must-play cells.
    Then, with ``prune`` (``Hex.prune``), the moves into the cells fill-in fills for the
    player to move are left out (``hex_vc.prune``)."""
    cells = n * n
    mine, theirs = np.empty(cells, np.bool_), np.empty(cells, np.bool_)
    after = np.empty(cells, np.bool_)
    near, far = np.empty(cells, np.int8), np.empty(cells, np.int8)
    stack = np.empty(cells, np.int64)
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            forced[g, b] = SEARCH
            if not judged[g, b]:
                continue
            s = slot[g, leaves[g, b]]
            row = board[g, s]
            mask = masks[g, b]
            for p in range(cells):
                mask[p] = row[p] == 0
            if not threats:
                continue
            who = aux[g, s, TO_MOVE]
            parent_chains = aux[g, s, CHAINS]
            aux[g, s, CHAINS] = -1  # (unknown, unless the pairing walk below says)
            # (a chain across the board has at least n stones: with fewer than n - 1, no threat)
            if aux[g, s, STONES] >= n - 1:
                if _completing(row, n, who, mine, near, far, stack, nbr):
                    for p in range(cells):
                        if mine[p]:
                            forced[g, b], forced_move[g, b] = WINS_NOW, p
                            break
                    continue
                threatened = _completing(row, n, 3 - who, theirs, near, far, stack, nbr)
            else:
                threatened = False
            if not threatened:
                defended = False
                if pairing:
                    # (none for the player to move where, at the parent, the opponent's walk
                    # found none: the parent's move only took links away)
                    k = 0 if parent_chains == 0 else won_line(row, n, who, nbr, ints, bits, line)
                    if k:
                        forced[g, b], forced_move[g, b], plies[g, b] = WINS_NOW, line[0], k + 2
                        continue
                    aux[g, s, CHAINS] = defences(row, n, who, nbr, ints, bits, mask)
                    defended = aux[g, s, CHAINS] > 0
                if vc:
                    k = vc_won_line(row, n, who, nbr, line)
                    if k:
                        forced[g, b], forced_move[g, b], plies[g, b] = WINS_NOW, line[0], k + 2
                        continue
                    if not defended:
                        vc_must_play(row, n, 3 - who, nbr, mask)
                if prune:
                    vc_prune(row, n, who, nbr, mask)
                continue
            alive = 0
            first = -1
            for p in range(cells):
                mask[p] = False
                if theirs[p]:
                    if first < 0:
                        first = p
                    row[p] = who
                    if not _completing(row, n, 3 - who, after, near, far, stack, nbr):
                        mask[p] = True
                        alive += 1
                    row[p] = 0
            if alive == 0:
                forced[g, b], forced_move[g, b] = LOST_IN_2, first


@njit(cache=True)
def playouts(slot, board, aux, leaves, judged, rng, n, values):
    """A random playout from each judged leaf: the player to move gets a uniformly random
    half (rounded up) of the empty cells, the other the rest; ``values`` the result for
    the player to move."""
    cells = n * n
    fill = np.empty(cells, np.int8)
    empty = np.empty(cells, np.int64)
    stack = np.empty(cells, np.int64)
    mark = np.zeros(cells, np.int64)
    stamp = 0
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            s = slot[g, leaves[g, b]]
            row = board[g, s]
            who = aux[g, s, TO_MOVE]
            k = 0
            for p in range(cells):
                fill[p] = row[p]
                if row[p] == 0:
                    empty[k] = p
                    k += 1
            share = (k + 1) // 2
            # a random share of the empty cells: a partial Fisher-Yates draw of `share` of them
            for i in range(share):
                j = i + rng_below(rng, g, k - i)
                empty[i], empty[j] = empty[j], empty[i]
                fill[empty[i]] = who
            for i in range(share, k):
                fill[empty[i]] = 3 - who
            stamp += 1
            won = False  # player 1 joins rows 0 and n-1: a flood from row 0
            for c in range(n):
                if fill[c] == 1 and mark[c] != stamp and _joins(fill, n, 1, c, stack, mark, stamp):
                    won = True
                    break
            winner = 1 if won else 2
            values[g, b] = 1.0 if winner == who else 0.0


@njit(cache=True, _nrt=False)
def encode_planes(slot, board, aux, leaves, judged, n, out):
    """``Hex.encode_planes`` of each judged leaf: (n, n, 6) planes."""
    k = 0
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            s = slot[g, leaves[g, b]]
            row = board[g, s]
            who = aux[g, s, TO_MOVE]
            for r in range(n):
                for c in range(n):
                    v = row[r * n + c]
                    out[k, r, c, 0] = 1.0 if v == 1 else 0.0
                    out[k, r, c, 1] = 1.0 if v == 2 else 0.0
                    out[k, r, c, 2] = 1.0 if who == 1 else 0.0
                    out[k, r, c, 3] = 1.0 if who == 2 else 0.0
                    out[k, r, c, 4] = 1.0 if r == 0 or r == n - 1 else 0.0
                    out[k, r, c, 5] = 1.0 if c == 0 or c == n - 1 else 0.0
            k += 1


class HexKernels(GameKernels):
    """``Hex``'s kernels for the array search (``mctsfw.search.kernels``)."""

    aux_len = 4
    encodings = ("flat", "planes")
    threat_search = True  # the pairing connections (``games.hex_pairing``), H-search's (``games.hex_vc``)

    def __init__(self, game):
        self.game = game
        self.n = game.size
        self.state_len = self.num_actions = self.max_depth = game.size * game.size
        self.neighbours = neighbour_table(game.size)
        self.pairing = pairing_scratch(game.size)  # (``moves``' working arrays, made once)
        self.line = np.empty(game.size * game.size + 1, np.int64)

    def set_root(self, tree, g: int, state) -> None:
        player, _, _, winner = state
        cells = self.game.boards([state])[0]
        tree.clear(g)
        tree.board[g, 0] = cells
        tree.aux[g, 0, TO_MOVE], tree.aux[g, 0, WINNER], tree.aux[g, 0, STONES] = player, winner, int((cells != 0).sum())
        tree.aux[g, 0, CHAINS] = -1  # (the opponent's pairing chains: unknown until ``moves``)
        tree.states[g] = 1
        tree.slot[g, 0] = 0
        tree.player[g, 0] = 0 if winner else player
        tree.mover[g, 0] = 3 - player
        tree.proven[g, 0] = WIN if winner else UNKNOWN

    def positions(self, tree, leaves, batch) -> None:
        positions(tree.parent, tree.action, tree.slot, tree.player, tree.proven, tree.depth, tree.board, tree.aux,
                  tree.states, leaves, batch, self.n)

    def moves(self, tree, leaves, judged, masks, forced, forced_move, plies, threats: bool) -> None:
        moves(tree.slot, tree.board, tree.aux, leaves, judged, masks, forced, forced_move, plies, threats,
              self.game.pairing, self.game.vc, self.game.prune, self.n, self.neighbours, *self.pairing, self.line)

    def legal(self, tree, leaves, judged) -> np.ndarray:
        out = np.empty((int(judged.sum()), self.num_actions), np.float32)
        empty_cells(tree.slot, tree.board, leaves, judged, out)
        return out

    def playouts(self, tree, leaves, judged, rng) -> np.ndarray:
        values = np.zeros(leaves.shape, np.float64)
        playouts(tree.slot, tree.board, tree.aux, leaves, judged, rng, self.n, values)
        return values

    def encode(self, tree, leaves, judged, kind: str) -> np.ndarray:
        count, n = int(judged.sum()), self.n
        if kind == "flat":
            out = np.empty((count, 2 * n * n + 2), np.float32)
            encode_stones(tree.slot, tree.board, tree.aux, leaves, judged, TO_MOVE, out)
        else:
            out = np.empty((count, n, n, 6), np.float32)
            encode_planes(tree.slot, tree.board, tree.aux, leaves, judged, n, out)
        return out

    def state(self, tree, g: int, node: int):
        s = int(tree.slot[g, node])
        row = tree.board[g, s]
        ones = sum(1 << int(p) for p in np.flatnonzero(row == 1))
        twos = sum(1 << int(p) for p in np.flatnonzero(row == 2))
        return (int(tree.aux[g, s, TO_MOVE]), ones, twos, int(tree.aux[g, s, WINNER]))

