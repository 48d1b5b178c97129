"""Virtual connections (H-search) for Hex: what a player's stones guarantee, found by
Anshelevich's two rules, as MoHex's solver and search use them.

A **full connection** between two points (an empty cell, a group of the player's stones
or one of the player's two sides) with a *carrier* (a set of empty cells) is one the
player keeps with the opponent to move: every intrusion into the carrier has an answer
inside it. A **semi connection** is one the player makes by moving first (into its key).
Both are found by

- the base: two neighbouring points are fully connected, carrier empty;
- the AND rule: full connections x-z and z-y with disjoint carriers that hold neither x
  nor y give x-y a full connection through a group z (carrier: the union), a semi through
  an empty cell z (carrier: the union and z);
- the OR rule: semi connections of x-y whose carriers share no cell give a full one
  (carrier: the union): whatever the opponent takes, one is left to complete.

H-search is sound (a connection it finds is real) but incomplete, and it is capped here
(``MAX_FULL``, ``MAX_SEMI`` carriers a pair, ``OR_DEPTH`` semis an OR), so it misses some.
What the search takes from it (``Hex.forced_win``, ``Hex.threat_defences`` with the
game's ``vc`` setting):

- the player to move holding a semi or full connection between their sides **wins**;
- facing the opponent's semi connections between the opponent's sides, the player to move
  must play in the cells every one of them needs (the intersection of their carriers and
  keys): a move elsewhere lets the opponent complete one; none left (or an opponent's full
  connection) means the position is lost.

With the game's ``prune`` setting the search also leaves out, for the player to move, the
cells ``fill_in`` fills (dead cells and captured ones, as MoHex prunes them: ``prune``).

The search runs compiled (numba, ``search``): carriers are bitsets of 64-bit words, the
connections of each pair of points in arrays, the new full connections worked off smallest
carrier first (a bucket queue: the AND rule only makes larger ones). ``won_line`` and
``must_play`` answer the search (``hex_kernels.moves`` on the array tree, ``Hex``'s methods
on the object tree: the same functions); ``Connections`` lets a person or a test read the
connections, carriers as Python ints (bit ``a`` is cell ``a``, as ``Hex``'s bitboards).
``tests/test_hex_vc.py`` holds the claims to ``games.hex_solver``.
"""

from __future__ import annotations

import numpy as np

from hexzero.mctsfw.jit import njit

#: connections kept a pair of points (the smallest carriers found)
MAX_FULL = 4
MAX_SEMI = 12
#: semis combined by one OR at most
OR_DEPTH = 4
M1, M2, M4 = np.uint64(0x5555555555555555), np.uint64(0x3333333333333333), np.uint64(0x0F0F0F0F0F0F0F0F)
H01 = np.uint64(0x0101010101010101)
ONE = np.uint64(1)
#: the six around a cell in turn (row, column offsets): each touches the next
RING_R = np.array([-1, -1, 0, 1, 1, 0], np.int64)
RING_C = np.array([0, 1, 1, 0, -1, -1], np.int64)
#: off the board in a ring: player 1's first and last row, player 2's first and last
#: column (as ``_ring`` writes them), and off a corner (both: neither's side for sure)
NORTH, SOUTH, WEST, EAST, CORNER = -1, -2, -3, -4, -5
#: what ``fill_in`` did to a cell: filled as dead, captured by the searching player,
#: captured by the opponent
DEAD, CAPTURED, CAPTURED_BY_THEM = 1, 2, 3
#: ``search``'s ``rows``: the queue's length, and the first rows of the semis' carriers,
#: the queue's and the scratch rows (the fulls' from row 0)
USED, SEMIS, QUEUE, SCRATCH = 0, 1, 2, 3


# Every compiled function here that allocates nothing is compiled without numba's
# reference counting (``_nrt=False``): an array passed to a function so compiled costs no
# atomic count kept up on entry and exit, which, called in the search's inner loops, was
# most of its time (10.8 ms an H-search on random 11x11 boards of 20 stones, 3.7 ms now,
# the same connections).


@njit(cache=True, _nrt=False)
def _bits_in(x):
    """The cells of one word."""
    x = x - ((x >> ONE) & M1)
    x = (x & M2) + ((x >> np.uint64(2)) & M2)
    x = (x + (x >> np.uint64(4))) & M4
    return int((x * H01) >> np.uint64(56))


