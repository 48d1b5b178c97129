"""Hex's pairing connections (numba): the bridges and edge templates a player's stones already
hold, the knowledge a search proves Hex positions with.

A **pairing connection** of a player is a chain of the player's groups from one of the
player's sides to the other in which each link is solid (a group on its side), a bridge
(two or more empty cells next to both groups, or to a group and its side: the second-row
edge template is such a link), a **ladder** (below) or, at most once, a gap (a single such
cell), the links' cells all different. Its owner answers an intrusion into a bridge with
the bridge's other cell, so a chain without a gap cannot be cut, and a chain with one is
completed by filling the gap: whoever holds one and is to move (or holds one without a
gap) wins.

A **second-line ladder** with an escape is a link too: a group on the second line whose
only empty cell on the first line is one cell (the opponent blocked the template's other)
threatens to fill it; the opponent blocks, the owner steps along the second line beside
the group (a new single threat), and so on, until a step meets an escape: a stone of the
owner's on the side, or one on the second line with its other first-line cell empty (an
edge template then). With an escape ahead the ladder cannot be cut: an intrusion anywhere
else in its cells (the threats, the steps, the escape's template cell) is answered by
filling the threatened cell, a block of it by the next step (``_ladder``; the cells count
as the link's, the threatened cell and the first step are its intrusion and answer). A
group whose first-line cells are all blocked but whose next step would start such a
ladder holds it as a gap: the step is the gap's cell, the ladder's cells the link's
(``_stepped``). A ladder without an escape stays a gap of one cell, or nothing.

``chains`` finds them by a depth-first walk over the groups (node 0 the start side, 1 the
end side, 2.. the groups in the order of their lowest cell; each node's links in the order
they are made), as ``HexSolver`` and the search use them:

- ``won_line``: the player to move's first chain with at most one gap, as a line of play
  (the gap, then each bridge's intrusion and answer): the search proves the position won
  (``Hex.forced_win``, ``hex_kernels.moves``);
- ``defences``: where the opponent holds chains with a gap, a move outside any of them
  lets the opponent fill the gap, so only the cells common to every chain found are kept
  (``Hex.threat_defences``); with none in common, or a chain without a gap, every move
  loses, and the first chain's cells are kept.

The walk is capped (``STEPS`` links examined): it may miss a chain, never report a false
one, so proofs stay sound. The cells of a chain are bitsets of 64-bit words; the walk's
arrays lie in two, ``layout`` says where.
"""

from __future__ import annotations

import numpy as np

from hexzero.mctsfw.jit import njit

#: chains collected per player and position (``HexSolver``'s and the defences')
MAX_CHAINS = 64
#: links examined by one walk at most
STEPS = 4096
#: a link's key (``layout``'s ``key``) where it is a ladder still to be started
STEP = -2


@njit(cache=True, _nrt=False)
def _set(bits, at, cell):
    """Cell ``cell`` set in the bitset at ``bits[at:]``."""
    bits[at + (cell >> 6)] |= np.uint64(1) << np.uint64(cell & 63)


@njit(cache=True, _nrt=False)
def _clear(bits, at, cell):
    bits[at + (cell >> 6)] &= ~(np.uint64(1) << np.uint64(cell & 63))


@njit(cache=True, _nrt=False)
def _has(bits, at, cell):
    return (bits[at + (cell >> 6)] >> np.uint64(cell & 63)) & np.uint64(1) != np.uint64(0)


@njit(cache=True)
def layout(n):
    """Where each of the walk's arrays lies for an n x n board: offsets into the int64
    array ``ints`` (the groups' numbers, a stack, the links' ends and cell counts, each pair
    of nodes' link, each node's links, the walk's path, the chains found) and the uint64
    array ``bits`` (the links' cells, the path's, the chains found's, two spare bitsets), in
    ``w``-word bitsets; and the sizes. Two arrays, not twenty: every array a call passes
    costs its reference count twice, more than a small board's walk."""
    cells = n * n
    w = (cells + 63) // 64
    g = cells // 2 + 2  # nodes: a player's groups (never above half the cells) and the two sides
    links = 2 * g + g * (g - 1) // 2
    gid = 0
    stack = gid + cells
    touch = stack + cells
    ends = touch + 8
    count = ends + 2 * links
    pair = count + links
    adj = pair + g * g
    deg = adj + g * g
    seen = deg + g
    path_gap = seen + g
    path_node = path_gap + g + 1
    path_pos = path_node + g + 1
    path_link = path_pos + g + 1
    found_gap = path_link + g + 1
    found_links = found_gap + MAX_CHAINS
    found_nlinks = found_links + MAX_CHAINS * (g + 1)
    capped = found_nlinks + MAX_CHAINS
    key = capped + 1
    nxt = key + links
    ints = nxt + links
    cells_of = 0
    path_cells = cells_of + links * w
    found_cells = path_cells + (g + 1) * w
    spare = found_cells + MAX_CHAINS * w
    nbits = spare + 2 * w
    return (w, g, links, gid, stack, touch, ends, count, pair, adj, deg, seen, path_gap, path_node, path_pos,
            path_link, found_gap, found_links, found_nlinks, ints, cells_of, path_cells, found_cells, spare, nbits,
            capped, key, nxt)


