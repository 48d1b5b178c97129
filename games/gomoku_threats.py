"""Gomoku's threat search compiled (numba): the victory by continuous fours (VCF,
``forced_fours``: the same search as ``Gomoku.continuous_fours`` under
``Gomoku.forced_win``'s iterative deepening) and the answers to a three
(``threat_defences``, as ``Gomoku.threat_defences``), with the Python ones' answers.

A search asks for both at every new node; in Python on the bitboards the VCF took about
0.7 ms a call on 15x15, three quarters of self-play's time with a network that costs
nothing (docs/speed.md). Here a kernel reads the bitboards' bytes and lays the stones on
an int8 board laid out as the bitboards are, with ``connect`` guard rows above and below
(cell ``(r, c)`` at ``(r + connect) * (size + 1) + c``, the guard column at ``c = size``),
so a window of ``connect`` cells from any cell in any direction stays in the array and
stops at a guard; one pass (``_scan``) slides a window along every line and counts both
players' stones in it.

The search is ``continuous_fours``' depth-first search made iterative (a stack of levels)
with the same moves in the same order (ascending cells), the same count of positions
against the same budget, and its table keyed by Zobrist hashes of the position (the
Python one keys by the two bitboards): a position searched before to at least the depth
asked is not searched again (and costs nothing); one searched less deep is searched again
and counts. A line found ends the whole search (as in Python, where it returns straight
up), so the table needs no lines. One liberty taken: when an iteration of the deepening
met no position at its depth limit with fours left to play (and no transposition), a
deeper one would search the same tree, so the search ends there with no line, where the
Python one spends its budget on the same nothing.

numba keeps the compiled kernels in ``__pycache__`` (``cache=True``), valid while this
file's time stamp is unchanged.
"""

from __future__ import annotations

import numpy as np
from numba import njit

EMPTY, OWN, OTHER, GUARD = 0, 1, 2, 3
MAX_LEVELS = 64

def zobrist(cells: int) -> np.ndarray:
    """The Zobrist keys of a padded board of ``cells`` cells: [0] for OWN's stones, [1] OTHER's."""
    return np.random.default_rng(20261129).integers(1, 2**63, size=(2, cells), dtype=np.uint64)


@njit(cache=True)
def _lookup(keys, used, key):
    """The slot of ``key`` in the open-addressing table, or the free slot it would take."""
    mask = keys.shape[0] - 1
    i = np.int64(key & np.uint64(mask))
    while used[i] and keys[i] != key:
        i = (i + 1) & mask
    return i


@njit(cache=True)
def _completing_through(board, cell, dirs, k, colour, found):
    """The distinct empty cells on the lines through ``cell`` that complete ``k`` in a row
    for ``colour`` (windows of ``k`` with ``k - 1`` of its stones and one empty cell), at
    most ``len(found)`` of them, into ``found``; their count."""
    n = 0
    for d in dirs:
        for s in range(k):
            start = cell - s * d
            stones = 0
            gap = -1
            for j in range(k):
                v = board[start + j * d]
                if v == colour:
                    stones += 1
                elif v == EMPTY and gap < 0:
                    gap = start + j * d
                else:
                    stones = -1
                    break
            if stones == k - 1:
                known = False
                for i in range(n):
                    known = known or found[i] == gap
                if not known:
                    found[n] = gap
                    n += 1
                    if n == found.shape[0]:
                        return n
    return n


@njit(cache=True)
def _scan(board, lines, dirs, k, colour, mark, stamp):
    """One pass sliding a window of ``k`` cells along every line (``lines``: each
    direction's first cells), counting both players' stones: the empty cells of windows
    with ``k - 2`` stones of ``colour`` and none of the opponent's are ``colour``'s four
    cells (a stone there leaves a cell completing its line), marked ``stamp`` in ``mark``;
    the empty cell of a window with ``k - 1`` of the opponent's stones and none of
    ``colour``'s completes the opponent's line. That cell is returned: -1 none, -2 two or
    more (the pass stops there, its marks incomplete)."""
    against = -1
    for di in range(4):
        d = dirs[di]
        for li in range(lines.shape[1]):
            p = lines[di, li]
            if p < 0:
                break
            own = 0
            other = 0
            length = 0
            while board[p] != GUARD:
                v = board[p]
                if v == colour:
                    own += 1
                elif v != EMPTY:
                    other += 1
                length += 1
                if length > k:
                    u = board[p - k * d]
                    if u == colour:
                        own -= 1
                    elif u != EMPTY:
                        other -= 1
                if length >= k:
                    if other == 0 and own == k - 2:
                        for j in range(k):
                            if board[p - j * d] == EMPTY:
                                mark[p - j * d] = stamp
                    elif own == 0 and other == k - 1:
                        for j in range(k):
                            c = p - j * d
                            if board[c] == EMPTY:
                                if against >= 0 and against != c:
                                    return -2
                                against = c
                p += d
    return against