@njit(cache=True, _nrt=False)
def _count(c):
    """The cells of a carrier."""
    total = 0
    for k in range(c.shape[0]):
        total += _bits_in(c[k])
    return total


@njit(cache=True, _nrt=False)
def _has(c, cell):
    return (c[cell >> 6] >> np.uint64(cell & 63)) & ONE != np.uint64(0)


@njit(cache=True, _nrt=False)
def _and(out, a, b):
    """``out`` = a & b; whether any cell is left."""
    left = np.uint64(0)
    for k in range(out.shape[0]):
        out[k] = a[k] & b[k]
        left |= out[k]
    return left != np.uint64(0)


# The search keeps every carrier as a row of one array of words (``c``: the carriers of
# each pair of points, the queue's, its scratch rows) and the helpers below take that
# array and row numbers: a row taken out as an array of its own (``c[r]``) would cost
# a reference count kept up as well.


@njit(cache=True, _nrt=False)
def _size(c, r):
    """The cells of carrier ``r``."""
    total = 0
    for k in range(c.shape[1]):
        total += _bits_in(c[r, k])
    return total


@njit(cache=True, _nrt=False)
def _inside(c, a, b):
    """Whether carrier ``a`` lies inside ``b``."""
    for k in range(c.shape[1]):
        if c[a, k] & ~c[b, k]:
            return False
    return True


@njit(cache=True, _nrt=False)
def _apart(c, a, b):
    """Whether carriers ``a`` and ``b`` share no cell."""
    for k in range(c.shape[1]):
        if c[a, k] & c[b, k]:
            return False
    return True


@njit(cache=True, _nrt=False)
def _meet(c, out, a, b):
    """Carrier ``out`` = a & b; whether any cell is left."""
    left = np.uint64(0)
    for k in range(c.shape[1]):
        c[out, k] = c[a, k] & c[b, k]
        left |= c[out, k]
    return left != np.uint64(0)


@njit(cache=True, _nrt=False)
def _join(c, out, a, b):
    """Carrier ``out`` = a | b."""
    for k in range(c.shape[1]):
        c[out, k] = c[a, k] | c[b, k]


@njit(cache=True, _nrt=False)
def _copy(c, out, a):
    for k in range(c.shape[1]):
        c[out, k] = c[a, k]


@njit(cache=True, _nrt=False)
def _holds(c, r, cell):
    """Whether carrier ``r`` holds ``cell``."""
    return (c[r, cell >> 6] >> np.uint64(cell & 63)) & ONE != np.uint64(0)


@njit(cache=True, _nrt=False)
def _keep(count, c, base, keys, sizes, i, j, new, size, key, most):
    """Carrier ``new`` (of ``size`` cells) joins the carriers of pair (i, j) (rows ``base +
    slot``, ``slot`` counted from ``(i * points + j) * most``) unless one of them lies
    inside it; those that hold it go; at the cap it replaces the largest, if it is smaller.
    Whether it joined. (A carrier can only lie inside one no smaller than itself: the sizes,
    kept beside the carriers, spare most of the comparisons.)"""
    m = count[i, j]
    first = base + (i * count.shape[0] + j) * most
    for t in range(m):
        if sizes[i, j, t] <= size and _inside(c, first + t, new):
            return False
    k = 0
    for t in range(m):
        if sizes[i, j, t] < size or not _inside(c, new, first + t):
            if k != t:
                _copy(c, first + k, first + t)
                keys[i, j, k] = keys[i, j, t]
                sizes[i, j, k] = sizes[i, j, t]
            k += 1
    m = k
    if m >= most:
        big, largest = 0, -1
        for t in range(m):
            if sizes[i, j, t] > largest:
                big, largest = t, sizes[i, j, t]
        if largest <= size:
            count[i, j] = m
            return False
        m -= 1
        _copy(c, first + big, first + m)
        keys[i, j, big] = keys[i, j, m]
        sizes[i, j, big] = sizes[i, j, m]
    _copy(c, first + m, new)
    keys[i, j, m] = key
    sizes[i, j, m] = size
    count[i, j] = m + 1
    return True