@njit(cache=True)
def scratch(n):
    """The walk's working arrays for an n x n board, ``(ints, bits)`` (``layout``), made once
    a kernel (or a thread)."""
    at = layout(n)
    return np.zeros(at[19], np.int64), np.zeros(at[24], np.uint64)


def found(work, n: int, i: int) -> tuple[int, int]:
    """Chain ``i`` of the last ``chains`` call, as Python ints: (its cells as a bitmask, its
    gap's bit or 0)."""
    ints, bits = work
    at = layout(n)
    w = at[0]
    gap = int(ints[at[16] + i])
    return (int.from_bytes(bits[at[22] + i * w:at[22] + (i + 1) * w].tobytes(), "little"),
            1 << gap if gap >= 0 else 0)


@njit(cache=True, _nrt=False)
def _line(cell, n, player):
    """The line of ``cell`` across the player's sides: its row for player 1, its column for
    player 2 (the sides at 0 and n - 1)."""
    return cell // n if player == 1 else cell % n


@njit(cache=True, _nrt=False)
def spans(row, n, player):
    """Whether ``player``'s stones leave no two lines in a row empty between the player's
    sides (rows for player 1, columns for player 2): a link of a chain (a bridge, a gap, an
    edge template) crosses one line at most, so without this no chain can be found."""
    bare = 0  # lines in a row without a stone of the player
    for line in range(n):
        held = False
        for i in range(n):
            if row[line * n + i if player == 1 else i * n + line] == player:
                held = True
                break
        bare = 0 if held else bare + 1
        if bare == 2:
            return False
    return True


