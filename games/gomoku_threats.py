"""Gomoku's threat search compiled (numba), with the Python one's answers: the victory
by continuous fours (VCF, ``forced_fours``: ``Gomoku.continuous_fours`` under
``Gomoku.forced_win``'s iterative deepening), the answers to a three
(``threat_defences``, as ``Gomoku.threat_defences``) and the victory by continuous
threats, fours and threes (VCT, ``continuous_threats``: ``Gomoku.continuous_threats``
deepened the same way, its table keeping each position's line of the longest defence).

A search asks for the first two at every new node and for the VCT at every root; in
Python on the bitboards the VCF took about 0.7 ms a call on 15x15, three quarters of self-play's time with a network that costs
nothing (docs/speed.md). Here a kernel reads the bitboards' bytes and lays the stones on
an int8 board laid out as the bitboards are, with ``connect`` guard rows above and below
(cell ``(r, c)`` at ``(r + connect) * (size + 1) + c``, the guard column at ``c = size``),
so a window of ``connect`` cells from any cell in any direction stays in the array and
stops at a guard; one pass (``scan_lines``) slides a window along every line and counts
both players' stones in it.

The VCF is ``continuous_fours``' depth-first search made iterative (a stack of levels)
with the same moves in the same order (ascending cells), the same count of positions
against the same budget, and its table keyed by Zobrist hashes of the position (the
Python one keys by the two bitboards). It does not scan the board at each position: it
counts each window's stones once and keeps the counts, and the four cells and the
defender's winning cells they give, as stones are laid and taken back (``_place``: the
20 windows through a cell, where a pass over a 15x15 board slides along 900); a
position's fours are read from them (3x faster than a scan a position, measured on the
calls of self-play), the four cells from a bitset kept with the counts. A position
searched before to at least the depth asked is not searched again (and costs nothing); one
searched less deep is searched again and counts. A line found ends the whole search (as
in Python, where it returns straight up), so the table needs no lines. One liberty taken:
when an iteration of the deepening met no position at its depth limit with fours left to
play (and no transposition), a deeper one would search the same tree, so the search ends
there with no line, where the Python one spends its budget on the same nothing.

The VCT is recursive, as the Python one is: its table keeps lines (a position's line is
reused where another branch meets it), stored in a pool of ``int64`` (each line its
length, then its cells), and its search goes on after the budget is spent as the Python
one does (a position met before still answers from the table). It keeps counts as the
VCF does, of more (``_lay``: both players' four cells and completing cells, and the
windows of ``connect + 1`` cells that make three cells), where it made four passes over
the board for each move it tried (3x faster, on the root searches of a 15x15 self-play).
The VCF keeps its own, fewer (``_place``): with ``_lay``'s its search took a third longer.

numba keeps the compiled kernels in ``__pycache__`` (``cache=True``); ``mctsfw.jit`` renews
them when any compiled file of the package changes.
"""

from __future__ import annotations

import numpy as np

from hexzero.mctsfw.jit import njit

EMPTY, OWN, OTHER, GUARD = 0, 1, 2, 3
MAX_LEVELS = 64
#: a de Bruijn sequence of 64 bits: the top 6 bits of it times 2**i differ for each i,
#: ``LOWEST_BIT`` maps them back to i (a word's lowest set bit's number without a loop)
DE_BRUIJN = 0x03F79D71B4CB0A89
LOWEST_BIT = np.zeros(64, np.int64)
for _i in range(64):
    LOWEST_BIT[((DE_BRUIJN << _i) & (2**64 - 1)) >> 58] = _i
del _i


@njit(cache=True, inline="always")
def _lowest(word):
    """The number of the lowest set bit of a nonzero int64 (``LOWEST_BIT``'s de Bruijn table)."""
    return LOWEST_BIT[(((word & -word) * DE_BRUIJN) >> 58) & 63]