@njit(cache=True, _nrt=False)
def _add_full(x, y, new, size, c, fn, fk, fz, atn, atl, atf, head, enext, ex, ey, rows):
    """A full connection x-y with carrier ``new`` (a row of ``c``) of ``size`` cells, queued
    for the AND rule (the queue's carriers from row ``rows[QUEUE]``, ``rows[USED]`` of them)."""
    i, j = min(x, y), max(x, y)
    if not _keep(fn, c, 0, fk, fz, i, j, new, size, 0, MAX_FULL):
        return
    if not atf[x, y]:
        atf[x, y] = atf[y, x] = True
        atl[x, atn[x]] = y
        atn[x] += 1
        atl[y, atn[y]] = x
        atn[y] += 1
    e = rows[USED]
    if e == ex.shape[0]:
        return  # (the queue is full: the connection stays, its consequences are not drawn)
    rows[USED] = e + 1
    ex[e], ey[e] = x, y
    _copy(c, rows[QUEUE] + e, new)
    enext[e] = head[size]
    head[size] = e


@njit(cache=True, _nrt=False)
def _add_semi(x, y, new, size, z, c, fn, fk, fz, sn, sk, sz, atn, atl, atf, head, enext, ex, ey, rows, picked):
    """A semi connection x-y with carrier ``new`` of ``size`` cells and key ``z``; the OR
    rule: with each set of up to three others whose carriers leave no cell common to all
    (and no smaller such set within it), a full connection."""
    i, j = min(x, y), max(x, y)
    points = fn.shape[0]
    fulls = (i * points + j) * MAX_FULL
    for t in range(fn[i, j]):
        if fz[i, j, t] <= size and _inside(c, fulls + t, new):
            return
    semis = rows[SEMIS]
    if not _keep(sn, c, semis, sk, sz, i, j, new, size, z, MAX_SEMI):
        return
    # the new semi is the last kept: combine it with sets of the others, in order, depth
    # first (rows ``common + d``, ``union + d``: of the new one and the d others picked);
    # none where a cell is common to all of them
    m = sn[i, j] - 1
    first = semis + (i * points + j) * MAX_SEMI
    common, union = rows[SCRATCH], rows[SCRATCH] + OR_DEPTH
    _copy(c, common + 1, first + m)
    for a in range(m):
        if not _meet(c, common + 1, common + 1, first + a):
            break
    else:
        return
    _copy(c, common, first + m)
    _copy(c, union, first + m)
    d = 1
    picked[1] = -1
    while d >= 1:
        picked[d] += 1
        a = picked[d]
        if a >= m:
            d -= 1
            continue
        if d + 1 == OR_DEPTH:  # (the last one picked: only a set left with no common cell counts)
            if _apart(c, common + d - 1, first + a):
                _join(c, union + d, union + d - 1, first + a)
                _add_full(x, y, union + d, _size(c, union + d), c, fn, fk, fz, atn, atl, atf, head, enext, ex, ey,
                          rows)
            continue
        left = _meet(c, common + d, common + d - 1, first + a)
        if _inside(c, common + d - 1, common + d):
            continue  # (no cell taken out of the common ones)
        _join(c, union + d, union + d - 1, first + a)
        if not left:
            _add_full(x, y, union + d, _size(c, union + d), c, fn, fk, fz, atn, atl, atf, head, enext, ex, ey,
                      rows)
        elif d + 1 < OR_DEPTH:
            d += 1
            picked[d] = a


@njit(cache=True, _nrt=False)
def _ring(n, cell, out):
    """The six around ``cell`` in turn: a cell, or the side off the board there."""
    r, c = cell // n, cell % n
    for d in range(6):
        rr, cc = r + RING_R[d], c + RING_C[d]
        off_row, off_column = rr < 0 or rr >= n, cc < 0 or cc >= n
        if off_row and off_column:
            out[d] = CORNER
        elif off_row:
            out[d] = NORTH if rr < 0 else SOUTH
        elif off_column:
            out[d] = WEST if cc < 0 else EAST
        else:
            out[d] = rr * n + cc


