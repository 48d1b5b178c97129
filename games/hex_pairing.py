"""Hex's pairing connections (numba): the bridges and edge templates a player's stones already
hold, the knowledge a search proves Hex positions with.

A **pairing connection** of a player is a chain of the player's groups from one of the
player's sides to the other in which each link is solid (a group on its side), a bridge
(two or more empty cells next to both groups, or to a group and its side: the second-row
edge template is such a link) or, at most once, a gap (a single such cell), the links'
cells all different. Its owner answers an intrusion into a bridge with the bridge's other
cell, so a chain without a gap cannot be cut, and a chain with one is completed by filling
the gap: whoever holds one and is to move (or holds one without a gap) wins.

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
one, so proofs stay sound. The cells of a chain are bitsets of 64-bit words (``words``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: chains collected per player and position (``HexSolver``'s and the defences')
MAX_CHAINS = 64
#: links examined by one walk at most
STEPS = 4096


def words(cells: int) -> int:
    """The 64-bit words of a bitset of ``cells`` cells."""
    return (cells + 63) // 64


@njit(cache=True)
def _set(bits, cell):
    bits[cell >> 6] |= np.uint64(1) << np.uint64(cell & 63)


@njit(cache=True)
def _has(bits, cell):
    return (bits[cell >> 6] >> np.uint64(cell & 63)) & np.uint64(1) != np.uint64(0)


@njit(cache=True)
def scratch(n):
    """The walk's working arrays for an n x n board (made once a kernel call)."""
    cells = n * n
    w = (cells + 63) // 64
    groups = cells // 2 + 2  # (a player's groups never exceed half the cells, plus the sides)
    links = 2 * groups + groups * (groups - 1) // 2
    return (np.empty(cells, np.int64),            # 0 gid: each stone's group
            np.empty(cells, np.int64),            # 1 stack
            np.empty(8, np.int64),                # 2 the nodes an empty cell touches; two cells
            np.empty((links, 2), np.int64),       # 3 link ends
            np.zeros((links, w), np.uint64),      # 4 link cells
            np.empty(links, np.int64),            # 5 link cell counts (0: solid)
            np.zeros((groups, groups), np.int64),  # 6 link index of each pair of groups (-1: none yet)
            np.empty((groups, groups), np.int64),  # 7 each node's links in order
            np.zeros(groups, np.int64),           # 8 each node's link count
            np.zeros(groups, np.bool_),           # 9 seen
            np.zeros((groups + 1, w), np.uint64),  # 10 the walk's cells by depth
            np.empty(groups + 1, np.int64),       # 11 the walk's gap by depth (-1: none)
            np.empty(groups + 1, np.int64),       # 12 the walk's node by depth
            np.empty(groups + 1, np.int64),       # 13 the walk's next link position by depth
            np.empty(groups + 1, np.int64),       # 14 the walk's link taken into each depth
            np.zeros((MAX_CHAINS, w), np.uint64),  # 15 chains found: cells
            np.empty(MAX_CHAINS, np.int64),       # 16 chains found: gap cell (-1: none)
            np.empty((MAX_CHAINS, groups + 1), np.int64),  # 17 chains found: their links
            np.empty(MAX_CHAINS, np.int64))       # 18 chains found: how many links


@njit(cache=True)
def _line(cell, n, player):
    """The line of ``cell`` across the player's sides: its row for player 1, its column for
    player 2 (the sides at 0 and n - 1)."""
    return cell // n if player == 1 else cell % n


