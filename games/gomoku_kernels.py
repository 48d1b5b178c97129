"""Gomoku's kernels for the array search (numba): the rules of ``games.gomoku`` on an int8
board, and its threats where the object search asks for them.

A position is a row of ``size*size`` int8 cells in action order (row 0 at the top; 0
empty, 1 and 2 the players' stones) and four int64 entries: the player to move, the
winner (0 while the game runs and for a draw), the stones on the board and the last move
(-1 at the start). A move that makes ``connect`` in a row (exactly that many with
``exactly_five``) is found by counting the mover's stones along the four lines through it.

The threats at a leaf are ``MCTS.forced_for``'s: a cell that completes a line for the
player to move wins at once; else the opponent's such cells must be taken (lost in 2
where each leaves another); else, in freestyle, a victory by continuous fours proves the
leaf won (``gomoku_threats.forced_fours_on``, the compiled search ``Gomoku.forced_win``
calls, on its padded board), and where the opponent has a three only its answers are
searched (``gomoku_threats.defences_marked``: both players' four cells are found in one
pass, ``scan_lines``, which also skips the victory by fours where the mover has none). The
thorough search of a root (victories by threes) stays ``Gomoku.forced_win(thorough=True)``,
once a root (``ArrayMCTS.search_root_threats``). ``tests/test_array_search.py`` holds the
kernels to the game and to the object search.
"""

from __future__ import annotations

import numpy as np

from hexzero.games.gomoku_threats import GUARD, OTHER, OWN, _dirs, defences_marked, forced_fours_on, scan_lines
from hexzero.mctsfw.jit import njit
from hexzero.mctsfw.search.arrays import DRAW, LOST_IN_2, SEARCH, UNKNOWN, WIN, WINS_NOW, rng_below
from hexzero.mctsfw.search.kernels import GameKernels, empty_cells

TO_MOVE, WINNER, STONES, LAST = 0, 1, 2, 3
DR = np.array([0, 1, 1, 1], np.int64)  # across, down, the two diagonals
DC = np.array([1, 0, 1, -1], np.int64)
#: ``Gomoku.forced_win``'s victory by continuous fours at a new node: attacker moves, positions
VCF_DEPTH, VCF_POSITIONS = 12, 200


@njit(cache=True, _nrt=False)
def _wins_at(row, n, k, exact, cell, who):
    """Whether a stone of ``who`` on ``cell`` (there already, or not) makes ``k`` in a row
    (exactly ``k`` with ``exact``) along one of the four lines through it."""
    r, c = cell // n, cell % n
    for d in range(4):
        run = 1
        for sign in (1, -1):
            rr, cc = r + sign * DR[d], c + sign * DC[d]
            while 0 <= rr < n and 0 <= cc < n and row[rr * n + cc] == who:
                run += 1
                rr += sign * DR[d]
                cc += sign * DC[d]
        if run == k or (run > k and not exact):
            return True
    return False


@njit(cache=True)
def positions(parent, action, slot, player, proven, depth, board, aux, states, leaves, batch, n, k, exact):
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
            cell = action[g, node]
            who = aux[g, src, TO_MOVE]
            row[cell] = who
            aux[g, dst, STONES] = aux[g, src, STONES] + 1
            aux[g, dst, TO_MOVE] = 3 - who
            aux[g, dst, LAST] = cell
            if _wins_at(row, n, k, exact, cell, who):
                aux[g, dst, WINNER] = who
                player[g, node], proven[g, node], depth[g, node] = 0, WIN, 0
            else:
                aux[g, dst, WINNER] = 0
                if aux[g, dst, STONES] == n * n:
                    player[g, node], proven[g, node], depth[g, node] = 0, DRAW, 0
                else:
                    player[g, node] = 3 - who


@njit(cache=True, _nrt=False)
def _completing(row, n, k, exact, who, out, tried):
    """The empty cells where a stone of ``who`` completes a line, in ``out``; how many.
    (Such a cell has a stone of ``who`` next to it: of the ``k`` - 1 others on its line,
    one is its neighbour; so only the empty neighbours of ``who``'s stones are tried, each
    once: ``tried``, a scratch row.)"""
    found = 0
    cells = n * n
    for p in range(cells):
        out[p] = False
        tried[p] = False
    for s in range(cells):
        if row[s] != who:
            continue
        r, c = s // n, s % n
        for rr in range(max(r - 1, 0), min(r + 2, n)):
            for cc in range(max(c - 1, 0), min(c + 2, n)):
                p = rr * n + cc
                if row[p] != 0 or tried[p]:
                    continue
                tried[p] = True
                if _wins_at(row, n, k, exact, p, who):
                    out[p] = True
                    found += 1
    return found