@njit(cache=True, _nrt=False)
def _owns(x, colour):
    """Whether ring entry ``x`` (a side) is ``colour``'s side."""
    return (colour == 1 and (x == NORTH or x == SOUTH)) or (colour == 2 and (x == WEST or x == EAST))


@njit(cache=True, _nrt=False)
def _solid(board, x, colour):
    return board[x] == colour if x >= 0 else _owns(x, colour)


@njit(cache=True, _nrt=False)
def _on(n, cell, side):
    """Whether ``cell`` lies on ``side``."""
    if side == NORTH:
        return cell < n
    if side == SOUTH:
        return cell >= n * (n - 1)
    if side == WEST:
        return cell % n == 0
    return cell % n == n - 1


@njit(cache=True, _nrt=False)
def _useless(board, n, ring, colour, group):
    """Whether a stone of ``colour`` in the empty cell with ``ring`` around it joins
    nothing that is not joined without it: every two around it that can end up
    ``colour``'s and do not touch are already one group, or one side, or joined by an
    arc of the ring that is ``colour``'s already. Then no shortest chain of ``colour``'s
    passes through the cell, whatever is played."""
    for i in range(6):
        a = ring[i]
        if a == CORNER or (a >= 0 and board[a] == 3 - colour) or (a < 0 and not _owns(a, colour)):
            continue
        for j in range(i + 2, 6):
            if i == 0 and j == 5:
                continue  # (neighbours in the ring touch)
            b = ring[j]
            if b == CORNER or (b >= 0 and board[b] == 3 - colour) or (b < 0 and not _owns(b, colour)):
                continue
            if a < 0 and b < 0:
                if a == b:
                    continue
            elif a < 0:
                if _on(n, b, a):
                    continue
            elif b < 0:
                if _on(n, a, b):
                    continue
            elif board[a] == colour and board[b] == colour and group[a] == group[b]:
                continue
            joined = True
            for k in range(i + 1, j):
                joined = joined and _solid(board, ring[k], colour)
            if not joined:
                joined = True
                for k in range(j + 1, i + 6):
                    joined = joined and _solid(board, ring[k % 6], colour)
            if not joined:
                return False
    return True


@njit(cache=True, _nrt=False)
def _dead(board, n, cell, group, ring):
    """Whether the empty ``cell`` is dead: useless to both players, so either may have it."""
    _ring(n, cell, ring)
    return _useless(board, n, ring, 1, group) and _useless(board, n, ring, 2, group)


@njit(cache=True, _nrt=False)
def _label(board, n, nbr, group, stack):
    """``group[cell]``: a number shared by the cells of each group of stones."""
    group[:] = -1
    for a in range(n * n):
        if board[a] == 0 or group[a] >= 0:
            continue
        group[a] = a
        stack[0] = a
        top = 1
        while top > 0:
            top -= 1
            p = stack[top]
            for d in range(6):
                q = nbr[p, d]
                if q >= 0 and board[q] == board[a] and group[q] < 0:
                    group[q] = a
                    stack[top] = q
                    top += 1


@njit(cache=True)
def fill_in(row, n, nbr, player):
    """The board ``row`` with its inferior cells filled, for ``player``'s H-search, and
    what was done to each cell (``DEAD``, ``CAPTURED``, ``CAPTURED_BY_THEM``, else 0).
    Neither changes who wins (Hayward and Henderson's fill-in, as MoHex does it):

    - a **dead** cell (no stone there joins anything for either player, ``_useless``)
      takes the opponent's stone;
    - two touching empty cells that a player **captures** (the opponent's stone in one
      is dead once the player answers in the other, either way round) take that
      player's stones.

    Filled until nothing more is found (a stone placed can make more cells dead). A
    stone placed gets a group of its own: groups are found again each round."""
    cells = n * n
    board = row.copy()
    done = np.zeros(cells, np.int8)
    group = np.empty(cells, np.int64)
    stack = np.empty(cells, np.int64)
    ring = np.empty(6, np.int64)
    around = np.empty(6, np.int64)
    changed = True
    while changed:
        changed = False
        _label(board, n, nbr, group, stack)
        for a in range(cells):
            if board[a] == 0 and _dead(board, n, a, group, ring):
                board[a] = 3 - player
                group[a] = cells + a
                done[a] = DEAD
                changed = True
        for a in range(cells):
            if board[a] != 0:
                continue
            _ring(n, a, around)
            for d in range(6):
                q = around[d]
                if q <= a or board[q] != 0:
                    continue
                for colour in (player, 3 - player):
                    board[q], group[q] = colour, cells + q
                    kept = _dead(board, n, a, group, ring)
                    board[q] = 0
                    if kept:
                        board[a], group[a] = colour, cells + a
                        kept = _dead(board, n, q, group, ring)
                        board[a] = 0
                    if kept:
                        board[a] = board[q] = colour
                        done[a] = done[q] = CAPTURED if colour == player else CAPTURED_BY_THEM
                        changed = True
                        break
                if board[a] != 0:
                    break
    return board, done