@njit(cache=True)
def chains(row, n, player, nbr, gaps, first, ints, bits):
    """The pairing connections of ``player`` on the board ``row`` (int8 cells: 0 empty),
    with at most ``gaps`` gaps (0 or 1); ``first``: stop at the first found. Written into
    ``ints`` and ``bits`` (``layout``: each chain's cells, gap and links); their number
    returned. Without ``first``, up to ``MAX_CHAINS``; a chain without a gap ends the walk
    and is the only one returned."""
    (w, g, _, GID, STACK, TOUCH, ENDS, COUNT, PAIR, ADJ, DEG, SEEN, PGAP, PNODE, PPOS, PLINK, FGAP, FLINKS,
     FNLINKS, _, CELLS, PCELLS, FCELLS, SPARE, _, CAPPED, KEY, NXT) = layout(n)
    ints[CAPPED] = 0
    ncells = n * n
    # the groups, numbered in the order of their lowest cell; whether each lies on a side
    for p in range(ncells):
        ints[GID + p] = -1
    groups = 0
    for p in range(ncells):
        if row[p] != player or ints[GID + p] >= 0:
            continue
        if groups + 2 >= g:
            return 0
        ints[GID + p] = groups
        ints[STACK] = p
        top = 1
        sides = 0  # bit 0: on the start side, bit 1: on the end side
        while top > 0:
            top -= 1
            q = ints[STACK + top]
            line = _line(q, n, player)
            if line == 0:
                sides |= 1
            elif line == n - 1:
                sides |= 2
            for d in range(6):
                r = nbr[q, d]
                if r >= 0 and row[r] == player and ints[GID + r] < 0:
                    ints[GID + r] = groups
                    ints[STACK + top] = r
                    top += 1
        ints[SEEN + groups + 2] = sides  # (kept here until the walk clears it)
        groups += 1
    nodes = groups + 2
    nlinks = 0
    # each link's cells: an empty cell joins each pair of the nodes it touches (a side by
    # lying on it). ``PAIR`` holds a pair's link where its ends say so (no clearing a call).
    for r in range(n):
        for c in range(n):
            p = r * n + c
            if row[p] != 0:
                continue
            k = 0
            line = r if player == 1 else c
            if line == 0:
                ints[TOUCH] = 0
                k = 1
            elif line == n - 1:
                ints[TOUCH] = 1
                k = 1
            for d in range(6):
                q = nbr[p, d]
                if q >= 0 and row[q] == player:
                    node = ints[GID + q] + 2
                    new = True
                    for i in range(k):
                        if ints[TOUCH + i] == node:
                            new = False
                    if new:
                        ints[TOUCH + k] = node
                        k += 1
            for i in range(k):
                for j in range(i + 1, k):
                    a, b = min(ints[TOUCH + i], ints[TOUCH + j]), max(ints[TOUCH + i], ints[TOUCH + j])
                    e = _made(ints, bits, PAIR, ENDS, COUNT, CELLS, g, w, nlinks, a, b)
                    nlinks += e == nlinks
                    _set(bits, CELLS + e * w, p)
                    ints[COUNT + e] += 1
    # a group on a side: a solid link
    for i in range(2, nodes):
        sides = ints[SEEN + i]
        for side in range(2):
            if sides >> side & 1:
                e = _made(ints, bits, PAIR, ENDS, COUNT, CELLS, g, w, nlinks, side, i)
                nlinks += e == nlinks
                ints[COUNT + e] = 0  # (solid: no cell needed, whatever cells the side shares)
                for i2 in range(w):
                    bits[CELLS + e * w + i2] = 0
    # a group on the second line whose link to a side is one cell: a ladder there, where
    # it reaches an escape, makes the link one that cannot be cut (``_ladder``)
    for e in range(nlinks):
        ints[KEY + e] = -1
    for i in range(2, nodes):
        for side in range(2):
            e = _link(ints, PAIR, ENDS, g, nlinks, side, i)
            if e < 0:  # every first-line cell blocked: a ladder still to be started, a gap
                nxt, size = _stepped(row, n, player, side, i - 2, nbr, ints, GID, SEEN, bits, SPARE, w)
                key = STEP
                if nxt >= 0:
                    e = _made(ints, bits, PAIR, ENDS, COUNT, CELLS, g, w, nlinks, side, i)
                    nlinks += 1
            elif ints[COUNT + e] == 1:
                key = _lowest(bits, CELLS + e * w, w)
                nxt, size = _ladder(row, n, player, side, i - 2, key, nbr, ints, GID, SEEN, bits, SPARE, w)
            else:
                continue
            if nxt >= 0:
                for k in range(w):
                    bits[CELLS + e * w + k] = bits[SPARE + k]
                ints[COUNT + e], ints[KEY + e], ints[NXT + e] = size, key, nxt
    # each node's links in the order they were made group by group (for each group i its
    # link to the start side, to the end side, then to each later group): kept by an
    # insertion into each node's list (``_rank``)
    for a in range(nodes):
        ints[DEG + a] = 0
        ints[SEEN + a] = 0
    for e in range(nlinks):
        for end in range(2):
            a, b = ints[ENDS + 2 * e + end], ints[ENDS + 2 * e + 1 - end]
            at = ADJ + a * g
            k = ints[DEG + a]
            rank = _rank(a, b)
            while k > 0:
                prev = ints[at + k - 1]
                if _rank(a, ints[ENDS + 2 * prev] + ints[ENDS + 2 * prev + 1] - a) < rank:
                    break
                ints[at + k] = prev
                k -= 1
            ints[at + k] = e
            ints[DEG + a] += 1
    # the walk: depth-first, a path's cells and gap kept by depth
    found = 0
    depth = 0
    ints[PNODE], ints[PPOS], ints[PGAP] = 0, 0, -1
    for i in range(w):
        bits[PCELLS + i] = 0
    ints[SEEN] = 1
    steps = 0
    stop = False
    while depth >= 0 and not stop:
        node = ints[PNODE + depth]
        if steps >= STEPS:
            ints[CAPPED] = 1
        if ints[PPOS + depth] >= ints[DEG + node] or steps >= STEPS:
            ints[SEEN + node] = depth == 0
            depth -= 1
            continue
        e = ints[ADJ + node * g + ints[PPOS + depth]]
        ints[PPOS + depth] += 1
        steps += 1
        nxt = ints[ENDS + 2 * e] + ints[ENDS + 2 * e + 1] - node
        if ints[SEEN + nxt]:
            continue
        gap = ints[PGAP + depth]
        clash = gap >= 0 and _has(bits, CELLS + e * w, gap)
        for i in range(w):
            if bits[CELLS + e * w + i] & bits[PCELLS + depth * w + i]:
                clash = True
        if clash:
            continue
        count = ints[COUNT + e]
        stepped = ints[KEY + e] == STEP
        if count != 1 and not stepped:  # solid, a bridge or a ladder
            grown_gap = gap
        elif gap < 0 and gaps > 0:  # a single cell, or a ladder's first step: the gap
            grown_gap = ints[NXT + e] if stepped else _lowest(bits, CELLS + e * w, w)
        else:
            continue
        ints[PLINK + depth + 1] = e
        if nxt == 1:
            for i in range(w):
                bits[FCELLS + found * w + i] = bits[PCELLS + depth * w + i] | (
                    bits[CELLS + e * w + i] if count != 1 else np.uint64(0))
            ints[FGAP + found] = grown_gap
            for i in range(depth + 1):
                ints[FLINKS + found * (g + 1) + i] = ints[PLINK + i + 1]
            ints[FNLINKS + found] = depth + 1
            found += 1
            if first or grown_gap < 0 or found >= MAX_CHAINS:
                stop = True
            continue
        depth += 1
        ints[SEEN + nxt] = 1
        ints[PNODE + depth], ints[PPOS + depth], ints[PGAP + depth] = nxt, 0, grown_gap
        for i in range(w):
            bits[PCELLS + depth * w + i] = bits[PCELLS + (depth - 1) * w + i] | (
                bits[CELLS + e * w + i] if count != 1 else np.uint64(0))
    if found > 1 and ints[FGAP + found - 1] < 0:  # a gapless chain: the only one that matters
        last = found - 1
        for i in range(w):
            bits[FCELLS + i] = bits[FCELLS + last * w + i]
        ints[FGAP] = ints[FGAP + last]
        for i in range(g + 1):
            ints[FLINKS + i] = ints[FLINKS + last * (g + 1) + i]
        ints[FNLINKS] = ints[FNLINKS + last]
        found = 1
    return found


