"""Go's light random playout, compiled (numba): the same moves as ``Go.random_moves_reference``.

The search spends nearly all of its time on 9x9 Go in playouts (92% with the Python
playout), so the playout alone is compiled; the rules of the tree (``Go.next_state``,
``legal_actions``) stay in Python on the bitboards. The kernel plays on a padded array
board (a border of points that are neither empty nor a stone, so a neighbour is an
offset of 1 or ``size + 2``), keeps the empty points in a list in the reference's order,
tries them in the same order for the same random numbers, tests captures, suicide and
positional superko (Zobrist hashes in an open-addressing table) as the reference does,
and scores the final position by area. The playout keeps each group up move by move (a
ring of its stones, its pseudo-liberties), so a point is judged from its neighbours'
groups without a search (1.7x the playouts a second of a liberty search a point, the same
moves). Given the same uniform random numbers
(``uniforms``) it plays exactly the reference's moves, which the tests check; otherwise
it draws its own from a xorshift generator seeded by the caller.

numba keeps the compiled kernels in ``__pycache__`` (``cache=True``); ``mctsfw.jit`` renews
them, and those of the kernels that call these (``go_kernels.playouts``), when any compiled
file of the package changes.
"""

from __future__ import annotations

import numpy as np

from hexzero.mctsfw.jit import njit

EMPTY, BLACK, WHITE, BORDER = 0, 1, 2, 3


@njit(cache=True, _nrt=False)
def _next_uniform(uniforms, cursor, state):
    """The next uniform number in [0, 1): from ``uniforms`` while they last, else xorshift64*."""
    if cursor[0] < uniforms.shape[0]:
        u = uniforms[cursor[0]]
        cursor[0] += 1
        return u
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return float((x * np.uint64(2685821657736338717)) >> np.uint64(11)) / 9007199254740992.0


@njit(cache=True, _nrt=False)
def _slot(table, key):
    """The slot of ``key`` in the open-addressing ``table`` (a power of two long), or the
    free slot it would take."""
    mask = np.int64(table.shape[0] - 1)
    i = np.int64(key & np.uint64(mask))
    while table[i] != 0 and table[i] != key:
        i = (i + 1) & mask
    return i


@njit(cache=True, _nrt=False)
def _group_has_liberty(board, start, colour, stride, stack, mark, stamp):
    """Whether the group of ``colour`` at ``start`` touches an empty point; its stones
    searched bear ``stamp`` in ``mark`` (all of them when it has no liberty)."""
    top = 0
    stack[top] = start
    top += 1
    mark[start] = stamp
    while top > 0:
        top -= 1
        p = stack[top]
        for d in (1, -1, stride, -stride):
            q = p + d
            v = board[q]
            if v == EMPTY:
                return True
            if v == colour and mark[q] != stamp:
                mark[q] = stamp
                stack[top] = q
                top += 1
    return False


@njit(cache=True, _nrt=False)
def place(board, p, colour, stride, h, keys, stack, mark, taken, group, captured, stamp):
    """A stone of ``colour`` just put on ``p``: the opponent stones it captures (their
    points in ``captured``; the board left unchanged) and the Zobrist hash of the board
    after it. Returns (how many captured, or -1 for suicide: no capture and no liberty of
    its group; the hash; the last ``stamp`` used in ``mark``)."""
    other = 3 - colour
    ncaptured = 0
    for d in (1, -1, stride, -stride):
        q = p + d
        if board[q] == other and taken[q] == 0:
            stamp += 1
            if not _group_has_liberty(board, q, other, stride, stack, mark, stamp):
                # the liberty search went through the whole group: its stones bear the stamp
                top = 0
                group[top] = q
                top += 1
                taken[q] = 1
                captured[ncaptured] = q
                ncaptured += 1
                while top > 0:
                    top -= 1
                    s = group[top]
                    for e in (1, -1, stride, -stride):
                        r = s + e
                        if mark[r] == stamp and taken[r] == 0 and board[r] == other:
                            taken[r] = 1
                            captured[ncaptured] = r
                            ncaptured += 1
                            group[top] = r
                            top += 1
    for j in range(ncaptured):
        taken[captured[j]] = 0
    if ncaptured == 0:
        liberty = False
        for d in (1, -1, stride, -stride):
            if board[p + d] == EMPTY:
                liberty = True
                break
        if not liberty:
            stamp += 1
            if not _group_has_liberty(board, p, colour, stride, stack, mark, stamp):
                return -1, h, stamp
    nh = h ^ keys[colour, p]
    for j in range(ncaptured):
        nh ^= keys[other, captured[j]]
    return ncaptured, nh, stamp


