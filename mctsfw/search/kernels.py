"""What a game gives the array search: compiled kernels over a fixed-size state.

A game that offers them returns a ``GameKernels`` from ``Game.kernels()``; a game that
does not (the default: a user's plugin, the tictactoe example) plays on the object search
exactly as before. Each method is one compiled call over a whole round's leaves of a
lock-step group (``leaves[g, b]``: node indices of tree g of an ``ArrayTree``), never a
call a node:

- ``set_root(tree, g, state)``: tree g's node 0 holds ``state`` (a Python state);
- ``rooted(tree, g, state)``: tree g's root is ``state`` (set, or a kept subtree's): kept
  in ``tree.root_states``, and by a game that keeps data of the root's own (Go its
  earlier boards, Gomoku its last moves) in arrays of its own on the tree;
- ``positions(tree, leaves, batch)``: each leaf without a position gets it, from its
  parent's and its move: the player to move, and a final position's result (``proven``);
- ``legal(tree, leaves, judged)``: the legal moves of each judged leaf as float32 rows
  (``Game.legal_masks``), which a network's priors are masked with;
  ``legal_after_moves(tree, leaves, judged, masks)`` asks it after ``moves`` wrote the
  round's masks, which a game whose search moves are its legal moves (Go: all but pass)
  reads instead of finding them again;
- ``moves(tree, leaves, judged, masks, forced, forced_move, plies, threats)``: the moves
  the search considers at each judged leaf, as a mask over the actions; with ``threats``,
  the game's forcing moves (``MCTS.forced_for``): where a move wins at once ``forced`` says
  so (``arrays.WINS_NOW``, the first winning move in ``forced_move``), where every stop of
  the opponent's win leaves another it says ``LOST_IN_2`` (the first stop), and otherwise
  only the stopping moves are masked (the search proves the first two, ``arrays.expand``);
  a game with a threat search of its own (``threat_search``: Gomoku's, Hex's pairing
  connections) also says ``WINS_NOW`` where it finds a forced win, in ``plies`` to the end
  (0 leaves it: 1 for a win at once, 2 for a loss in 2), and masks the defences to a
  threat where the opponent has one;
- ``playouts(tree, leaves, judged, rng)``: the result of a random playout from each
  judged leaf for its player to move (1 a win, 0.5 a draw, 0 a loss);
- ``encode(tree, leaves, judged, kind)``: the network's input for each judged leaf, as
  ``Game.encode`` ("flat") or ``Game.encode_planes`` ("planes") gives it, row for row;
- ``state(tree, g, node)``: the Python state of a node that has a position (by default
  the root's with the path's moves played).

Each game's kernels are tested equal to its Python methods, move for move.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class GameKernels:
    """A game's compiled kernels for the array search (see the module's text)."""

    #: the int8 and int64 entries of a state's row in an ``ArrayTree``
    state_len: int = 0
    aux_len: int = 1
    num_actions: int = 0
    #: the longest a descent can be: the most moves a game has (a path holds that many nodes)
    max_depth: int = 0
    #: the network inputs ``encode`` can give ("flat": ``Game.encode``, "planes": ``encode_planes``)
    encodings: tuple[str, ...] = ()
    #: whether ``moves`` runs the game's threat search (``Game.forced_win`` at a new node,
    #: ``Game.threat_defences``); a game that has one and kernels without it stay on objects
    threat_search: bool = False

    def set_root(self, tree: Any, g: int, state: Any) -> None:
        raise NotImplementedError

    def rooted(self, tree: Any, g: int, state: Any) -> None:
        if getattr(tree, "root_states", None) is None or len(tree.root_states) != tree.trees:
            tree.root_states = [None] * tree.trees
        tree.root_states[g] = state

    def positions(self, tree: Any, leaves: np.ndarray, batch: np.ndarray) -> None:
        raise NotImplementedError

    def legal(self, tree: Any, leaves: np.ndarray, judged: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def legal_after_moves(self, tree: Any, leaves: np.ndarray, judged: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.legal(tree, leaves, judged)

    def moves(self, tree: Any, leaves: np.ndarray, judged: np.ndarray, masks: np.ndarray, forced: np.ndarray,
              forced_move: np.ndarray, plies: np.ndarray, threats: bool) -> None:
        raise NotImplementedError

    def playouts(self, tree: Any, leaves: np.ndarray, judged: np.ndarray, rng: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def encode(self, tree: Any, leaves: np.ndarray, judged: np.ndarray, kind: str) -> np.ndarray:
        raise NotImplementedError

    def state(self, tree: Any, g: int, node: int) -> Any:
        path = []
        while node > 0:
            path.append(int(tree.action[g, node]))
            node = int(tree.parent[g, node])
        state = tree.root_states[g]
        for action in reversed(path):
            state = self.game.next_state(state, action)
        return state


# ---- kernels many games share -----------------------------------------------------------------
from hexzero.mctsfw.jit import njit  # noqa: E402


@njit(cache=True)
def encode_stones(slot, board, aux, leaves, judged, to_move, out):
    """The flat encoding of boards of cells 0, 1 and 2 (``Game.encode`` of Hex, Connect
    Four): player 1's stones, player 2's, then who moves (1, 2), read from ``aux[to_move]``."""
    cells = board.shape[2]
    k = 0
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            s = slot[g, leaves[g, b]]
            row = board[g, s]
            for p in range(cells):
                out[k, p] = 1.0 if row[p] == 1 else 0.0
                out[k, cells + p] = 1.0 if row[p] == 2 else 0.0
            who = aux[g, s, to_move]
            out[k, 2 * cells] = 1.0 if who == 1 else 0.0
            out[k, 2 * cells + 1] = 1.0 if who == 2 else 0.0
            k += 1


@njit(cache=True)
def empty_cells(slot, board, leaves, judged, out):
    """The empty cells of each judged leaf's board as float32 rows (the legal moves of a
    game whose moves are its cells: Hex, Gomoku)."""
    k = 0
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if judged[g, b]:
                row = board[g, slot[g, leaves[g, b]]]
                for p in range(row.shape[0]):
                    out[k, p] = 1.0 if row[p] == 0 else 0.0
                k += 1