@njit(cache=True, _nrt=False)
def _at(n, player, side, line, pos):
    """The cell on ``line`` (0: the one along the side) counted from ``player``'s side
    ``side`` (0: the start, 1: the end), ``pos`` along it; -1 off the board. Seen from each
    side the board is the same: cell (1, j) touches (0, j) and (0, j + 1) (the other sides
    are the first's turned half a turn or mirrored on the long diagonal)."""
    if line < 0 or line >= n or pos < 0 or pos >= n:
        return -1
    if side == 1:
        line, pos = n - 1 - line, n - 1 - pos
    return line * n + pos if player == 1 else pos * n + line


@njit(cache=True, _nrt=False)
def _ladder(row, n, player, side, group, gap, nbr, ints, GID, SEEN, bits, at, w):
    """The second-line ladder of ``group``, whose one empty cell on ``side``'s first line is
    ``gap``: the opponent must block the gap, the player then steps along the second line
    (a stone beside the group touching the blocked cell and the next one along, a new
    gap), and so on until a step reaches an escape (``_run``). With an escape the ladder is
    a link that cannot be cut: an intrusion anywhere else in its cells is answered by
    filling the gap, a block of the gap by the next step. Returns (the first step's cell,
    the number of cells), the cells in ``bits[at:at + w]``; (-1, 0) where neither direction
    reaches an escape."""
    r, c = gap // n, gap % n
    line, a = (r, c) if player == 1 else (c, r)
    if side == 1:
        line, a = n - 1 - line, n - 1 - a
    if line != 0:
        return -1, 0
    for step in (-1, 1):
        # to lower positions the first step is (1, a - 1), beside the group's (1, a); to
        # higher ones (1, a), beside its (1, a - 1)
        first = a - 1 if step < 0 else a
        beside = _at(n, player, side, 1, a if step < 0 else a - 1)
        if beside < 0 or ints[GID + beside] != group:
            continue
        for k in range(w):
            bits[at + k] = 0
        _set(bits, at, gap)
        size = _run(row, n, player, side, first, step, nbr, ints, GID, SEEN, bits, at)
        if size >= 0:
            return _at(n, player, side, 1, first), size + 1
    return -1, 0