@njit(cache=True)
def padded_board(template, words, bit_of, point_of):
    """A copy of the empty padded board ``template`` with the stones of the bitboards in
    ``words`` (black's 64-bit words, then as many of white's; action ``a``'s bit is
    ``bit_of[a]``) on their points: 1 black, 2 white."""
    nwords = words.shape[0] // 2
    board = template.copy()
    for a in range(point_of.shape[0]):
        bit = bit_of[a]
        word, shift = bit >> 6, np.uint64(bit & 63)
        if (words[word] >> shift) & np.uint64(1):
            board[point_of[a]] = 1
        elif (words[nwords + word] >> shift) & np.uint64(1):
            board[point_of[a]] = 2
    return board


@njit(cache=True)
def legal_points(template, words, bit_of, size, player, h, seen, keys, point_of, out):
    """The actions where a stone of ``player`` is legal on the board of the bitboards'
    ``words`` (``padded_board``): empty, not suicide, and not making a board whose hash is
    in ``seen`` (positional superko), as ``Go.legal_actions_reference`` says; written in
    increasing order into ``out``, their number returned. (One call from the bitboards: a
    search asks at every leaf.)"""
    board = padded_board(template, words, bit_of, point_of)
    npoints = board.shape[0]
    stride = size + 2
    capacity = 1
    while capacity < 4 * (seen.shape[0] + 8):
        capacity *= 2
    table = np.zeros(capacity, dtype=np.uint64)  # 0 marks a free slot: no stone makes the empty board
    for k in seen:
        table[_slot(table, k)] = k
    stack = np.empty(npoints, dtype=np.int64)
    mark = np.zeros(npoints, dtype=np.int64)
    taken = np.zeros(npoints, dtype=np.int8)
    group = np.empty(npoints, dtype=np.int64)
    captured = np.empty(npoints, dtype=np.int64)
    stamp = 0
    count = 0
    for a in range(size * size):
        p = point_of[a]
        if board[p] != EMPTY:
            continue
        board[p] = player
        ncaptured, nh, stamp = place(board, p, player, stride, h, keys, stack, mark, taken, group, captured, stamp)
        board[p] = EMPTY
        if ncaptured >= 0 and table[_slot(table, nh)] != nh:
            out[count] = a
            count += 1
    return count


@njit(cache=True, _nrt=False)
def _groups(board, stride, gid, nxt, libs, stones, stack):
    """Each stone's group on ``board``: ``gid[p]`` the point that names it, ``nxt`` a ring
    through its stones, ``libs[name]`` its pseudo-liberties (each stone's empty neighbours,
    a point counted once for each stone it touches: zero exactly when the group has no
    liberty), ``stones[name]`` its size. Empty points get ``gid`` -1."""
    for p in range(board.shape[0]):
        gid[p] = -1
    for p in range(board.shape[0]):
        colour = board[p]
        if colour != BLACK and colour != WHITE or gid[p] >= 0:
            continue
        gid[p], nxt[p], count, n = p, p, 0, 0
        stack[0] = p
        top = 1
        while top > 0:
            top -= 1
            q = stack[top]
            n += 1
            for d in (1, -1, stride, -stride):
                r = q + d
                v = board[r]
                if v == EMPTY:
                    count += 1
                elif v == colour and gid[r] < 0:
                    gid[r] = p
                    nxt[r], nxt[p] = nxt[p], r  # into the ring after its first stone
                    stack[top] = r
                    top += 1
        libs[p], stones[p] = count, n