@njit(cache=True)
def search(row, n, player, nbr, fill=True):
    """H-search for ``player`` on the board ``row`` (0 empty, 1 and 2 the players' stones,
    ``n*n`` cells in action order; ``nbr`` each cell's neighbours). Points: the empty cells
    (their number), the player's sides (``n*n``, ``n*n + 1``: a group touching a side is
    that side), the other groups (from ``n*n + 2``). Returns the full connections (counts
    by pair of points, lower point first; carriers), the semis (counts, carriers, keys) and
    each stone's point, on the board with its inferior cells filled (``fill_in``, unless
    ``fill`` is False; and what it did to each cell)."""
    if fill:
        row, done = fill_in(row, n, nbr, player)
    else:
        done = np.zeros(n * n, np.int8)
    cells = n * n
    w = (cells + 63) // 64
    start, end = cells, cells + 1
    point = np.full(cells, -1, np.int64)
    stack = np.empty(cells, np.int64)
    members = np.empty(cells, np.int64)
    groups = 0
    joined = False  # (the player's sides, by a group: fill-in can join them)
    for a in range(cells):
        if row[a] != player or point[a] != -1:
            continue
        point[a] = -2
        stack[0] = a
        top, size = 1, 0
        touches_start = touches_end = False
        while top > 0:
            top -= 1
            p = stack[top]
            members[size] = p
            size += 1
            line = p // n if player == 1 else p % n
            touches_start |= line == 0
            touches_end |= line == n - 1
            for d in range(6):
                q = nbr[p, d]
                if q >= 0 and row[q] == player and point[q] == -1:
                    point[q] = -2
                    stack[top] = q
                    top += 1
        joined |= touches_start and touches_end
        if touches_start:
            pid = start
        elif touches_end:
            pid = end
        else:
            pid = cells + 2 + groups
            groups += 1
        for t in range(size):
            point[members[t]] = pid
    points = cells + 2 + groups
    fn = np.zeros((points, points), np.int64)
    fk = np.empty((points, points, MAX_FULL), np.int64)  # (a full connection has no key)
    fz = np.empty((points, points, MAX_FULL), np.int64)
    sn = np.zeros((points, points), np.int64)
    sk = np.empty((points, points, MAX_SEMI), np.int64)
    sz = np.empty((points, points, MAX_SEMI), np.int64)
    atn = np.zeros(points, np.int64)
    atl = np.empty((points, points), np.int64)
    atf = np.zeros((points, points), np.bool_)
    capacity = points * points * MAX_FULL
    head = np.full(cells + 1, -1, np.int64)
    enext = np.empty(capacity, np.int64)
    ex = np.empty(capacity, np.int64)
    ey = np.empty(capacity, np.int64)
    # every carrier a row of ``c``: the fulls' (pair by pair), the semis', the queue's,
    # the OR rule's scratch rows, the AND rule's new one and an empty one
    rows = np.zeros(4, np.int64)
    rows[SEMIS] = capacity
    rows[QUEUE] = rows[SEMIS] + points * points * MAX_SEMI
    rows[SCRATCH] = rows[QUEUE] + capacity
    new, zero = rows[SCRATCH] + 2 * OR_DEPTH, rows[SCRATCH] + 2 * OR_DEPTH + 1
    c = np.empty((zero + 1, w), np.uint64)
    c[zero] = 0
    picked = np.empty(OR_DEPTH, np.int64)
    for a in range(cells):
        if row[a] != 0:
            continue
        for d in range(6):
            q = nbr[a, d]
            if q < 0 or row[q] == 3 - player:
                continue
            _add_full(a, q if row[q] == 0 else point[q], zero, 0, c, fn, fk, fz, atn, atl, atf, head, enext, ex, ey,
                      rows)
        line = a // n if player == 1 else a % n
        if line == 0:
            _add_full(a, start, zero, 0, c, fn, fk, fz, atn, atl, atf, head, enext, ex, ey, rows)
        if line == n - 1:
            _add_full(a, end, zero, 0, c, fn, fk, fz, atn, atl, atf, head, enext, ex, ey, rows)
    if joined:
        _add_full(start, end, zero, 0, c, fn, fk, fz, atn, atl, atf, head, enext, ex, ey, rows)
    size = 0
    while True:
        while size <= cells and head[size] < 0:
            size += 1
        if size > cells:
            break
        e = head[size]
        head[size] = enext[e]
        x, y = ex[e], ey[e]
        carrier = rows[QUEUE] + e
        for side in range(2):
            z, other = (x, y) if side == 0 else (y, x)
            if z == start or z == end:
                continue  # (through a side: everything near it joins everything near it)
            for k in range(atn[z]):
                v = atl[z, k]
                if v == other:
                    continue
                i, j = min(z, v), max(z, v)
                fulls = (i * points + j) * MAX_FULL
                for t in range(fn[i, j]):
                    if (not _apart(c, fulls + t, carrier) or (other < cells and _holds(c, fulls + t, other))
                            or (v < cells and _holds(c, carrier, v))):
                        continue
                    _join(c, new, carrier, fulls + t)
                    # (the two carriers share no cell: the sizes add)
                    if z >= cells:
                        _add_full(other, v, new, size + fz[i, j, t], c, fn, fk, fz, atn, atl, atf, head, enext, ex,
                                  ey, rows)
                    else:
                        c[new, z >> 6] |= ONE << np.uint64(z & 63)
                        _add_semi(other, v, new, size + fz[i, j, t] + 1, z, c, fn, fk, fz, sn, sk, sz, atn, atl,
                                  atf, head, enext, ex, ey, rows, picked)
    fc = c[:capacity].reshape((points, points, MAX_FULL, w))
    sc = c[rows[SEMIS]:rows[QUEUE]].reshape((points, points, MAX_SEMI, w))
    return fn, fc, sn, sc, sk, point, done