@njit(cache=True)
def _node_fours(board, lines, dirs, k, mark, stamp, against, moves, threats):
    """A position's attacker moves (``Gomoku._fours``): -1 when OTHER has two cells that
    complete a line; -2 - m when the move m leaves OWN two cells completing a line (won);
    else the count of fours, each move with the one cell that completes it, into
    ``moves`` and ``threats`` in ascending cell order (only the move on OTHER's one
    completing cell where it has one). ``against``: ``_scan``'s answer where OWN's side
    was scanned with ``stamp`` already, else -3 (scanned here)."""
    if against == -3:
        against = _scan(board, lines, dirs, k, OWN, mark, stamp)
    if against == -2:
        return -1  # two cells win for the defender: a four cannot stop both
    found = np.empty(2, dtype=np.int64)
    count = 0
    for c in lines[4]:
        if mark[c] != stamp or board[c] != EMPTY or (against >= 0 and c != against):
            continue
        board[c] = OWN
        n = _completing_through(board, c, dirs, k, OWN, found)
        board[c] = EMPTY
        if n >= 2:
            return -2 - c
        moves[count] = c
        threats[count] = found[0]
        count += 1
    return count


@njit(cache=True)
def _board(own_bytes, other_bytes, lines, size, k):
    """The padded board from the bitboards' bytes (little-endian)."""
    width = size + 1
    pad = k * width
    board = np.full((size + 2 * k) * width, GUARD, dtype=np.int8)
    for r in range(size):
        for c in range(size):
            bit = r * width + c
            byte, shift = bit >> 3, bit & 7
            v = EMPTY
            if (own_bytes[byte] >> shift) & 1:
                v = OWN
            elif (other_bytes[byte] >> shift) & 1:
                v = OTHER
            board[pad + bit] = v
    return board


def lines_of(size: int, k: int) -> np.ndarray:
    """What the kernels slide their windows along on a ``size`` board for ``k`` in a row:
    for each direction (rows 0-3: across, down, diagonal \\, diagonal /) the padded cells
    that start a line (the cell before is off the board), -1 after the last; row 4 every
    cell of the board in order."""
    width = size + 1
    cells = [(r + k) * width + c for r in range(size) for c in range(size)]
    on_board = set(cells)
    lines = np.full((5, size * size), -1, dtype=np.int64)
    for di, d in enumerate((1, width, width + 1, width - 1)):
        starts = [cell for cell in cells if cell - d not in on_board]
        lines[di, :len(starts)] = starts
    lines[4] = cells
    return lines