@njit(cache=True)
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
def chains(row, n, player, nbr, gaps, first, work):
    """The pairing connections of ``player`` on the board ``row`` (int8 cells: 0 empty),
    with at most ``gaps`` gaps (0 or 1); ``first``: stop at the first found. Written into
    ``work[15..18]`` (cells, gap, links, link counts); their number returned. Without
    ``first``, up to ``MAX_CHAINS``; a chain without a gap ends the walk and is the only
    one returned."""
    (gid, stack, touch, ends, cells_of, count_of, pair, adj, deg, seen, path_cells, path_gap, path_node, path_pos,
     path_link, found_cells, found_gap, found_links, found_nlinks) = work
    ncells = n * n
    w = found_cells.shape[1]
    # the groups, numbered in the order of their lowest cell
    for p in range(ncells):
        gid[p] = -1
    groups = 0
    for p in range(ncells):
        if row[p] != player or gid[p] >= 0:
            continue
        gid[p] = groups
        stack[0] = p
        top = 1
        while top > 0:
            top -= 1
            q = stack[top]
            for d in range(6):
                r = nbr[q, d]
                if r >= 0 and row[r] == player and gid[r] < 0:
                    gid[r] = groups
                    stack[top] = r
                    top += 1
        groups += 1
    nodes = groups + 2
    if nodes > pair.shape[0]:
        return 0
    for a in range(nodes):
        deg[a] = 0
        seen[a] = False
        for b in range(nodes):
            pair[a, b] = -1
    nlinks = 0
    # each link's cells: an empty cell joins each pair of the nodes it touches (a side by lying on it)
    for p in range(ncells):
        if row[p] != 0:
            continue
        k = 0
        line = _line(p, n, player)
        if line == 0:
            touch[k] = 0
            k += 1
        elif line == n - 1:
            touch[k] = 1
            k += 1
        for d in range(6):
            q = nbr[p, d]
            if q >= 0 and row[q] == player:
                node = gid[q] + 2
                new = True
                for i in range(k):
                    if touch[i] == node:
                        new = False
                if new:
                    touch[k] = node
                    k += 1
        for i in range(k):
            for j in range(i + 1, k):
                a, b = min(touch[i], touch[j]), max(touch[i], touch[j])
                if a < 2 and b < 2:
                    continue  # (a corner cell lies on both sides: no link between the sides)
                if pair[a, b] < 0:
                    pair[a, b] = nlinks
                    ends[nlinks, 0], ends[nlinks, 1] = a, b
                    cells_of[nlinks, :] = 0
                    count_of[nlinks] = 0
                    nlinks += 1
                e = pair[a, b]
                _set(cells_of[e], p)
                count_of[e] += 1
    # a group on a side: a solid link
    for p in range(ncells):
        if row[p] != player:
            continue
        line = _line(p, n, player)
        for side in range(2):
            if line == (n - 1 if side else 0):
                a, b = side, gid[p] + 2
                e = pair[a, b]
                if e < 0:
                    e = pair[a, b] = nlinks
                    ends[nlinks, 0], ends[nlinks, 1] = a, b
                    nlinks += 1
                cells_of[e, :] = 0
                count_of[e] = 0
    # each node's links in the order the solver makes them: for each group i, its link to
    # the start side, to the end side, then to each later group
    for i in range(2, nodes):
        for other in range(2):
            e = pair[other, i]
            if e >= 0:
                adj[other, deg[other]] = e
                deg[other] += 1
                adj[i, deg[i]] = e
                deg[i] += 1
        for j in range(i + 1, nodes):
            e = pair[i, j]
            if e >= 0:
                adj[i, deg[i]] = e
                deg[i] += 1
                adj[j, deg[j]] = e
                deg[j] += 1
    # the walk
    found = 0
    depth = 0
    path_node[0], path_pos[0], path_gap[0] = 0, 0, -1
    path_cells[0, :] = 0
    seen[0] = True
    steps = 0
    stop = False
    while depth >= 0 and not stop:
        node = path_node[depth]
        if path_pos[depth] >= deg[node] or steps >= STEPS:
            seen[node] = depth == 0
            depth -= 1
            continue
        e = adj[node, path_pos[depth]]
        path_pos[depth] += 1
        steps += 1
        nxt = ends[e, 0] + ends[e, 1] - node
        if seen[nxt]:
            continue
        gap = path_gap[depth]
        clash = gap >= 0 and _has(cells_of[e], gap)
        for i in range(w):
            if cells_of[e, i] & path_cells[depth, i]:
                clash = True
        if clash:
            continue
        count = count_of[e]
        if count != 1:  # solid or a bridge
            grown_gap = gap
        elif gap < 0 and gaps > 0:  # a single cell: the gap
            grown_gap = -1
            for i in range(w):
                if cells_of[e, i]:
                    word = cells_of[e, i]
                    bit = 0
                    while (word >> np.uint64(bit)) & np.uint64(1) == np.uint64(0):
                        bit += 1
                    grown_gap = 64 * i + bit
                    break
        else:
            continue
        path_link[depth + 1] = e
        if nxt == 1:
            for i in range(w):
                found_cells[found, i] = path_cells[depth, i] | (cells_of[e, i] if count != 1 else np.uint64(0))
            found_gap[found] = grown_gap
            for i in range(depth + 1):
                found_links[found, i] = path_link[i + 1]
            found_nlinks[found] = depth + 1
            found += 1
            if first or grown_gap < 0 or found >= MAX_CHAINS:
                stop = True
            continue
        depth += 1
        seen[nxt] = True
        path_node[depth], path_pos[depth], path_gap[depth] = nxt, 0, grown_gap
        for i in range(w):
            path_cells[depth, i] = path_cells[depth - 1, i] | (cells_of[e, i] if count != 1 else np.uint64(0))
    for a in range(nodes):
        seen[a] = False
    if found > 1 and found_gap[found - 1] < 0:  # a gapless chain: the only one that matters
        found_cells[0, :] = found_cells[found - 1, :]
        found_gap[0] = found_gap[found - 1]
        found_links[0, :] = found_links[found - 1, :]
        found_nlinks[0] = found_nlinks[found - 1]
        found = 1
    return found