def zobrist(cells: int) -> np.ndarray:
    """The Zobrist keys of a padded board of ``cells`` cells: [0] for OWN's stones, [1] OTHER's."""
    return np.random.default_rng(20261129).integers(1, 2**63, size=(2, cells), dtype=np.uint64)


@njit(cache=True, _nrt=False)
def _lookup(keys, used, key):
    """The slot of ``key`` in the open-addressing table, or the free slot it would take."""
    mask = keys.shape[0] - 1
    i = np.int64(key & np.uint64(mask))
    while used[i] and keys[i] != key:
        i = (i + 1) & mask
    return i


@njit(cache=True)
def _table(budget):
    """A search's table of positions: keys (Zobrist hashes), whether each slot is used, and
    the depth each position was searched to; more slots than the positions a budget of
    ``budget`` can count, so it never fills."""
    slots = 16
    while slots < 2 * (budget + 1):
        slots *= 2
    return np.zeros(slots, dtype=np.uint64), np.zeros(slots, dtype=np.bool_), np.zeros(slots, dtype=np.int64)


@njit(cache=True, _nrt=False)
def _hash(board, cells, zobrist):
    """The Zobrist hash of the position on ``board``."""
    key = np.uint64(0)
    for c in cells:
        if board[c] == OWN:
            key ^= zobrist[0, c]
        elif board[c] == OTHER:
            key ^= zobrist[1, c]
    return key


@njit(cache=True, _nrt=False)
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


@njit(cache=True, _nrt=False)
def scan_lines(board, lines, dirs, k, own_wins, other_wins, own_fours, other_fours, stamp):
    """One pass over every window of ``k`` cells (the padded ``board``, OWN to move): the
    empty cell of each window with ``k - 1`` of one player's stones and none of the
    other's (a cell that completes that player's line) marked ``stamp`` in ``own_wins`` or
    ``other_wins``, and each player's four cells (the empty cells of a window with ``k - 2``
    of its stones and none of the other's) in ``own_fours`` and ``other_fours``; (OWN's
    windows of four cells, OWN's completing windows, OTHER's)."""
    own_four_windows, own_win_windows, other_win_windows = 0, 0, 0
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
                if v == OWN:
                    own += 1
                elif v == OTHER:
                    other += 1
                length += 1
                if length > k:
                    u = board[p - k * d]
                    if u == OWN:
                        own -= 1
                    elif u == OTHER:
                        other -= 1
                if length >= k and (own == 0 or other == 0) and own + other >= k - 2:
                    if other == 0 and own == k - 1:
                        own_win_windows += 1
                        marks = own_wins
                    elif own == 0 and other == k - 1:
                        other_win_windows += 1
                        marks = other_wins
                    elif other == 0 and own == k - 2:
                        own_four_windows += 1
                        marks = own_fours
                    else:
                        marks = other_fours
                    for j in range(k):
                        if board[p - j * d] == EMPTY:
                            marks[p - j * d] = stamp
                p += d
    return own_four_windows, own_win_windows, other_win_windows


@njit(cache=True)
def _dirs(size):
    """The padded board's steps along a line: across, down, diagonal \\ and diagonal /."""
    width = size + 1
    return np.array([1, width, width + 1, width - 1], dtype=np.int64)


@njit(cache=True)
def _board(own_bytes, other_bytes, size, k):
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