@njit(cache=True, _nrt=False)
def _smallest(count, carriers, i, j):
    """The first of the smallest carriers of pair (i, j)."""
    best, size = 0, 1 << 30
    for t in range(count[i, j]):
        s = _count(carriers[i, j, t])
        if s < size:
            best, size = t, s
    return best


@njit(cache=True)
def won_line(row, n, player, nbr, line):
    """For ``player`` to move: a move that keeps a connection between the sides (the key
    of the smallest semi connection: the rest of its carrier is then a full one; else the
    lowest cell of the smallest full connection's carrier, which a stone of the owner's
    does not spoil, or of the cells the player captures), then the other cells of that
    carrier and the cells the player captures, in ``line``; their number (0: the player
    holds no such connection)."""
    fn, fc, sn, sc, sk, _, done = search(row, n, player, nbr)
    s, e = n * n, n * n + 1
    if sn[s, e]:
        t = _smallest(sn, sc, s, e)
        carrier, move = sc[s, e, t], sk[s, e, t]
    elif fn[s, e]:
        carrier = fc[s, e, _smallest(fn, fc, s, e)]
        move = -1
        for cell in range(n * n):
            if move < 0 and (_has(carrier, cell) or done[cell] == CAPTURED):
                move = cell
        if move < 0:
            return 0  # (the sides joined on the board as it is: the game is over)
    else:
        return 0
    line[0] = move
    k = 1
    for cell in range(n * n):
        if cell != move and (_has(carrier, cell) or done[cell] == CAPTURED):
            line[k] = cell
            k += 1
    return k