@njit(cache=True)
def _two_lowest(bits, out):
    """The two lowest cells of the bitset ``bits`` into ``out``."""
    k = 0
    for i in range(bits.shape[0]):
        word = bits[i]
        bit = 0
        while word != np.uint64(0) and k < 2:
            if word & np.uint64(1):
                out[k] = 64 * i + bit
                k += 1
            word >>= np.uint64(1)
            bit += 1
        if k == 2:
            return


@njit(cache=True)
def won_line(row, n, player, nbr, work, line):
    """Where ``player`` (to move) holds a pairing connection with at most one gap: a line of
    play that wins, in ``line``, its length returned (0: none). The line is the gap (where
    there is one), then for each bridge of the chain in order an intrusion (its lowest
    cell) and the answer (its next); without a gap the first bridge's answer comes first,
    filled at once."""
    if not spans(row, n, player) or chains(row, n, player, nbr, 1, True, work) == 0:
        return 0
    cells_of, count_of = work[4], work[5]
    found_gap, found_links, found_nlinks = work[16], work[17], work[18]
    pair = work[2]
    k = 0
    if found_gap[0] >= 0:
        line[k] = found_gap[0]
        k += 1
    for i in range(found_nlinks[0]):
        e = found_links[0, i]
        if count_of[e] < 2:
            continue
        _two_lowest(cells_of[e], pair)
        if k == 0:
            line[k] = pair[1]  # no gap: the first bridge filled
            k += 1
        else:
            line[k], line[k + 1] = pair[0], pair[1]
            k += 2
    return k


@njit(cache=True)
def defences(row, n, player, nbr, work, mask):
    """Where the opponent of ``player`` (to move) holds pairing connections with one gap
    (or none): ``mask`` (cells) the empty cells of every chain found (each chain's bridges
    and gap), or the first chain's where they share none; True. False (``mask``
    untouched) where the opponent holds none."""
    other = 3 - player
    if not spans(row, n, other):
        return False
    found = chains(row, n, other, nbr, 1, False, work)
    if found == 0:
        return False
    found_cells, found_gap = work[15], work[16]
    w = found_cells.shape[1]
    common, chain = work[10][0], work[10][1]  # (the walk's: free once it is done)
    for i in range(w):
        common[i] = ~np.uint64(0)
    for c in range(found):
        chain[:] = found_cells[c]
        if found_gap[c] >= 0:
            _set(chain, found_gap[c])
        for i in range(w):
            common[i] &= chain[i]
    empty_common = True
    for i in range(w):
        if common[i]:
            empty_common = False
    if empty_common:
        common[:] = found_cells[0]
        if found_gap[0] >= 0:
            _set(common, found_gap[0])
    for p in range(n * n):
        mask[p] = row[p] == 0 and _has(common, p)
    return True