@njit(cache=True, _nrt=False)
def stop_threats(row, n, k, exact, who, stones, theirs, after, tried, mask, forced, forced_move, plies, g, b):
    """Where the opponent has cells that complete its line (``theirs``): only those that
    leave it none masked; where each leaves another, the leaf lost in 2 (``LOST_IN_2``,
    the first of them the move)."""
    cells = n * n
    alive, first = 0, -1
    for p in range(cells):
        mask[p] = False
        if theirs[p]:
            if first < 0:
                first = p
            row[p] = who
            if stones + 1 == cells or not _completing(row, n, k, exact, 3 - who, after, tried):
                mask[p] = True
                alive += 1
            row[p] = 0
    if alive == 0:
        forced[g, b], forced_move[g, b], plies[g, b] = LOST_IN_2, first, 2


@njit(cache=True, _nrt=False)
def _padded(row, n, k, who, out):
    """The threat search's padded board of ``row`` (``gomoku_threats._board``), ``who`` OWN."""
    width = n + 1
    out[:] = GUARD
    for r in range(n):
        for c in range(n):
            v = row[r * n + c]
            out[(r + k) * width + c] = 0 if v == 0 else OWN if v == who else OTHER


@njit(cache=True)
def moves(slot, board, aux, leaves, judged, masks, forced, forced_move, plies, threats, n, k, exact, lines, windows,
          through, zobrist, action_of_padded):
    """The moves the search considers at each judged leaf, as masks: the empty cells; with
    ``threats`` ``MCTS.forced_for``'s (see the module's text): ``forced`` WINS_NOW where a
    move wins at once or by continuous fours (``plies`` to the end, ``forced_move`` the
    first move), LOST_IN_2 where every stop of the opponent's line leaves another; the
    stops that do not, or the answers to a three, masked."""
    cells = n * n
    mine, theirs, after = np.empty(cells, np.bool_), np.empty(cells, np.bool_), np.empty(cells, np.bool_)
    tried = np.empty(cells, np.bool_)
    padded_cells = (n + 2 * k) * (n + 1)
    padded = np.empty(padded_cells, np.int8)
    dirs = _dirs(n)
    # the cells that complete a line, of the mover and of the opponent, and their four cells:
    # marked by a stamp a leaf (``gomoku_threats.scan_lines``)
    wins, stops = np.zeros(padded_cells, np.int64), np.zeros(padded_cells, np.int64)
    fours, threes = np.zeros(padded_cells, np.int64), np.zeros(padded_cells, np.int64)
    stamp = 0
    padded_of = np.empty(cells, np.int64)  # each cell's place on the padded board (``_padded``)
    for p in range(cells):
        padded_of[p] = (p // n + k) * (n + 1) + p % n
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
            stones = aux[g, s, STONES]
            if not threats:
                continue
            who = aux[g, s, TO_MOVE]
            if not exact:  # one pass over the lines finds the cells that complete a line and the four cells
                if stones < 2 * (k - 2) - 1:  # (fewer: no threat of any kind)
                    continue
                _padded(row, n, k, who, padded)
                stamp += 1
                own_fours, own_wins, other_wins = scan_lines(padded, lines, dirs, k, wins, stops, fours, threes, stamp)
                if own_wins:  # a move wins at once: the first
                    for p in range(cells):
                        if wins[padded_of[p]] == stamp:
                            forced[g, b], forced_move[g, b], plies[g, b] = WINS_NOW, p, 1
                            break
                    continue
                if other_wins:  # the opponent's must be stopped
                    for p in range(cells):
                        theirs[p] = stops[padded_of[p]] == stamp
                    stop_threats(row, n, k, exact, who, stones, theirs, after, tried, mask, forced, forced_move,
                                 plies, g, b)
                    continue
                if own_fours:  # (without a four cell of the mover's, no victory by fours)
                    line = forced_fours_on(padded, lines, windows, through, k, VCF_DEPTH, VCF_POSITIONS, zobrist)
                    if line.shape[0] and line[0] >= 0:
                        forced[g, b], forced_move[g, b] = WINS_NOW, action_of_padded[line[0]]
                        plies[g, b] = line.shape[0] + 2
                        continue
                    _padded(row, n, k, who, padded)  # (the search changed it)
                replies = defences_marked(padded, lines, dirs, k, fours, threes, stamp)
                if replies.shape[0] and replies[0] >= 0:
                    mask[:] = False
                    for i in range(replies.shape[0]):
                        mask[action_of_padded[replies[i]]] = True
                continue
            if stones >= 2 * k - 3:  # (fewer: nobody has k - 1 stones, ``Gomoku.forcing_actions``)
                if _completing(row, n, k, exact, who, mine, tried):
                    for p in range(cells):
                        if mine[p]:
                            forced[g, b], forced_move[g, b], plies[g, b] = WINS_NOW, p, 1
                            break
                    continue
                if _completing(row, n, k, exact, 3 - who, theirs, tried):
                    stop_threats(row, n, k, exact, who, stones, theirs, after, tried, mask, forced, forced_move,
                                 plies, g, b)
                # (exactly five: no threat search, ``Gomoku.forced_win``, ``threat_defences``)


@njit(cache=True)
def playouts(slot, board, aux, leaves, judged, rng, n, k, exact, values):
    """A random playout from each judged leaf: uniformly random empty cells in turn until a
    line or a full board; ``values`` the result for the player to move."""
    cells = n * n
    fill = np.empty(cells, np.int8)
    empty = np.empty(cells, np.int64)
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            s = slot[g, leaves[g, b]]
            row = board[g, s]
            first = aux[g, s, TO_MOVE]
            left = 0
            for p in range(cells):
                fill[p] = row[p]
                if row[p] == 0:
                    empty[left] = p
                    left += 1
            who, winner = first, 0
            while left > 0:
                i = rng_below(rng, g, left)
                cell = empty[i]
                left -= 1
                empty[i] = empty[left]
                fill[cell] = who
                if _wins_at(fill, n, k, exact, cell, who):
                    winner = who
                    break
                who = 3 - who
            values[g, b] = 0.5 if winner == 0 else 1.0 if winner == first else 0.0


@njit(cache=True, _nrt=False)
def encode_flat(slot, board, aux, leaves, judged, n, out):
    """``Gomoku.encode`` of each judged leaf: player 1's stones, player 2's, the last move, who moves."""
    n2 = n * n
    k = 0
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            s = slot[g, leaves[g, b]]
            row = board[g, s]
            out[k] = 0.0
            for p in range(n2):
                if row[p] == 1:
                    out[k, p] = 1.0
                elif row[p] == 2:
                    out[k, n2 + p] = 1.0
            if aux[g, s, LAST] >= 0:
                out[k, 2 * n2 + aux[g, s, LAST]] = 1.0
            out[k, 3 * n2 + aux[g, s, TO_MOVE] - 1] = 1.0
            k += 1


@njit(cache=True)
def encode_planes(parent, action, slot, board, aux, tail, ntail, leaves, judged, n, history, out):
    """``Gomoku.encode_planes`` of each judged leaf: the stones of the player to move, the
    opponent's, the last move, ones where player 1 moves, then each of the ``history``
    positions before (the last moves taken back: the path's, then the root's)."""
    taken = np.zeros(n * n, np.bool_)
    k = 0
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            node = leaves[g, b]
            s = slot[g, node]
            row = board[g, s]
            who = aux[g, s, TO_MOVE]
            out[k] = 0.0
            for p in range(n * n):
                if row[p] == who:
                    out[k, p // n, p % n, 0] = 1.0
                elif row[p] == 3 - who:
                    out[k, p // n, p % n, 1] = 1.0
            last = aux[g, s, LAST]
            if last >= 0:
                out[k, last // n, last % n, 2] = 1.0
            if who == 1:
                out[k, :, :, 3] = 1.0
            taken[:] = False
            cur, j = node, 0
            for t in range(1, history + 1):
                if cur > 0:
                    move = action[g, cur]
                    cur = parent[g, cur]
                elif j < ntail[g]:
                    move = tail[g, j]
                    j += 1
                else:
                    break
                taken[move] = True
                for p in range(n * n):
                    if not taken[p]:
                        if row[p] == who:
                            out[k, p // n, p % n, 2 + 2 * t] = 1.0
                        elif row[p] == 3 - who:
                            out[k, p // n, p % n, 3 + 2 * t] = 1.0
            k += 1


class GomokuKernels(GameKernels):
    """``Gomoku``'s kernels for the array search (``mctsfw.search.kernels``), its threats included."""

    aux_len = 4
    encodings = ("flat", "planes")
    #: the game's threat search (``forced_win``, ``threat_defences``) runs in these kernels
    threat_search = True

    def __init__(self, game):
        from hexzero.games.gomoku import compiled_threats

        self.game = game
        n, k = self.n, self.k = game.size, game.connect
        self.exact = bool(game.exactly_five)
        self.state_len = self.num_actions = self.max_depth = n * n
        threats = compiled_threats()
        game._kernel_tables(threats)
        self.lines, (self.windows, self.through), self.zobrist = game._lines, game._windows, game._zobrist
        self.action_of_padded = np.full((n + 2 * k) * (n + 1), -1, np.int64)
        for p, a in game._action_of_padded.items():
            self.action_of_padded[p] = a

    def rooted(self, tree, g: int, state) -> None:
        super().rooted(tree, g, state)
        history = self.game.history
        if getattr(tree, "gomoku_tail", None) is None or tree.gomoku_tail.shape != (tree.trees, history):
            tree.gomoku_tail = np.zeros((tree.trees, history), np.int64)
            tree.gomoku_ntail = np.zeros(tree.trees, np.int64)
        moves = state[4]
        tail = moves[::-1][:history]
        tree.gomoku_tail[g, :len(tail)] = tail
        tree.gomoku_ntail[g] = len(tail)

    def set_root(self, tree, g: int, state) -> None:
        player, _, _, winner, moves = state
        cells = self.game.board(state).reshape(-1)
        tree.clear(g)
        tree.board[g, 0] = cells
        aux = tree.aux[g, 0]
        aux[TO_MOVE], aux[WINNER], aux[STONES], aux[LAST] = player, winner, len(moves), moves[-1] if moves else -1
        tree.states[g] = 1
        tree.slot[g, 0] = 0
        final = self.game.is_final(state)
        tree.player[g, 0] = 0 if final else player
        tree.mover[g, 0] = 3 - player
        tree.proven[g, 0] = WIN if winner else DRAW if final else UNKNOWN
        self.rooted(tree, g, state)

    def positions(self, tree, leaves, batch) -> None:
        positions(tree.parent, tree.action, tree.slot, tree.player, tree.proven, tree.depth, tree.board, tree.aux,
                  tree.states, leaves, batch, self.n, self.k, self.exact)

    def moves(self, tree, leaves, judged, masks, forced, forced_move, plies, threats: bool) -> None:
        moves(tree.slot, tree.board, tree.aux, leaves, judged, masks, forced, forced_move, plies, threats, self.n,
              self.k, self.exact, self.lines, self.windows, self.through, self.zobrist, self.action_of_padded)

    def legal(self, tree, leaves, judged) -> np.ndarray:
        out = np.empty((int(judged.sum()), self.num_actions), np.float32)
        empty_cells(tree.slot, tree.board, leaves, judged, out)
        return out

    def playouts(self, tree, leaves, judged, rng) -> np.ndarray:
        values = np.zeros(leaves.shape, np.float64)
        playouts(tree.slot, tree.board, tree.aux, leaves, judged, rng, self.n, self.k, self.exact, values)
        return values

    def encode(self, tree, leaves, judged, kind: str) -> np.ndarray:
        count, n = int(judged.sum()), self.n
        if kind == "flat":
            out = np.empty((count, 3 * n * n + 2), np.float32)
            encode_flat(tree.slot, tree.board, tree.aux, leaves, judged, n, out)
        else:
            out = np.empty((count, n, n, 4 + 2 * self.game.history), np.float32)
            encode_planes(tree.parent, tree.action, tree.slot, tree.board, tree.aux, tree.gomoku_tail,
                          tree.gomoku_ntail, leaves, judged, n, self.game.history, out)
        return out