@njit(cache=True, _nrt=False)
def _shared(board, gid, p, d, stride):
    """How many of ``p``'s neighbours lie in the group of its neighbour ``p + d``."""
    g = gid[p + d]
    n = 0
    for e in (1, -1, stride, -stride):
        if gid[p + e] == g and board[p + e] != EMPTY:
            n += 1
    return n


@njit(cache=True)
def playout(board, size, player, passes, left, h, seen, komi, keys, point_of, action_of, empties, count,
            uniforms, seed, out):
    """Play a light playout on ``board`` (changed in place) from ``player`` to move:
    the moves go into ``out`` (actions; pass = size * size); returns (moves played,
    winner: 1, 2 or 0 for a draw). ``empties[:count]``: the empty points' actions in
    increasing order; ``seen``: the Zobrist hashes of the boards that may not come back;
    ``keys[colour, point]``: the Zobrist keys by padded point.

    The groups are kept up move by move (``_groups``: a ring of stones and pseudo-liberties
    a group), so a point is judged from its neighbours' groups alone: a capture where an
    opponent group's pseudo-liberties are all on the point, a suicide where no capture is
    made, no neighbour is empty and every own group's are; the stones a capture takes are
    the ring's."""
    stride = size + 2
    npoints = board.shape[0]
    pass_action = size * size
    capacity = 1
    while capacity < 4 * (seen.shape[0] + left + 8):
        capacity *= 2
    table = np.zeros(capacity, dtype=np.uint64)  # 0 marks a free slot: the empty board's hash, which never comes back
    for k in seen:
        table[_slot(table, k)] = k
    stack = np.empty(npoints, dtype=np.int64)
    mark = np.zeros(npoints, dtype=np.int64)
    gid = np.empty(npoints, dtype=np.int64)
    nxt = np.empty(npoints, dtype=np.int64)
    libs = np.zeros(npoints, dtype=np.int64)
    stones = np.zeros(npoints, dtype=np.int64)
    captured = np.empty(npoints, dtype=np.int64)
    _groups(board, stride, gid, nxt, libs, stones, stack)
    cursor = np.zeros(1, dtype=np.int64)
    rng = np.empty(1, dtype=np.uint64)
    rng[0] = np.uint64(seed) | np.uint64(1)
    played = 0
    colour = player
    while left > 0 and passes < 2:
        left -= 1
        other = 3 - colour
        untried = count
        chosen = -1
        nh = h
        while untried > 0:
            i = int(_next_uniform(uniforms, cursor, rng) * untried)
            a = empties[i]
            untried -= 1
            empties[i] = empties[untried]
            empties[untried] = a
            p = point_of[a]
            # an own single-point eye (every neighbour the mover's; at most one opponent stone
            # on the diagonals in the middle, none on the edge) is never filled
            eye = True
            edge = False
            for d in (1, -1, stride, -stride):
                v = board[p + d]
                if v == BORDER:
                    edge = True
                elif v != colour:
                    eye = False
            if eye:
                bad = 0
                for d in (stride + 1, stride - 1, -stride + 1, -stride - 1):
                    if board[p + d] == other:
                        bad += 1
                if bad == 0 or (bad == 1 and not edge):
                    continue
            # captures, suicide and the new board's hash, from the neighbours' groups
            alive = False
            takes = False
            nh = h ^ keys[colour, p]
            for d in (1, -1, stride, -stride):
                v = board[p + d]
                if v == EMPTY:
                    alive = True
                elif v == colour:
                    if not alive and libs[gid[p + d]] > _shared(board, gid, p, d, stride):
                        alive = True
                elif v == other:
                    g = gid[p + d]
                    if libs[g] == _shared(board, gid, p, d, stride):
                        # its last liberty: taken, once (a group seen from two sides counts once)
                        first = True
                        for e in (1, -1, stride, -stride):
                            if e == d:
                                break
                            if board[p + e] == other and gid[p + e] == g:
                                first = False
                        if first:
                            takes = True
                            s = g
                            while True:
                                nh ^= keys[other, s]
                                s = nxt[s]
                                if s == g:
                                    break
            if not (alive or takes) or (nh != 0 and table[_slot(table, nh)] == nh):
                continue  # suicide, or positional superko
            chosen = a
            break
        if chosen < 0:
            out[played] = pass_action
            passes += 1
        else:
            out[played] = chosen
            passes = 0
            h = nh
            table[_slot(table, nh)] = nh
            empties[untried] = empties[count - 1]
            count -= 1
            p = point_of[chosen]
            board[p] = colour
            # the stone's own group, its neighbours' pseudo-liberties less the point
            gid[p], nxt[p], stones[p], own = p, p, 1, 0
            for d in (1, -1, stride, -stride):
                v = board[p + d]
                if v == EMPTY:
                    own += 1
                elif v == BLACK or v == WHITE:
                    libs[gid[p + d]] -= 1
            libs[p] = own
            for d in (1, -1, stride, -stride):
                q = p + d
                if board[q] == colour and gid[q] != gid[p]:
                    # merged: the smaller ring renamed, the rings spliced, the counts added
                    small, big = gid[p], gid[q]
                    if stones[small] > stones[big]:
                        small, big = big, small
                    s = small
                    while True:
                        gid[s] = big
                        s = nxt[s]
                        if s == small:
                            break
                    nxt[small], nxt[big] = nxt[big], nxt[small]
                    libs[big] += libs[small]
                    stones[big] += stones[small]
            ncaptured = 0
            for d in (1, -1, stride, -stride):
                q = p + d
                if board[q] == other and libs[gid[q]] == 0:
                    g = gid[q]
                    s = g
                    while True:
                        board[s] = EMPTY
                        gid[s] = -1
                        captured[ncaptured] = s
                        ncaptured += 1
                        s = nxt[s]
                        if s == g:
                            break
            if ncaptured > 0:
                for j in range(ncaptured):
                    s = captured[j]
                    for d in (1, -1, stride, -stride):
                        if board[s + d] == colour:
                            libs[gid[s + d]] += 1
                # the reference adds the captured points in increasing action order
                for j in range(ncaptured):
                    a = action_of[captured[j]]
                    k = count + j
                    while k > count and empties[k - 1] > a:
                        empties[k] = empties[k - 1]
                        k -= 1
                    empties[k] = a
                count += ncaptured
        played += 1
        colour = 3 - colour
    return played, area_winner(board, stride, komi, stack, mark, 1)