def windows_of(size: int, k: int, length: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The windows of ``length`` cells in a row (default ``k``) on a ``size`` board, in the
    padded cells of ``lines_of`` for ``k`` in a row: their cells (one row a window), and for
    each padded cell the windows through it (at most ``4 length``, -1 after the last). What
    the VCF and the VCT keep their counts by."""
    length = length or k
    width = size + 1
    cells = [(r + k) * width + c for r in range(size) for c in range(size)]
    on_board = set(cells)
    windows = [[start + j * d for j in range(length)] for d in (1, width, width + 1, width - 1) for start in cells
               if all(start + j * d in on_board for j in range(length))]
    through = np.full(((size + 2 * k) * width, 4 * length), -1, dtype=np.int64)
    filled = [0] * len(through)
    for w, window in enumerate(windows):
        for c in window:
            through[c, filled[c]] = w
            filled[c] += 1
    return np.array(windows, dtype=np.int64).reshape(-1, length), through


@njit(cache=True, _nrt=False)
def _place(board, windows, through, c, colour, k, counts, held, bits):
    """A stone of ``colour`` laid on the empty cell ``c`` (``EMPTY``: its stone taken
    back), with the counts of the windows through ``c`` kept, and what those windows give:
    a window with ``k - 2`` of OWN's stones and none of OTHER's makes each of its empty
    cells a four cell of OWN's (``counts[2]`` counts such windows a cell is in); one with
    ``k - 1`` of OTHER's and none of OWN's has its empty cell complete OTHER's line
    (``counts[3]`` counts them; ``held``: how many distinct cells complete one, and their
    sum, which is the cell where there is one). ``counts[0]`` and ``counts[1]``: OWN's and
    OTHER's stones in each window (rows 0-1 by window, 2-3 by padded cell); ``bits`` has
    bit ``x % 64`` of word ``x // 64`` set where ``counts[2, x]`` is not 0, so a position's
    four cells are found without a pass over the board (``_counted_fours``). (One function with the rule written once: a helper
    called per window cost more in its arrays' reference counts than in its work.)"""
    step = 1 if colour != EMPTY else -1
    row = 0 if (colour if colour != EMPTY else board[c]) == OWN else 1
    for sign in (-1, 1):  # what the windows give taken back, the stone laid, given again
        if sign == 1:
            board[c] = colour
        for j in range(through.shape[1]):
            w = through[c, j]
            if w < 0:
                break
            if sign == 1:
                counts[row, w] += step
            own, other = counts[0, w], counts[1, w]
            if other == 0 and own == k - 2:
                for i in range(k):
                    x = windows[w, i]
                    if board[x] == EMPTY:
                        counts[2, x] += sign
                        if counts[2, x] == (1 if sign == 1 else 0):
                            bits[x >> 6] ^= np.int64(1) << (x & 63)
            elif own == 0 and other == k - 1:
                for i in range(k):
                    x = windows[w, i]
                    if board[x] == EMPTY:
                        counts[3, x] += sign
                        if counts[3, x] == (1 if sign == 1 else 0):
                            held[0] += sign
                            held[1] += sign * x
                        break


@njit(cache=True, _nrt=False)
def _counted_fours(board, windows, through, k, counts, held, bits, moves, threats):
    """A position's attacker moves (``Gomoku._fours``) from the kept counts (``_place``):
    -1 when OTHER has two cells that complete a line; -2 - m when the move m leaves OWN
    two cells completing a line (won); else the count of fours, each move with the one
    cell that completes it (the other empty cell of each window through the move with
    ``k - 2`` of OWN's stones and none of OTHER's), into ``moves`` and ``threats`` in
    ascending cell order (only the move on OTHER's one completing cell where it has one).
    The four cells are read from ``bits``, lowest first (a de Bruijn sequence numbers each
    word's lowest bit)."""
    if held[0] >= 2:
        return -1  # two cells win for the defender: a four cannot stop both
    against = held[1] if held[0] == 1 else -1
    count = 0
    for word_index in range(bits.shape[0]):
        word = bits[word_index]
        if against >= 0:  # only OTHER's completing cell, if it is a four cell
            word = 0
            if word_index == against >> 6 and counts[2, against] != 0:
                word = np.int64(1) << (against & 63)
        while word != 0:
            low = word & -word
            word ^= low
            c = word_index * 64 + _lowest(low)
            first = -1
            two = False
            for j in range(through.shape[1]):
                w = through[c, j]
                if w < 0 or two:
                    break
                if counts[1, w] == 0 and counts[0, w] == k - 2:
                    for i in range(k):
                        x = windows[w, i]
                        if x != c and board[x] == EMPTY:
                            if first < 0:
                                first = x
                            elif x != first:
                                two = True
                            break
            if two:
                return -2 - c
            moves[count] = c
            threats[count] = first
            count += 1
    return count


@njit(cache=True)
def forced_fours(own_bytes, other_bytes, lines, windows, through, size, k, max_depth, budget, zobrist):
    """``Gomoku.forced_win``'s victory by continuous fours for the owner of ``own_bytes``
    (the bytes of its bitboard, little-endian), to move against ``other_bytes``:
    iterative deepening to ``max_depth`` attacker moves, ``budget`` positions counted. The
    line (padded cells: the attacker's moves and the defender's forced replies in turn,
    ending with the move that leaves two cells completing a line); empty when none is
    found; ``[-1]`` when either player completes a line at once (no claim made there:
    ``forcing_actions``' business).

    Each window's stones (``windows_of``) are counted once, then kept as stones are laid
    and taken back (``_place``: the windows through one cell), so a position's fours come
    from the counts (``_counted_fours``), not from a pass over the board."""
    return forced_fours_on(_board(own_bytes, other_bytes, size, k), lines, windows, through, k, max_depth, budget,
                           zobrist)


@njit(cache=True)
def forced_fours_on(board, lines, windows, through, k, max_depth, budget, zobrist):
    """``forced_fours`` on a padded board (``_board``'s, OWN to move), which it changes."""
    cells = lines[4]
    counts = np.zeros((4, max(windows.shape[0], board.shape[0])), dtype=np.int64)
    held = np.zeros(2, dtype=np.int64)
    bits = np.zeros((board.shape[0] + 63) // 64, dtype=np.int64)
    # the stones laid one by one on an empty board, where every count is 0 (with k >= 3 an
    # empty window gives nothing)
    stones = board.copy()
    for c in cells:
        board[c] = EMPTY
    for c in cells:
        if stones[c] != EMPTY:
            _place(board, windows, through, c, stones[c], k, counts, held, bits)
    for w in range(windows.shape[0]):
        if counts[1, w] == 0 and counts[0, w] == k - 1:  # OWN completes a line at once
            return np.full(1, -1, dtype=np.int64)
    if held[0]:  # OTHER completes one
        return np.full(1, -1, dtype=np.int64)
    keys, used, depths = _table(budget)
    levels = min(max_depth, MAX_LEVELS) + 1
    moves = np.empty((levels, cells.shape[0]), dtype=np.int64)
    threats = np.empty((levels, cells.shape[0]), dtype=np.int64)
    count = np.zeros(levels, dtype=np.int64)
    index = np.zeros(levels, dtype=np.int64)
    hashes = np.zeros(levels, dtype=np.uint64)
    root = _hash(board, cells, zobrist)
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
                    n = _counted_fours(board, windows, through, k, counts, held, bits, moves[level],
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
                        _place(board, windows, through, m, OWN, k, counts, held, bits)
                        _place(board, windows, through, t, OTHER, k, counts, held, bits)
                        hashes[level + 1] = hashes[level] ^ zobrist[0, m] ^ zobrist[1, t]
                        level += 1
                        continue
            # back from a child that found nothing (or from a node with nothing to try)
            if level == 0:
                break
            level -= 1
            i = index[level]
            _place(board, windows, through, threats[level, i], EMPTY, k, counts, held, bits)
            _place(board, windows, through, moves[level, i], EMPTY, k, counts, held, bits)
            i += 1
            index[level] = i
            if i < count[level]:
                m, t = moves[level, i], threats[level, i]
                _place(board, windows, through, m, OWN, k, counts, held, bits)
                _place(board, windows, through, t, OTHER, k, counts, held, bits)
                hashes[level + 1] = hashes[level] ^ zobrist[0, m] ^ zobrist[1, t]
                level += 1
                entering = True
            else:
                entering = False
        if not deeper:
            break
    return line


@njit(cache=True, _nrt=False)
def _answers(board, cells, dirs, k, attacker, attacker_fours, a_stamp, defender_fours, d_stamp, hits, found, out,
             moves):
    """The attacker's threes and the answers to them (``Gomoku.open_four_moves`` and
    ``Gomoku._defences``), where nobody completes a line at once: its moves that leave it
    two or more cells completing a line, into ``moves`` (among its four cells, marked
    ``a_stamp`` in ``attacker_fours``), and the defender's moves that do not lose to them,
    into ``out``: the cells in every threat's set (the move itself, or one of exactly two
    cells it would leave; ``hits`` counts them) and the defender's four cells (marked
    ``d_stamp`` in ``defender_fours``: a move gained). Both in ascending order; (the
    answers' count, the threats' count). A cell is marked where its entry is at least the
    stamp: a pass's stamp is the latest, or the marks are counts and the stamp 1."""
    threats = 0
    for c in cells:
        if attacker_fours[c] < a_stamp or board[c] != EMPTY:
            continue
        board[c] = attacker
        n = _completing_through(board, c, dirs, k, attacker, found)
        board[c] = EMPTY
        if n < 2:
            continue
        if threats == 0:
            for x in cells:
                hits[x] = 0
        moves[threats] = c
        threats += 1
        hits[c] += 1
        if n == 2:
            hits[found[0]] += 1
            hits[found[1]] += 1
    count = 0
    if threats:
        for c in cells:
            if board[c] == EMPTY and (hits[c] == threats or defender_fours[c] >= d_stamp):
                out[count] = c
                count += 1
    return count, threats


@njit(cache=True)
def threat_defences(own_bytes, other_bytes, lines, size, k):
    """``Gomoku.threat_defences`` for OWN to move: where OTHER has a three (a move that
    leaves it two or more cells completing its line) and nobody completes a line at once,
    the moves (padded cells, ascending) that do not lose to it: the cells that leave
    OTHER no such move (the move itself, or one of exactly two cells it would leave) and
    OWN's fours; where none is left, the cells of OTHER's such moves. Empty where OTHER
    has no three; ``[-1]`` where a line completes at once (``forcing_actions``' business)."""
    return threat_defences_on(_board(own_bytes, other_bytes, size, k), lines, size, k)


@njit(cache=True)
def threat_defences_on(board, lines, size, k):
    """``threat_defences`` on a padded board (``_board``'s, OWN to move)."""
    dirs = _dirs(size)
    fours = np.zeros(board.shape[0], dtype=np.int64)  # OWN's four cells, marked 1
    threes = np.zeros(board.shape[0], dtype=np.int64)  # OTHER's four cells, marked 1: its threes among them
    wins = np.zeros(board.shape[0], dtype=np.int64)  # the cells that complete a line (either's)
    _, own_wins, other_wins = scan_lines(board, lines, dirs, k, wins, wins, fours, threes, 1)
    if own_wins or other_wins:
        return np.full(1, -1, dtype=np.int64)  # (OTHER completes a line at once, or OWN does)
    return defences_marked(board, lines, dirs, k, fours, threes, 1)


@njit(cache=True)
def defences_marked(board, lines, dirs, k, fours, threes, stamp):
    """``threat_defences_on`` once the four cells of both are marked ``stamp``
    (``scan_lines``: OWN's in ``fours``, OTHER's in ``threes``) and neither completes a line."""
    hits = np.empty(board.shape[0], dtype=np.int64)  # the threats each cell stops
    found = np.empty(3, dtype=np.int64)
    replies = np.empty(lines.shape[1], dtype=np.int64)
    moves = np.empty(lines.shape[1], dtype=np.int64)
    count, threats = _answers(board, lines[4], dirs, k, OTHER, threes, stamp, fours, stamp, hits, found, replies,
                              moves)
    if threats == 0:
        return np.empty(0, dtype=np.int64)
    if count == 0:  # two threes (or more) that no one stone stops: each move loses; taking a threat's cell
        return moves[:threats].copy()  # makes the opponent use the other
    return replies[:count].copy()


# ---- victory by continuous threats, fours and threes (VCT) ----------------------------------------
#: the rows of the VCT's kept counts (``_lay``): each window's stones of OWN and of OTHER,
#: of ``k`` cells (``W_OWN``, ``W_OTHER``) and of ``k + 1`` (``W3_OWN``, ``W3_OTHER``); by
#: cell, the windows that make it a four cell of OWN's (``FOUR``) or of OTHER's
#: (``OTHER_FOUR``), complete OWN's line (``WIN``) or OTHER's (``OTHER_WIN``), and make it
#: a three cell of OWN's (``THREE``)
W_OWN, W_OTHER, W3_OWN, W3_OTHER, FOUR, OTHER_FOUR, WIN, OTHER_WIN, THREE = range(9)


@njit(cache=True, _nrt=False)
def _listed(bits, row, out):
    """The cells of ``bits``' row ``row`` into ``out``, ascending; how many."""
    count = 0
    for word_index in range(bits.shape[1]):
        word = bits[row, word_index]
        while word != 0:
            out[count] = word_index * 64 + _lowest(word)
            count += 1
            word &= word - 1
    return count


@njit(cache=True, inline="always")
def _gives(counts, k, w):
    """The row of ``counts`` whose cells window ``w`` (of ``k`` cells) adds to, or -1."""
    own, other = counts[W_OWN, w], counts[W_OTHER, w]
    if other == 0:
        return FOUR if own == k - 2 else WIN if own == k - 1 else -1
    if own == 0:
        return OTHER_FOUR if other == k - 2 else OTHER_WIN if other == k - 1 else -1
    return -1


@njit(cache=True, inline="always")
def _three(board, windows3, counts, k, w):
    """Whether window ``w`` of ``k + 1`` cells makes its inner empty cells three cells of
    OWN's (``Gomoku.three_cells``): both ends empty, ``k - 3`` of OWN's stones, none of OTHER's."""
    return (counts[W3_OTHER, w] == 0 and counts[W3_OWN, w] == k - 3 and board[windows3[w, 0]] == EMPTY
            and board[windows3[w, k]] == EMPTY)


@njit(cache=True, inline="always")
def _mark(counts, held, bits, row, x, sign):
    """Cell ``x`` given (``sign`` 1) or no longer given (-1) by one more window in ``row``:
    ``bits`` (rows ``FOUR``, ``OTHER_FOUR``, ``THREE`` from 0) keeps which cells have a
    count, ``held`` how many cells complete OWN's line and OTHER's and their sum
    ([0], [1] OTHER's; [2], [3] OWN's)."""
    counts[row, x] += sign
    if counts[row, x] != (1 if sign == 1 else 0):
        return
    if row == WIN or row == OTHER_WIN:
        at = 0 if row == OTHER_WIN else 2
        held[at] += sign
        held[at + 1] += sign * x
    else:
        b = 2 if row == THREE else row - FOUR
        bits[b, x >> 6] ^= np.int64(1) << (x & 63)


@njit(cache=True, _nrt=False)
def _lay(board, windows, through, windows3, through3, c, colour, k, counts, held, bits):
    """``_place`` for the VCT: a stone of ``colour`` laid on the empty cell ``c``
    (``EMPTY``: its stone taken back), with the counts of the windows of ``k`` and of
    ``k + 1`` cells through ``c`` kept and what they give (``W_OWN``... ``THREE``) taken
    back and given again."""
    step = 1 if colour != EMPTY else -1
    mine = (colour if colour != EMPTY else board[c]) == OWN
    for sign in (-1, 1):
        if sign == 1:
            board[c] = colour
        for j in range(through.shape[1]):
            w = through[c, j]
            if w < 0:
                break
            if sign == 1:
                counts[W_OWN if mine else W_OTHER, w] += step
            row = _gives(counts, k, w)
            if row >= 0:
                for i in range(k):
                    x = windows[w, i]
                    if board[x] == EMPTY:
                        _mark(counts, held, bits, row, x, sign)
        for j in range(through3.shape[1]):
            w = through3[c, j]
            if w < 0:
                break
            if sign == 1:
                counts[W3_OWN if mine else W3_OTHER, w] += step
            if _three(board, windows3, counts, k, w):
                for i in range(1, k):
                    x = windows3[w, i]
                    if board[x] == EMPTY:
                        _mark(counts, held, bits, THREE, x, sign)


@njit(cache=True, _nrt=False)
def _counted_start(board, windows, windows3, k, counts, held, bits):
    """The VCT's counts (``_lay``) of the position on ``board``, by one pass over the windows."""
    for w in range(windows.shape[0]):
        for i in range(k):
            v = board[windows[w, i]]
            if v != EMPTY:
                counts[W_OWN if v == OWN else W_OTHER, w] += 1
        row = _gives(counts, k, w)
        if row >= 0:
            for i in range(k):
                if board[windows[w, i]] == EMPTY:
                    _mark(counts, held, bits, row, windows[w, i], 1)
    for w in range(windows3.shape[0]):
        for i in range(k + 1):
            v = board[windows3[w, i]]
            if v != EMPTY:
                counts[W3_OWN if v == OWN else W3_OTHER, w] += 1
        if _three(board, windows3, counts, k, w):
            for i in range(1, k):
                if board[windows3[w, i]] == EMPTY:
                    _mark(counts, held, bits, THREE, windows3[w, i], 1)


@njit(cache=True)
def _replies(board, cells, dirs, k, counts, held, found, hits, out):
    """``Gomoku._replies`` after a move of OWN (laid with ``_lay``): the defender's moves
    into ``out`` in ascending order and their count; 0: OWN has won (two cells complete its
    line); -1: no threat, or OTHER completes a line at once."""
    if held[0]:  # OTHER completes a line
        return -1
    if held[2] >= 2:
        return 0
    if held[2] == 1:  # a four: the one cell that blocks it
        out[0] = held[3]
        return 1
    moves = np.empty(out.shape[0], dtype=np.int64)
    count, threats = _answers(board, cells, dirs, k, OWN, counts[FOUR], 1, counts[OTHER_FOUR], 1, hits, found, out,
                              moves)
    if threats == 0:
        return -1
    if count == 0:  # nothing stops it: the first cell of the open four, to show the win to its end
        out[0] = moves[0]
        count = 1
    return count


@njit(cache=True, _nrt=False)
def _store(keys, used, depths, line_at, slot, key, depth, line):
    keys[slot], used[slot], depths[slot], line_at[slot] = key, True, depth, line


@njit(cache=True)
def _vct(board, tables, k, depth, key, zobrist, keys, used, depths, line_at, pool, meta, counts, held, bits, found,
         hits):
    """``Gomoku.continuous_threats`` for OWN to move in the position ``key`` (its Zobrist
    hash): the line's offset in ``pool`` (its length, then its cells), or -1. ``tables``:
    the lines, the windows of ``k`` and of ``k + 1`` cells and the cells through them, the
    directions; ``counts``, ``held``, ``bits``: the position's (``_lay``); ``meta``: [0]
    the positions left of the budget, [1] the pool's length."""
    lines, windows, through, windows3, through3, dirs = tables
    slot = _lookup(keys, used, key)
    if used[slot] and (line_at[slot] >= 0 or depths[slot] >= depth):
        return line_at[slot]
    meta[0] -= 1
    if meta[0] < 0 or depth < 1:
        return -1
    cells = lines[4]
    if held[0] >= 2:  # OTHER completes a line in two places
        _store(keys, used, depths, line_at, slot, key, depth, -1)
        return -1
    moves = np.empty(cells.shape[0], dtype=np.int64)
    count = 0
    if held[0] == 1:  # the defender's four is blocked first: that must keep a threat
        moves[0] = held[1]
        count = 1
    else:  # OWN's four cells, then its three cells that are not four cells, each in ascending order
        count = _listed(bits, 0, moves)
        threes = np.empty(cells.shape[0], dtype=np.int64)
        for i in range(_listed(bits, 2, threes)):
            if counts[FOUR, threes[i]] == 0:
                moves[count] = threes[i]
                count += 1
    replies = np.empty(cells.shape[0], dtype=np.int64)
    line = -1
    for i in range(count):
        m = moves[i]
        _lay(board, windows, through, windows3, through3, m, OWN, k, counts, held, bits)
        n = _replies(board, cells, dirs, k, counts, held, found, hits, replies)
        if n < 0:
            _lay(board, windows, through, windows3, through3, m, EMPTY, k, counts, held, bits)
            continue
        best_reply, best_rest, lost = -1, -1, False
        for j in range(n):  # (the positions below have buffers of their own)
            reply = replies[j]
            _lay(board, windows, through, windows3, through3, reply, OTHER, k, counts, held, bits)
            rest = _vct(board, tables, k, depth - 1, key ^ zobrist[0, m] ^ zobrist[1, reply], zobrist, keys, used,
                        depths, line_at, pool, meta, counts, held, bits, found, hits)
            _lay(board, windows, through, windows3, through3, reply, EMPTY, k, counts, held, bits)
            if rest < 0:
                lost = True
                break
            if best_rest < 0 or pool[rest] + 1 > pool[best_rest] + 1:
                best_reply, best_rest = reply, rest
        _lay(board, windows, through, windows3, through3, m, EMPTY, k, counts, held, bits)
        if not lost:
            line = meta[1]
            length = 1 if best_rest < 0 else 2 + pool[best_rest]
            pool[line] = length
            pool[line + 1] = m
            if best_rest >= 0:
                pool[line + 2] = best_reply
                for j in range(pool[best_rest]):
                    pool[line + 3 + j] = pool[best_rest + 1 + j]
            meta[1] += length + 1
            break
    _store(keys, used, depths, line_at, slot, key, depth, line)
    return line


@njit(cache=True)
def continuous_threats(own_bytes, other_bytes, lines, windows, through, windows3, through3, size, k, max_depth,
                       budget, zobrist):
    """``Gomoku.forced_win``'s victory by continuous threats (fours and threes) for the
    owner of ``own_bytes`` to move, where nobody completes a line at once: iterative
    deepening to ``max_depth`` attacker moves, one table and one budget of ``budget``
    positions across the depths, as ``Gomoku._deepening(continuous_threats, ...)``. The
    line (padded cells: the attacker's moves and the replies of the longest defence in
    turn), empty when none is found. ``windows``, ``through``: ``windows_of(size, k)``;
    ``windows3``, ``through3``: ``windows_of(size, k + 1)``; each window's stones, and what
    they give, are kept as stones are laid and taken back (``_lay``), as the VCF keeps
    its own."""
    board = _board(own_bytes, other_bytes, size, k)
    tables = (lines, windows, through, windows3, through3, _dirs(size))
    keys, used, depths = _table(budget)
    line_at = np.full(keys.shape[0], -1, dtype=np.int64)
    pool = np.zeros((budget + 2) * (2 * max_depth + 3), dtype=np.int64)
    meta = np.zeros(2, dtype=np.int64)
    meta[0] = budget
    counts = np.zeros((9, max(windows.shape[0], windows3.shape[0], board.shape[0])), dtype=np.int64)
    held = np.zeros(4, dtype=np.int64)
    bits = np.zeros((3, (board.shape[0] + 63) // 64), dtype=np.int64)
    _counted_start(board, windows, windows3, k, counts, held, bits)
    hits = np.empty(board.shape[0], dtype=np.int64)
    found = np.empty(3, dtype=np.int64)
    root = _hash(board, lines[4], zobrist)
    for limit in range(1, max_depth + 1):
        if meta[0] <= 0:
            break
        at = _vct(board, tables, k, limit, root, zobrist, keys, used, depths, line_at, pool, meta, counts, held, bits,
                  found, hits)
        if at >= 0:
            return pool[at + 1:at + 1 + pool[at]].copy()
    return np.empty(0, dtype=np.int64)