@njit(cache=True)
def must_play(row, n, player, nbr, mask):
    """For the opponent of ``player``, to move: in ``mask`` the cells every one of the
    player's semi connections between the sides needs (a move elsewhere lets the player
    complete one); where they share none or the player holds a full connection, every
    move loses, and the cells of the smallest carrier (fulls first) are kept. The cells
    the player captures are kept too (a move there is answered in the pair: it wastes a
    move but need not lose). Their number; 0 (``mask`` untouched) where the player holds
    no connection between the sides."""
    fn, fc, sn, sc, _, _, done = search(row, n, player, nbr)
    s, e = n * n, n * n + 1
    if not fn[s, e] and not sn[s, e]:
        return 0
    kept = sc[s, e, 0].copy()
    left = fn[s, e] == 0
    if left:
        for t in range(1, sn[s, e]):
            left = _and(kept, kept, sc[s, e, t])
    if not left:
        if fn[s, e]:
            t = _smallest(fn, fc, s, e)
            kept[:] = fc[s, e, t]
            if sn[s, e]:
                u = _smallest(sn, sc, s, e)
                if _count(sc[s, e, u]) < _count(kept):
                    kept[:] = sc[s, e, u]
        else:
            kept[:] = sc[s, e, _smallest(sn, sc, s, e)]
    found = 0
    for cell in range(n * n):
        mask[cell] = _has(kept, cell) or done[cell] == CAPTURED
        found += mask[cell]
    return found


@njit(cache=True)
def prune(row, n, player, nbr, mask):
    """Leaves out of ``mask`` (``player``'s moves, ``player`` to move) the cells ``fill_in``
    fills for them: a stone in a dead cell, or in one the player captures, changes
    nothing, and one in a cell the opponent captures is answered in its pair, which leaves
    the position as it was. The board with those cells filled has the winner of the board
    as it is, and filling them stays right after any other move, so where the player wins,
    a move among the cells left wins too. Every cell stays where none would be left. The
    number of cells left in ``mask``."""
    _, done = fill_in(row, n, nbr, player)
    left = 0
    for cell in range(n * n):
        left += mask[cell] and done[cell] == 0
    if left == 0:
        return int(mask.sum())
    for cell in range(n * n):
        if done[cell] != 0:
            mask[cell] = False
    return left


def _int(words) -> int:
    return int.from_bytes(np.ascontiguousarray(words).tobytes(), "little")


class Connections:
    """The full and semi connections of ``player`` on the board ``(mine, theirs)``
    (``Hex`` bitboards) of the ``Hex`` game ``game``, found by ``search``: for reading
    them (the tests, a user's look); the search asks ``won_line`` and ``must_play``."""

    def __init__(self, game, mine: int, theirs: int, player: int, fill: bool = True):
        from hexzero.games.hex_kernels import neighbour_table  # (which calls this module's kernels)

        n = game.size
        cells = n * n
        row = np.zeros(cells, np.int8)
        for a in _bits(mine):
            row[a] = player
        for a in _bits(theirs):
            row[a] = 3 - player
        self.START, self.END = cells, cells + 1
        self._fn, self._fc, self._sn, self._sc, self._sk, self._point, self._done = search(
            row, n, player, neighbour_table(n), fill)

    def point(self, cell: int) -> int:
        """The point of a stone of the player's (a group, or a side)."""
        return int(self._point[cell])

    def filled(self, what: int) -> int:
        """The cells ``fill_in`` filled as ``what`` (``DEAD``, ``CAPTURED`` by the player,
        ``CAPTURED_BY_THEM``), as bits."""
        return sum(1 << int(a) for a in np.flatnonzero(self._done == what))

    def between(self, x: int, y: int, kind: str) -> list[int]:
        """The carriers of ``kind`` ("full" or "semi") connections between points x and y."""
        i, j = min(x, y), max(x, y)
        count, carriers = (self._fn, self._fc) if kind == "full" else (self._sn, self._sc)
        return [_int(carriers[i, j, t]) for t in range(count[i, j])]

    def sides(self, kind: str) -> list[int]:
        """The carriers of the player's ``kind`` connections between their sides."""
        return self.between(self.START, self.END, kind)


def connections(game, state, player: int, fill: bool = True) -> Connections:
    """``player``'s connections in the ``Hex`` state ``state`` (a game not over), on the
    board with its inferior cells filled (``fill_in``) unless ``fill`` is False."""
    return Connections(game, state[player], state[3 - player], player, fill)


def _bits(x: int):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low