@njit(cache=True, _nrt=False)
def area_winner(board, stride, komi, stack, mark, stamp):
    """The winner of the padded ``board`` by area (Tromp-Taylor): black's stones and the
    empty regions that reach black's only, less white's, less ``komi``; 1, 2, or 0 for a
    draw. ``mark`` must hold no ``stamp`` yet."""
    black_area = 0
    white_area = 0
    for p in range(board.shape[0]):
        v = board[p]
        if v == BLACK:
            black_area += 1
        elif v == WHITE:
            white_area += 1
        elif v == EMPTY and mark[p] != stamp:
            top = 0
            stack[top] = p
            top += 1
            mark[p] = stamp
            size_region = 0
            reaches = 0
            while top > 0:
                top -= 1
                s = stack[top]
                size_region += 1
                for d in (1, -1, stride, -stride):
                    r = s + d
                    w = board[r]
                    if w == EMPTY:
                        if mark[r] != stamp:
                            mark[r] = stamp
                            stack[top] = r
                            top += 1
                    elif w == BLACK:
                        reaches |= 1
                    elif w == WHITE:
                        reaches |= 2
            if reaches == 1:
                black_area += size_region
            elif reaches == 2:
                white_area += size_region
    score = black_area - white_area - komi
    return 1 if score > 0 else 2 if score < 0 else 0