@njit(cache=True)
def forced_fours(own_bytes, other_bytes, lines, size, k, max_depth, budget, zobrist):
    """``Gomoku.forced_win``'s victory by continuous fours for the owner of ``own_bytes``
    (the bytes of its bitboard, little-endian), to move against ``other_bytes``:
    iterative deepening to ``max_depth`` attacker moves, ``budget`` positions counted. The
    line (padded cells: the attacker's moves and the defender's forced replies in turn,
    ending with the move that leaves two cells completing a line); empty when none is
    found; ``[-1]`` when either player completes a line at once (no claim made there:
    ``forcing_actions``' business)."""
    width = size + 1
    dirs = np.array([1, width, width + 1, width - 1], dtype=np.int64)
    board = _board(own_bytes, other_bytes, lines, size, k)
    cells = lines[4]
    mark = np.zeros(board.shape[0], dtype=np.int64)
    if _scan(board, lines, dirs, k, OTHER, mark, 1) != -1:  # OWN completes a line at once
        return np.full(1, -1, dtype=np.int64)
    against = _scan(board, lines, dirs, k, OWN, mark, 2)  # the root's, for its first visit
    if against != -1:  # OTHER completes one
        return np.full(1, -1, dtype=np.int64)
    slots = 16
    while slots < 2 * (budget + 1):  # more slots than positions: the table never fills
        slots *= 2
    keys = np.zeros(slots, dtype=np.uint64)
    used = np.zeros(slots, dtype=np.bool_)
    depths = np.zeros(slots, dtype=np.int64)
    levels = min(max_depth, MAX_LEVELS) + 1
    moves = np.empty((levels, cells.shape[0]), dtype=np.int64)
    threats = np.empty((levels, cells.shape[0]), dtype=np.int64)
    count = np.zeros(levels, dtype=np.int64)
    index = np.zeros(levels, dtype=np.int64)
    hashes = np.zeros(levels, dtype=np.uint64)
    root = np.uint64(0)
    for c in cells:
        if board[c] == OWN:
            root ^= zobrist[0, c]
        elif board[c] == OTHER:
            root ^= zobrist[1, c]
    stamp = 1  # (2: the root's scan)
    left = budget
    line = np.empty(0, dtype=np.int64)
    for limit in range(1, min(max_depth, MAX_LEVELS) + 1):
        if left <= 0:
            break
        deeper = False  # whether a deeper iteration could see more
        level = 0
        hashes[0] = root
        entering = True
        while True:
            if entering:
                remaining = limit - level
                slot = _lookup(keys, used, hashes[level])
                if used[slot] and depths[slot] >= remaining:
                    deeper = True  # a transposition: its own cut-offs are not followed
                    entering = False
                else:
                    left -= 1
                    if left < 0:
                        return line
                    stamp += 1
                    n = _node_fours(board, lines, dirs, k, mark, stamp, -1 if stamp == 2 else -3, moves[level],
                                    threats[level])
                    if n <= -2:  # won: the line from the root
                        line = np.empty(2 * level + 1, dtype=np.int64)
                        for i in range(level):
                            line[2 * i] = moves[i, index[i]]
                            line[2 * i + 1] = threats[i, index[i]]
                        line[2 * level] = -2 - n
                        return line
                    count[level] = max(n, 0)
                    index[level] = 0
                    if count[level] > 0 and remaining > 1:
                        keys[slot], used[slot] = hashes[level], True
                        depths[slot] = remaining  # (stored now: a transposition below sees it)
                        entering = True
                    else:
                        if count[level] > 0:
                            deeper = True
                        keys[slot], used[slot], depths[slot] = hashes[level], True, remaining
                        entering = False
                    if entering:  # into the first four
                        m, t = moves[level, 0], threats[level, 0]
                        board[m] = OWN
                        board[t] = OTHER
                        hashes[level + 1] = hashes[level] ^ zobrist[0, m] ^ zobrist[1, t]
                        level += 1
                        continue
            # back from a child that found nothing (or from a node with nothing to try)
            if level == 0:
                break
            level -= 1
            i = index[level]
            board[moves[level, i]] = EMPTY
            board[threats[level, i]] = EMPTY
            i += 1
            index[level] = i
            if i < count[level]:
                m, t = moves[level, i], threats[level, i]
                board[m] = OWN
                board[t] = OTHER
                hashes[level + 1] = hashes[level] ^ zobrist[0, m] ^ zobrist[1, t]
                level += 1
                entering = True
            else:
                entering = False
        if not deeper:
            break
    return line


@njit(cache=True)
def threat_defences(own_bytes, other_bytes, lines, size, k):
    """``Gomoku.threat_defences`` for OWN to move: where OTHER has a three (a move that
    leaves it two or more cells completing its line) and nobody completes a line at once,
    the moves (padded cells, ascending) that do not lose to it: the cells that leave
    OTHER no such move (the move itself, or one of exactly two cells it would leave) and
    OWN's fours; where none is left, the cells of OTHER's such moves. Empty where OTHER
    has no three; ``[-1]`` where a line completes at once (``forcing_actions``' business)."""
    width = size + 1
    dirs = np.array([1, width, width + 1, width - 1], dtype=np.int64)
    board = _board(own_bytes, other_bytes, lines, size, k)
    fours = np.zeros(board.shape[0], dtype=np.int64)  # OWN's four cells, marked 1
    threes = np.zeros(board.shape[0], dtype=np.int64)  # OTHER's four cells, marked 1: its threes among them
    if _scan(board, lines, dirs, k, OWN, fours, 1) != -1 or _scan(board, lines, dirs, k, OTHER, threes, 1) != -1:
        return np.full(1, -1, dtype=np.int64)  # (OTHER completes a line at once, or OWN does)
    hits = np.zeros(board.shape[0], dtype=np.int64)  # the threats each cell stops
    threat_moves = np.empty(lines.shape[1], dtype=np.int64)
    found = np.empty(3, dtype=np.int64)
    threats = 0
    for c in lines[4]:
        if threes[c] != 1 or board[c] != EMPTY:
            continue
        board[c] = OTHER
        n = _completing_through(board, c, dirs, k, OTHER, found)
        board[c] = EMPTY
        if n >= 2:
            threat_moves[threats] = c
            threats += 1
            hits[c] += 1
            if n == 2:
                hits[found[0]] += 1
                hits[found[1]] += 1
    if threats == 0:
        return np.empty(0, dtype=np.int64)
    replies = np.empty(lines.shape[1], dtype=np.int64)
    count = 0
    for c in lines[4]:
        if board[c] == EMPTY and (hits[c] == threats or fours[c] == 1):  # a stop, or a four (a move gained)
            replies[count] = c
            count += 1
    if count == 0:  # two threes (or more) that no one stone stops: each move loses; taking a threat's cell
        return threat_moves[:threats].copy()  # makes the opponent use the other
    return replies[:count].copy()
