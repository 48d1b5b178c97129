"""NIM's kernels for the array search (numba): the rules of ``games.nim`` on a row of piles.

A position is a row of int8 piles (``Nim.piles`` long) and two int64 entries: the player
to move and the stones left. An action is ``pile * cap + take - 1`` as ``Nim`` numbers
them. ``NimKernels`` (``Nim.kernels()``) calls them once a round;
``tests/test_array_search.py`` holds them to the game's rules.
"""

from __future__ import annotations

import numpy as np

from hexzero.mctsfw.jit import njit
from hexzero.mctsfw.search.arrays import LOSS, UNKNOWN, WIN, rng_below
from hexzero.mctsfw.search.kernels import GameKernels

TO_MOVE, LEFT = 0, 1


@njit(cache=True)
def positions(parent, action, slot, player, proven, depth, board, aux, states, leaves, batch, cap, misere):
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
            board[g, dst] = board[g, src]
            pile, take = action[g, node] // cap, action[g, node] % cap + 1
            board[g, dst, pile] -= take
            who = aux[g, src, TO_MOVE]
            aux[g, dst, TO_MOVE] = 3 - who
            aux[g, dst, LEFT] = aux[g, src, LEFT] - take
            if aux[g, dst, LEFT] == 0:  # the mover took the last stone: a win, or a loss in misere play
                player[g, node], proven[g, node], depth[g, node] = 0, LOSS if misere else WIN, 0
            else:
                player[g, node] = 3 - who


@njit(cache=True)
def moves(slot, board, leaves, judged, masks, cap):
    """The legal moves of each judged leaf: every take of 1 to min(pile, cap) from a pile."""
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            row, mask = board[g, slot[g, leaves[g, b]]], masks[g, b]
            for p in range(row.shape[0]):
                for t in range(cap):
                    mask[p * cap + t] = t < row[p]


@njit(cache=True)
def playouts(slot, board, aux, leaves, judged, rng, cap, misere, values):
    """A random playout from each judged leaf, every legal move alike likely
    (``Nim.playout``); ``values`` the result for the player to move."""
    piles = np.empty(board.shape[2], np.int64)
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            s = slot[g, leaves[g, b]]
            first = aux[g, s, TO_MOVE]
            total = 0
            for p in range(piles.shape[0]):
                piles[p] = board[g, s, p]
                total += min(piles[p], cap)
            who = first
            while total:
                k = rng_below(rng, g, total)
                p = 0
                while k >= min(piles[p], cap):
                    k -= min(piles[p], cap)
                    p += 1
                total -= min(piles[p], cap)
                piles[p] -= k + 1
                total += min(piles[p], cap)
                who = 3 - who
            last_taker = 3 - who
            winner = 3 - last_taker if misere else last_taker
            values[g, b] = 1.0 if winner == first else 0.0


@njit(cache=True)
def encode(slot, board, aux, leaves, judged, start, out):
    """``Nim.encode`` of each judged leaf: each pile over its starting size, who moves (1, 2)."""
    n = start.shape[0]
    k = 0
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            s = slot[g, leaves[g, b]]
            for p in range(n):
                out[k, p] = board[g, s, p] / start[p]
            out[k, n] = 1.0 if aux[g, s, TO_MOVE] == 1 else 0.0
            out[k, n + 1] = 1.0 if aux[g, s, TO_MOVE] == 2 else 0.0
            k += 1


class NimKernels(GameKernels):
    """``Nim``'s kernels for the array search (``mctsfw.search.kernels``)."""

    aux_len = 2
    encodings = ("flat",)

    def __init__(self, game):
        self.game = game
        self.cap, self.misere = game.cap, game.misere
        self.state_len = len(game.piles)
        self.num_actions = game.num_actions
        self.max_depth = sum(game.piles)
        self.start = np.array(game.piles, np.float64)

    def set_root(self, tree, g: int, state) -> None:
        player, piles = state
        tree.clear(g)
        tree.board[g, 0] = piles
        tree.aux[g, 0, TO_MOVE], tree.aux[g, 0, LEFT] = player, sum(piles)
        tree.states[g], tree.slot[g, 0] = 1, 0
        final = not any(piles)
        tree.player[g, 0] = 0 if final else player
        tree.mover[g, 0] = 3 - player
        tree.proven[g, 0] = (LOSS if self.misere else WIN) if final else UNKNOWN

    def positions(self, tree, leaves, batch) -> None:
        positions(tree.parent, tree.action, tree.slot, tree.player, tree.proven, tree.depth, tree.board, tree.aux,
                  tree.states, leaves, batch, self.cap, self.misere)

    def moves(self, tree, leaves, judged, masks, forced, forced_move, plies, threats: bool) -> None:
        forced[:] = 0  # NIM declares no threats
        moves(tree.slot, tree.board, leaves, judged, masks, self.cap)

    def legal(self, tree, leaves, judged) -> np.ndarray:
        masks = np.zeros((*leaves.shape, self.num_actions), np.bool_)
        moves(tree.slot, tree.board, leaves, judged, masks, self.cap)
        return masks[judged].astype(np.float32)

    def playouts(self, tree, leaves, judged, rng) -> np.ndarray:
        values = np.zeros(leaves.shape, np.float64)
        playouts(tree.slot, tree.board, tree.aux, leaves, judged, rng, self.cap, self.misere, values)
        return values

    def encode(self, tree, leaves, judged, kind: str) -> np.ndarray:
        out = np.empty((int(judged.sum()), self.state_len + 2), np.float32)
        encode(tree.slot, tree.board, tree.aux, leaves, judged, self.start, out)
        return out

    def state(self, tree, g: int, node: int):
        s = int(tree.slot[g, node])
        return (int(tree.aux[g, s, TO_MOVE]), tuple(int(p) for p in tree.board[g, s]))