@njit(cache=True, _nrt=False)
def _stepped(row, n, player, side, group, nbr, ints, GID, SEEN, bits, at, w):
    """A ladder of ``group`` still to be started: the group has no empty cell on ``side``'s
    first line (every one blocked), and a second-line step beside one of its second-line
    stones, touching a blocked first-line cell and an empty one, runs to an escape. Playing
    the step makes the ladder (``_ladder``), so the link is a gap whose cell is the step.
    Returns (the step's cell, the number of cells with the step's), the cells in
    ``bits[at:at + w]``; (-1, 0) where there is none."""
    other = 3 - player
    for b in range(n):
        stone = _at(n, player, side, 1, b)
        if ints[GID + stone] != group:
            continue
        for step in (-1, 1):
            # (1, b - 1) touches (0, b - 1) and (0, b); (1, b + 1) touches (0, b + 1) and (0, b + 2)
            blocked = _at(n, player, side, 0, b if step < 0 else b + 1)
            x = _at(n, player, side, 1, b + step)
            if blocked < 0 or row[blocked] != other or x < 0 or row[x] != 0:
                continue
            for k in range(w):
                bits[at + k] = 0
            size = _run(row, n, player, side, b + step, step, nbr, ints, GID, SEEN, bits, at)
            if size >= 0:
                return x, size
    return -1, 0


@njit(cache=True, _nrt=False)
def _second_line(row, n, player):
    """Whether ``player`` has a stone on the second line from either of the player's sides."""
    for side in range(2):
        for pos in range(n):
            if row[_at(n, player, side, 1, pos)] == player:
                return True
    return False


@njit(cache=True, _nrt=False)
def _run(row, n, player, side, j, step, nbr, ints, GID, SEEN, bits, at):
    """A ladder's steps from (1, j), ``step`` along the side: each step is a second-line cell
    with a first-line cell ahead of it (its gap, the opponent's block), until a step
    reaches an **escape**: a stone of the player's on the side beside it, or one on the
    second line beyond it whose other first-line cell is empty (an edge template then).
    The cells (steps, gaps, the template's cell) set in ``bits[at:]``; their number
    returned, or -1 where a stone in the way or the board's end comes first."""
    size = 0
    while True:
        x = _at(n, player, side, 1, j)
        if x < 0 or row[x] != 0:
            return -1
        _set(bits, at, x)
        size += 1
        for d in range(6):  # a stone of the player's on the side beside the step: joined
            q = nbr[x, d]
            if q >= 0 and row[q] == player and ints[SEEN + ints[GID + q] + 2] >> side & 1:
                return size
        y = _at(n, player, side, 0, j if step < 0 else j + 1)  # the step's gap
        if y < 0 or row[y] != 0:
            return -1
        _set(bits, at, y)
        size += 1
        h = _at(n, player, side, 1, j + step)
        z = _at(n, player, side, 0, j - 1 if step < 0 else j + 2)
        if h >= 0 and row[h] == player and z >= 0 and row[z] == 0:  # joined to a template
            _set(bits, at, z)
            return size + 1
        j += step


@njit(cache=True, _nrt=False)
def _rank(a, b):
    """Where node ``a``'s link to node ``b`` comes among ``a``'s links: a side's by the
    group; a group's first to the groups before it, then to the two sides, then to the
    groups after it (the order the links are made in, group by group)."""
    if a < 2 or 2 <= b < a:
        return b
    return a + b if b < 2 else b + 2


@njit(cache=True, _nrt=False)
def _link(ints, PAIR, ENDS, g, nlinks, a, b):
    """The link between nodes ``a`` < ``b`` made this call, or -1."""
    e = ints[PAIR + a * g + b]
    if 0 <= e < nlinks and ints[ENDS + 2 * e] == a and ints[ENDS + 2 * e + 1] == b:
        return e
    return -1


