"""Go's kernels for the array search (numba): the rules of ``games.go`` on a padded int8 board.

A position is the padded board of ``games.go_playout`` ((size+2)^2 int8 points: 0 empty,
1 black, 2 white, 3 the border, so a neighbour is an offset of 1 or size+2) and five int64
entries: the player to move, the passes in a row, the moves from the start (passes
included: the cut-off counts them), the board's Zobrist hash (a uint64's bits, read through
a view) and the result once final (1 black, 2 white, 0 a draw). A stone is put down, its
captures taken and its hash found by ``go_playout.place``, the final position scored by
``go_playout.area_winner``, the playout is ``go_playout.playout``: one copy of each rule.

Positional superko looks at every board that stood before: before the tree's root, the
game's (the root state's ``seen`` and ``recent``), which each tree keeps as a sorted array
of hashes; within the tree, the boards of a leaf's ancestors, read off its path. The
history planes (``Go.encode_planes``) read the ancestors' boards likewise, then the root
state's ``past``, kept for each tree. ``set_root`` and ``rooted`` (a kept subtree made the
tree) set a tree's root data. ``tests/test_array_search.py`` holds the kernels to
``games.go`` move for move.
"""

from __future__ import annotations

import numpy as np

from hexzero.games.go_playout import EMPTY, area_winner, place, playout
from hexzero.mctsfw.jit import njit
from hexzero.mctsfw.search.arrays import DRAW, LOSS, UNKNOWN, WIN, rng_next
from hexzero.mctsfw.search.kernels import GameKernels

TO_MOVE, PASSES, MOVES, HASH, RESULT = 0, 1, 2, 3, 4
NO_UNIFORMS = np.zeros(0, np.float64)
#: the boards that stood before, as a bit a hash (its top bits) in ``FILTER_WORDS`` words: a
#: move whose board's bit is clear repeats none of them, and only a set bit is looked up
FILTER_WORDS = 64
FILTER_SHIFT = np.uint64(64 - 12)  # 64 words of 64 bits: the top 12 bits of a hash


@njit(cache=True)
def _scratch(points):
    """The liberty searches' working arrays (``go_playout.place``), made once a kernel call."""
    return (np.empty(points, np.int64), np.zeros(points, np.int64), np.zeros(points, np.int8),
            np.empty(points, np.int64), np.empty(points, np.int64))


@njit(cache=True)
def _groups_scratch(points):
    """``_legal_points``' working arrays: a stack, marks, each point's group, each group's
    liberties and hash."""
    return (np.empty(points, np.int64), np.zeros(points, np.int64), np.empty(points, np.int64),
            np.empty(points, np.int64), np.empty(points, np.uint64))


@njit(cache=True)
def positions(parent, action, slot, player, proven, depth, board, aux, hashes, states, leaves, batch, size,
              max_moves, komi, keys, point_of):
    """Each leaf without a position gets it: its parent's with its move played (a stone
    and its captures, or a pass), final after two passes in a row or at the cut-off."""
    stride = size + 2
    stack, mark, taken, group, captured = _scratch(board.shape[2])
    stamp = 0
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
            who = aux[g, src, TO_MOVE]
            a = action[g, node]
            if a == size * size:
                aux[g, dst, PASSES] += 1
            else:
                p = point_of[a]
                row[p] = who
                ncaptured, h, stamp = place(row, p, who, stride, hashes[g, src, HASH], keys, stack, mark, taken, group,
                                            captured, stamp)
                for j in range(ncaptured):
                    row[captured[j]] = EMPTY
                hashes[g, dst, HASH] = h
                aux[g, dst, PASSES] = 0
            aux[g, dst, MOVES] += 1
            aux[g, dst, TO_MOVE] = 3 - who
            if aux[g, dst, PASSES] >= 2 or aux[g, dst, MOVES] >= max_moves:
                stamp += 1
                winner = area_winner(row, stride, komi, stack, mark, stamp)
                aux[g, dst, RESULT] = winner
                player[g, node], depth[g, node] = 0, 0
                proven[g, node] = DRAW if winner == 0 else WIN if winner == who else LOSS
            else:
                aux[g, dst, RESULT] = -1
                player[g, node] = 3 - who