@njit(cache=True, _nrt=False)
def _made(ints, bits, PAIR, ENDS, COUNT, CELLS, g, w, nlinks, a, b):
    """The link between nodes ``a`` < ``b``: the one made this call, or a new one numbered
    ``nlinks`` (no cells yet), which the caller counts."""
    e = _link(ints, PAIR, ENDS, g, nlinks, a, b)
    if e < 0:
        e = nlinks
        ints[PAIR + a * g + b] = e
        ints[ENDS + 2 * e], ints[ENDS + 2 * e + 1] = a, b
        ints[COUNT + e] = 0
        for i in range(w):
            bits[CELLS + e * w + i] = 0
    return e


@njit(cache=True, _nrt=False)
def _lowest(bits, at, w):
    """The lowest cell of the bitset at ``bits[at:at + w]`` (-1: empty)."""
    for i in range(w):
        word = bits[at + i]
        if word:
            bit = 0
            while (word >> np.uint64(bit)) & np.uint64(1) == np.uint64(0):
                bit += 1
            return 64 * i + bit
    return -1


@njit(cache=True)
def won_line(row, n, player, nbr, ints, bits, line):
    """Where ``player`` (to move) holds a pairing connection with at most one gap: a line of
    play that wins, in ``line``, its length returned (0: none). The line is the gap (where
    there is one), then for each bridge of the chain in order an intrusion (its lowest
    cell) and the answer (its next), for a ladder the threatened cell and the first step;
    without a gap the first bridge's answer (a ladder's threatened cell) comes first,
    filled at once."""
    if not spans(row, n, player) or chains(row, n, player, nbr, 1, True, ints, bits) == 0:
        return 0
    at = layout(n)
    w, g, COUNT, FGAP, FLINKS, FNLINKS, CELLS, KEY, NXT = (at[0], at[1], at[7], at[16], at[17], at[18], at[20],
                                                           at[26], at[27])
    k = 0
    if ints[FGAP] >= 0:
        line[k] = ints[FGAP]
        k += 1
    for i in range(ints[FNLINKS]):
        e = ints[FLINKS + i]
        if ints[COUNT + e] < 2:
            continue
        if ints[KEY + e] == STEP:  # a ladder's first step: the chain's gap, played first
            continue
        if ints[KEY + e] >= 0:  # a ladder: its gap filled, or blocked and the next step played
            line[k] = ints[KEY + e]
            if k > 0:
                line[k + 1] = ints[NXT + e]
                k += 1
            k += 1
            continue
        low = _lowest(bits, CELLS + e * w, w)
        _clear(bits, CELLS + e * w, low)  # (the link's cells are not read again this call)
        high = _lowest(bits, CELLS + e * w, w)
        if k == 0:
            line[k] = high  # no gap: the first bridge filled
            k += 1
        else:
            line[k], line[k + 1] = low, high
            k += 2
    return k


@njit(cache=True, _nrt=False)
def defences(row, n, player, nbr, ints, bits, mask):
    """Where the opponent of ``player`` (to move) holds pairing connections with one gap
    (or none): ``mask`` (cells) the empty cells of every chain found (each chain's bridges
    and gap), or the first chain's where they share none. Returns how many chains were
    found (``mask`` untouched where none), or -1 where none was found by a walk cut short
    (``STEPS``) or the opponent has a stone on a second line: 0 says the opponent holds
    none, and so none after any stone of the player's (a stone only takes links away,
    but for a ladder, which a block on the first line may make)."""
    other = 3 - player
    if not spans(row, n, other):
        return 0
    found = chains(row, n, other, nbr, 1, False, ints, bits)
    at = layout(n)
    if found == 0:
        return -1 if ints[at[25]] or _second_line(row, n, other) else 0
    w, FGAP, FCELLS, SPARE = at[0], at[16], at[22], at[23]
    common, chain = SPARE, SPARE + w
    for i in range(w):
        bits[common + i] = ~np.uint64(0)
    for c in range(found):
        for i in range(w):
            bits[chain + i] = bits[FCELLS + c * w + i]
        if ints[FGAP + c] >= 0:
            _set(bits, chain, ints[FGAP + c])
        for i in range(w):
            bits[common + i] &= bits[chain + i]
    none = True
    for i in range(w):
        if bits[common + i]:
            none = False
    if none:
        for i in range(w):
            bits[common + i] = bits[FCELLS + i]
        if ints[FGAP] >= 0:
            _set(bits, common, ints[FGAP])
    for p in range(n * n):
        mask[p] = row[p] == 0 and _has(bits, common, p)
    return found