@njit(cache=True)
def _before(parent, slot, hashes, g, node, out):
    """The hashes of the boards on the path above ``node`` within the tree (its own, its
    ancestors' below the root, whose board the root's hashes hold), sorted; how many."""
    k = 0
    while node > 0:
        out[k] = hashes[g, slot[g, node], HASH]
        k += 1
        node = parent[g, node]
    out[:k].sort()
    return k


@njit(cache=True, _nrt=False)
def _has(sorted_hashes, count, h):
    i = np.searchsorted(sorted_hashes[:count], h)
    return i < count and sorted_hashes[i] == h


@njit(cache=True, _nrt=False)
def _mark(filt, h):
    """Hash ``h``'s bit set in the filter ``filt`` (``FILTER_WORDS`` uint64 words)."""
    bit = h >> FILTER_SHIFT
    filt[bit >> np.uint64(6)] |= np.uint64(1) << (bit & np.uint64(63))


@njit(cache=True, _nrt=False)
def _maybe(filt, h):
    """Whether hash ``h``'s bit is set in ``filt``: False means no board it marks has it."""
    bit = h >> FILTER_SHIFT
    return (filt[bit >> np.uint64(6)] >> (bit & np.uint64(63))) & np.uint64(1) != np.uint64(0)


@njit(cache=True)
def _leaf_filter(root_filter, path, npath, out):
    """The filter of the boards a leaf may not repeat: its tree's root's and its path's."""
    out[:] = root_filter
    for i in range(npath):
        _mark(out, path[i])


@njit(cache=True, _nrt=False)
def root_filter(hashes, count, out):
    """The filter of a tree's root's earlier boards (``hashes[:count]``)."""
    out[:] = 0
    for i in range(count):
        _mark(out, hashes[i])


@njit(cache=True, _nrt=False)
def root_add(hashes, count, new, filt):
    """The boards ``new`` added to a root's earlier boards (``hashes[:count]``, ascending,
    kept so) and to their filter ``filt``; the new count."""
    for h in new:
        i = count
        while i > 0 and hashes[i - 1] > h:
            hashes[i] = hashes[i - 1]
            i -= 1
        hashes[i] = h
        count += 1
        _mark(filt, h)
    return count


@njit(cache=True, _nrt=False)
def _legal_points(row, who, size, h, keys, point_of, root_hashes, nroot, path_hashes, npath, filt, scratch, stamp,
                  out):
    """``out[a]`` whether a stone of ``who`` is legal on point ``a`` (empty, no suicide, no
    board that stood before); (how many are, the last ``stamp`` used). The board's groups
    are found once (each stone's group, each group's liberties and hash); then a point is
    no suicide where it has an empty neighbour, a neighbour of its own colour whose group
    has another liberty, or an opponent's group whose last liberty it is (a capture: the
    new board's hash without the group's stones); a board the filter ``filt`` does not
    mark (``_leaf_filter``) is looked up no further."""
    stack, mark, group_of, libs, group_hash = scratch
    stride = size + 2
    keys_own = keys[who]
    # the groups: a flood from each stone not yet in one; its liberties counted once each
    groups = 0
    for a in range(size * size):
        p = point_of[a]
        group_of[p] = -1
    for a in range(size * size):
        p = point_of[a]
        colour = row[p]
        if colour == EMPTY or group_of[p] >= 0:
            continue
        stamp += 1
        group_of[p] = groups
        stack[0] = p
        top, count, gh = 1, 0, np.uint64(0)
        colour_keys = keys[colour]
        while top > 0:
            top -= 1
            q = stack[top]
            gh ^= colour_keys[q]
            for d in (1, -1, stride, -stride):
                r = q + d
                v = row[r]
                if v == EMPTY:
                    if mark[r] != stamp:
                        mark[r] = stamp
                        count += 1
                elif v == colour and group_of[r] < 0:
                    group_of[r] = groups
                    stack[top] = r
                    top += 1
        libs[groups], group_hash[groups] = count, gh
        groups += 1
    count = 0
    for a in range(size * size):
        p = point_of[a]
        out[a] = False
        if row[p] != EMPTY:
            continue
        alive = False
        nh = h ^ keys_own[p]
        taken0 = taken1 = taken2 = -1  # the groups this stone captures (at most four: the fourth is never seen twice)
        for d in (1, -1, stride, -stride):
            q = p + d
            v = row[q]
            if v == EMPTY:
                alive = True
            elif v == who:
                if libs[group_of[q]] >= 2:
                    alive = True
            elif v != 3:
                gid = group_of[q]
                if libs[gid] == 1 and gid != taken0 and gid != taken1 and gid != taken2:
                    alive = True
                    nh ^= group_hash[gid]
                    if taken0 < 0:
                        taken0 = gid
                    elif taken1 < 0:
                        taken1 = gid
                    else:
                        taken2 = gid
        if alive and not (_maybe(filt, nh) and (_has(root_hashes, nroot, nh) or _has(path_hashes, npath, nh))):
            out[a] = True
            count += 1
    return count, stamp


@njit(cache=True, _nrt=False)
def _own_eye(row, p, who, stride):
    """Whether empty point ``p`` is a single-point eye of ``who`` (``Go.is_own_eye``)."""
    edge = False
    for d in (1, -1, stride, -stride):
        v = row[p + d]
        if v == 3:
            edge = True
        elif v != who:
            return False
    bad = 0
    for d in (stride + 1, stride - 1, -stride + 1, -stride - 1):
        if row[p + d] == 3 - who:
            bad += 1
    return bad == 0 or (bad == 1 and not edge)


@njit(cache=True)
def legal(parent, slot, board, aux, hashes, root_hashes, nroot, root_filters, leaves, judged, size, keys, point_of,
          out):
    """The legal moves of each judged leaf as float32 rows (``Go.legal_mask``: pass always)."""
    scratch = _groups_scratch(board.shape[2])
    filt = np.empty(FILTER_WORDS, np.uint64)
    path = np.empty(board.shape[1] + 1, np.uint64)
    points = np.empty(size * size, np.bool_)
    stamp = 0
    k = 0
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            node = leaves[g, b]
            s = slot[g, node]
            npath = _before(parent, slot, hashes, g, node, path)
            _leaf_filter(root_filters[g], path, npath, filt)
            _, stamp = _legal_points(board[g, s], aux[g, s, TO_MOVE], size, hashes[g, s, HASH], keys, point_of,
                                     root_hashes[g], nroot[g], path, npath, filt, scratch, stamp, points)
            for a in range(size * size):
                out[k, a] = 1.0 if points[a] else 0.0
            out[k, size * size] = 1.0
            k += 1


@njit(cache=True)
def moves(parent, slot, board, aux, hashes, root_hashes, nroot, root_filters, leaves, judged, masks, size, keys,
          point_of):
    """The moves the search considers at each judged leaf (``Go.search_actions``): the
    legal points; pass as well where the opponent has just passed or every legal point
    fills one of the mover's own eyes (pass alone where there is none)."""
    scratch = _groups_scratch(board.shape[2])
    filt = np.empty(FILTER_WORDS, np.uint64)
    path = np.empty(board.shape[1] + 1, np.uint64)
    stamp = 0
    n2 = size * size
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            node = leaves[g, b]
            s = slot[g, node]
            row, who = board[g, s], aux[g, s, TO_MOVE]
            mask = masks[g, b]
            npath = _before(parent, slot, hashes, g, node, path)
            _leaf_filter(root_filters[g], path, npath, filt)
            _, stamp = _legal_points(row, who, size, hashes[g, s, HASH], keys, point_of, root_hashes[g], nroot[g],
                                     path, npath, filt, scratch, stamp, mask)
            passing = aux[g, s, PASSES] > 0
            if not passing:
                passing = True
                for a in range(n2):
                    if mask[a] and not _own_eye(row, point_of[a], who, size + 2):
                        passing = False
                        break
            mask[n2] = passing


@njit(cache=True)
def playouts(parent, slot, board, aux, hashes, root_hashes, nroot, leaves, judged, rng, size, max_moves, komi, keys,
             point_of, action_of, values):
    """A light random playout (``go_playout.playout``) from each judged leaf, the boards
    that may not come back the root's and the path's; ``values`` the result for the
    player to move (1 a win, 0.5 a draw, 0 a loss)."""
    n2 = size * size
    path = np.empty(board.shape[1] + 1, np.uint64)
    empties = np.empty(n2, np.int64)
    out = np.empty(max_moves + 1, np.int64)
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            node = leaves[g, b]
            s = slot[g, node]
            npath = _before(parent, slot, hashes, g, node, path)
            seen = np.empty(nroot[g] + npath, np.uint64)
            seen[:nroot[g]] = root_hashes[g, :nroot[g]]
            seen[nroot[g]:] = path[:npath]
            row = board[g, s].copy()
            count = 0
            for a in range(n2):
                if row[point_of[a]] == EMPTY:
                    empties[count] = a
                    count += 1
            who = aux[g, s, TO_MOVE]
            left = max_moves - aux[g, s, MOVES]
            _, winner = playout(row, size, who, aux[g, s, PASSES], left, hashes[g, s, HASH], seen, komi, keys, point_of,
                                action_of, empties, count, NO_UNIFORMS, rng_next(rng, g), out)
            values[g, b] = 0.5 if winner == 0 else 1.0 if winner == who else 0.0


@njit(cache=True, _nrt=False)
def encode_flat(slot, board, aux, leaves, judged, size, point_of, out):
    """``Go.encode`` of each judged leaf: black's stones, white's (action order), who moves."""
    n2 = size * size
    k = 0
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            s = slot[g, leaves[g, b]]
            row = board[g, s]
            for a in range(n2):
                v = row[point_of[a]]
                out[k, a] = 1.0 if v == 1 else 0.0
                out[k, n2 + a] = 1.0 if v == 2 else 0.0
            who = aux[g, s, TO_MOVE]
            out[k, 2 * n2] = 1.0 if who == 1 else 0.0
            out[k, 2 * n2 + 1] = 1.0 if who == 2 else 0.0
            k += 1


@njit(cache=True, _nrt=False)
def encode_planes(parent, slot, board, aux, past, npast, leaves, judged, size, history, point_of, out):
    """``Go.encode_planes`` of each judged leaf: the stones of the player to move in its
    position and the ``history`` before it (its ancestors', then the root's past), the
    opponent's likewise, then the colour to move; earlier than the start, empty."""
    n = size
    k = 0
    for g in range(leaves.shape[0]):
        for b in range(leaves.shape[1]):
            if not judged[g, b]:
                continue
            node = leaves[g, b]
            who = aux[g, slot[g, node], TO_MOVE]
            out[k] = 0.0
            cur, j = node, 0
            for t in range(history + 1):
                if cur >= 0:
                    row = board[g, slot[g, cur]]
                    cur = parent[g, cur]
                elif j < npast[g]:
                    row = past[g, j]
                    j += 1
                else:
                    break
                for a in range(n * n):
                    v = row[point_of[a]]
                    if v == who:
                        out[k, a // n, a % n, t] = 1.0
                    elif v == 3 - who:
                        out[k, a // n, a % n, history + 1 + t] = 1.0
            if who == 1:
                out[k, :, :, 2 * history + 2] = 1.0
            k += 1


class GoKernels(GameKernels):
    """``Go``'s kernels for the array search (``mctsfw.search.kernels``)."""

    aux_len = 5
    encodings = ("flat", "planes")

    def __init__(self, game):
        self.game = game
        n = self.n = game.size
        tables = game._kernel_tables()
        self.point_of, self.action_of, self.keys = tables["point_of"], tables["action_of"], tables["keys"]
        self.state_len = (n + 2) * (n + 2)
        self.num_actions = n * n + 1
        self.max_depth = game.max_moves

    # ---- a tree's root data ---------------------------------------------------------------
    def _root_arrays(self, tree, hashes: int) -> None:
        """The tree's arrays of root data, made (or grown) to hold ``hashes`` hashes a tree."""
        if getattr(tree, "go_nhashes", None) is None or len(tree.go_nhashes) != tree.trees:
            tree.go_nhashes = np.zeros(tree.trees, np.int64)
            tree.go_hashes = np.zeros((tree.trees, 0), np.uint64)
            tree.go_past = np.zeros((tree.trees, self.game.history, self.state_len), np.int8)
            tree.go_npast = np.zeros(tree.trees, np.int64)
            tree.go_filter = np.zeros((tree.trees, FILTER_WORDS), np.uint64)
            tree.go_known = [None] * tree.trees  # each root's (seen, recent): what its hashes hold
        if tree.go_hashes.shape[1] < hashes:
            grown = np.zeros((tree.trees, max(hashes, 2 * tree.go_hashes.shape[1], 64)), np.uint64)
            grown[:, :tree.go_hashes.shape[1]] = tree.go_hashes
            tree.go_hashes = grown

    def rooted(self, tree, g: int, state) -> None:
        player, black, white, passes, moves, h, seen, recent, past = state
        self._root_arrays(tree, len(seen) + len(recent))
        before = tree.go_known[g]
        if before is not None and before[0] is seen and recent[:len(before[1])] == before[1]:
            # the root after the last one (no capture since): its new boards added, in order
            added = np.array(recent[len(before[1]):], np.uint64)
            tree.go_nhashes[g] = root_add(tree.go_hashes[g], tree.go_nhashes[g], added, tree.go_filter[g])
        else:
            known = np.fromiter((*seen, *recent), np.uint64, len(seen) + len(recent))
            known.sort()
            tree.go_hashes[g, :len(known)] = known
            tree.go_nhashes[g] = len(known)
            root_filter(known, len(known), tree.go_filter[g])
        tree.go_known[g] = (seen, recent)
        super().rooted(tree, g, state)
        for j, (b, w) in enumerate(past[:self.game.history]):
            tree.go_past[g, j] = self.game._padded_board(b, w)
        tree.go_npast[g] = min(len(past), self.game.history)

    def set_root(self, tree, g: int, state) -> None:
        game = self.game
        player, black, white, passes, moves, h, *_ = state
        tree.clear(g)
        tree.board[g, 0] = game._padded_board(black, white)
        aux = tree.aux[g, 0]
        aux[TO_MOVE], aux[PASSES], aux[MOVES] = player, passes, len(moves)
        tree.aux.view(np.uint64)[g, 0, HASH] = np.uint64(h)
        final = game.is_final(state)
        winner = game.winner(state) if final else None
        aux[RESULT] = -1 if not final else (winner or 0)
        tree.states[g] = 1
        tree.slot[g, 0] = 0
        tree.player[g, 0] = 0 if final else player
        tree.mover[g, 0] = 3 - player
        tree.proven[g, 0] = UNKNOWN if not final else DRAW if winner is None else WIN if winner == 3 - player else LOSS
        self.rooted(tree, g, state)

    # ---- the kernels a round -------------------------------------------------------------
    def positions(self, tree, leaves, batch) -> None:
        positions(tree.parent, tree.action, tree.slot, tree.player, tree.proven, tree.depth, tree.board, tree.aux,
                  tree.aux.view(np.uint64), tree.states, leaves, batch, self.n, self.game.max_moves, self.game.komi,
                  self.keys, self.point_of)

    def moves(self, tree, leaves, judged, masks, forced, forced_move, plies, threats: bool) -> None:
        forced[:] = 0
        moves(tree.parent, tree.slot, tree.board, tree.aux, tree.aux.view(np.uint64), tree.go_hashes, tree.go_nhashes,
              tree.go_filter, leaves, judged, masks, self.n, self.keys, self.point_of)

    def legal(self, tree, leaves, judged) -> np.ndarray:
        out = np.empty((int(judged.sum()), self.num_actions), np.float32)
        legal(tree.parent, tree.slot, tree.board, tree.aux, tree.aux.view(np.uint64), tree.go_hashes, tree.go_nhashes,
              tree.go_filter, leaves, judged, self.n, self.keys, self.point_of, out)
        return out

    def legal_after_moves(self, tree, leaves, judged, masks) -> np.ndarray:
        out = masks[judged].astype(np.float32)  # the legal points, as ``moves`` found them
        out[:, self.n * self.n] = 1.0  # and pass, always legal
        return out

    def playouts(self, tree, leaves, judged, rng) -> np.ndarray:
        values = np.zeros(leaves.shape, np.float64)
        playouts(tree.parent, tree.slot, tree.board, tree.aux, tree.aux.view(np.uint64), tree.go_hashes,
                 tree.go_nhashes, leaves, judged, rng, self.n, self.game.max_moves, self.game.komi, self.keys,
                 self.point_of, self.action_of, values)
        return values

    def encode(self, tree, leaves, judged, kind: str) -> np.ndarray:
        count, n = int(judged.sum()), self.n
        if kind == "flat":
            out = np.empty((count, 2 * n * n + 2), np.float32)
            encode_flat(tree.slot, tree.board, tree.aux, leaves, judged, n, self.point_of, out)
        else:
            out = np.empty((count, n, n, self.game.num_planes), np.float32)
            encode_planes(tree.parent, tree.slot, tree.board, tree.aux, tree.go_past, tree.go_npast, leaves, judged, n,
                          self.game.history, self.point_of, out)
        return out
