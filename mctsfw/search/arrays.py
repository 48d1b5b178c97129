"""The search tree of a lock-step group of games as preallocated arrays, and its compiled
phases (numba): selection under virtual loss, expansion, backup, proofs, tree reuse.

One ``ArrayTree`` holds G trees (one a game of the group), each in structure-of-arrays
form: its **nodes** (the positions a descent has reached: ``visits[g, i]``,
``value[g, i]``, ...) and its **edges** (the moves each expanded node considers:
``edge_action``, ``edge_prior``, ``edge_child``, one contiguous block a node). A node is
made when a descent first takes its edge, as the object search makes a child; its
position is worked out then and kept in the tree's pool of states (``board`` int8 and
``aux`` int64 rows: the game's fixed-size state, ``mctsfw.search.kernels``). An edge not
taken costs 12 bytes and no position.

A node's edges keep the order its moves were taken in: the taken ones are a prefix of
its block (``tried``), and the next untried move is ``edge_first + tried``. UCT draws the
block's order at expansion; PUCT and Gumbel list the moves in action order and bring the
one of highest prior to the head of the untried (ties: the larger action, as the object
search pops its sorted list), again each time one is taken (``best_untried_first``), so a
descent reads one untried move and a leaf never entered again costs no sort. The formulas
are the object search's (``plugins/puct.py``, ``plugins/uct.py``, ``plugins/gumbel.py``)
term for term, so that a search that draws nothing at random visits alike on either.
Gumbel's root follows its plan (``GumbelPlans``: the Gumbel noise, the moves considered
and the halving's visits, drawn and planned in Python once a search by
``Gumbel.plan``); below the root, ``own`` keeps each node's value when first entered.

Values: ``value[g, i]`` is the sum of results for ``mover[g, i]``, the player who moved
into node i (1 a win, 0.5 a draw, 0 a loss); ``player[g, i]`` the player to move there (0
at a final position). ``proven[g, i]`` is the node's exact result for its mover once
known (``LOSS``, ``DRAW``, ``WIN``), else ``UNKNOWN``; ``depth`` then the moves to the end
with best play.

Python enters once a round: ``select`` gathers a batch of leaves for every tree, the
game's kernels work out and judge them, the evaluator answers for all of them at once
(the network call), and ``expand``, ``backup`` and ``prove`` finish the round. numba keeps
the compiled kernels in ``__pycache__`` (``cache=True``).
"""

from __future__ import annotations

import math

import numpy as np

from hexzero.mctsfw.jit import njit

#: ``proven`` codes: the result for the node's mover
UNKNOWN, LOSS, DRAW, WIN = -1, 0, 1, 2
#: the tree policies the compiled selection knows
UCT, PUCT, GUMBEL = 0, 1, 2
#: Gumbel's floor on a prior before its log (log 0 is -inf), the compiled selection's and
#: ``plugins/gumbel.py``'s
TINY = 1e-12
#: PUCT's first-play values (``first_play``)
FPU_PARENT, FPU_REDUCTION, FPU_LOSS, FPU_WIN = 0, 1, 2, 3
#: what a game's ``moves`` kernel says of a leaf (``forced``): its moves as masked; a move
#: that wins at once (``forced_move`` the first); every stop of the opponent's win leaves
#: another (the leaf lost in 2: ``forced_move`` the first stop)
SEARCH, WINS_NOW, LOST_IN_2 = 0, 1, 2

NODE_FIELDS = {  # name: (dtype, fill)
    "parent": (np.int32, -1), "action": (np.int32, -1), "prior": (np.float32, 0), "visits": (np.int32, 0),
    "value": (np.float64, 0), "edge_first": (np.int32, -1), "edge_count": (np.int32, 0), "tried": (np.int32, 0),
    "player": (np.int8, 0), "mover": (np.int8, 0), "proven": (np.int8, UNKNOWN), "depth": (np.int16, 0),
    "slot": (np.int32, -1),
    "own": (np.float64, np.nan),  # Gumbel: the node's value for its player to move when first entered
}
EDGE_FIELDS = {"edge_action": (np.int32, -1), "edge_prior": (np.float32, 0), "edge_child": (np.int32, -1)}


class ArrayTree:
    """G search trees, each with room for ``capacity`` nodes, ``edges`` edges and
    ``states`` positions (grown when needed, ``reserve``, by ``growth`` times at least); a
    game's state is ``state_len`` int8 and ``aux_len`` int64 entries."""

    growth = 2

    def __init__(self, trees: int, state_len: int, aux_len: int, capacity: int = 1024, edges: int = 16384,
                 states: int | None = None):
        self.trees, self.state_len, self.aux_len = trees, state_len, max(aux_len, 1)
        self.capacity, self.edge_capacity, self.state_capacity = capacity, edges, states or capacity
        for name, (dtype, fill) in NODE_FIELDS.items():
            setattr(self, name, np.full((trees, capacity), fill, dtype))
        for name, (dtype, fill) in EDGE_FIELDS.items():
            setattr(self, name, np.full((trees, edges), fill, dtype))
        self.board = np.zeros((trees, self.state_capacity, state_len), np.int8)
        self.aux = np.zeros((trees, self.state_capacity, self.aux_len), np.int64)
        self._nodes: tuple | None = None
        self.gumbel_plans: GumbelPlans | None = None  # Gumbel's root plans (``ArrayMCTS.begin``)
        self.rng = np.ones(trees, np.uint64)  # each tree's xorshift64* generator (playouts, UCT's move order)
        self.size = np.ones(trees, np.int32)  # nodes in use; node 0 is the root
        self.edges = np.zeros(trees, np.int32)  # edges in use
        self.states = np.zeros(trees, np.int32)  # positions in use

    def reserve(self, nodes: int, edges: int, states: int) -> None:
        """Room for that many more nodes, edges and positions in every tree (doubling)."""
        if int(self.size.max()) + nodes > self.capacity:
            self.capacity = self._grow(NODE_FIELDS, self.capacity, int(self.size.max()) + nodes)
        if int(self.edges.max()) + edges > self.edge_capacity:
            self.edge_capacity = self._grow(EDGE_FIELDS, self.edge_capacity, int(self.edges.max()) + edges)
        if int(self.states.max()) + states > self.state_capacity:
            capacity = max(int(self.states.max()) + states, self.growth * self.state_capacity)
            for name in ("board", "aux"):
                old = getattr(self, name)
                new = np.zeros((self.trees, capacity, old.shape[2]), old.dtype)
                new[:, :self.state_capacity] = old
                setattr(self, name, new)
            self.state_capacity = capacity

    def _grow(self, fields: dict, capacity: int, need: int) -> int:
        grown = max(need, self.growth * capacity)
        for name, (dtype, fill) in fields.items():
            old = getattr(self, name)
            new = np.full((self.trees, grown), fill, dtype)
            new[:, :capacity] = old
            setattr(self, name, new)
        return grown

    def clear(self, g: int) -> None:
        """Tree ``g`` emptied: a root (node 0) without a position."""
        for name, (_, fill) in NODE_FIELDS.items():
            getattr(self, name)[g, :int(self.size[g])] = fill
        for name, (_, fill) in EDGE_FIELDS.items():
            getattr(self, name)[g, :int(self.edges[g])] = fill
        self.size[g], self.edges[g], self.states[g] = 1, 0, 0

    def nodes(self) -> tuple:
        """The node fields in ``NODE_FIELDS``' order (made again only when they grow)."""
        if self._nodes is None or self._nodes[0] is not self.parent:
            self._nodes = tuple(getattr(self, name) for name in NODE_FIELDS)
        return self._nodes

    def nbytes(self, g: int = 0) -> dict[str, int]:
        """The bytes tree ``g`` uses: its nodes' (stats and positions) and its edges'."""
        per_node = sum(np.dtype(dtype).itemsize for dtype, _ in NODE_FIELDS.values())
        per_state = self.state_len + 8 * self.aux_len
        per_edge = sum(np.dtype(dtype).itemsize for dtype, _ in EDGE_FIELDS.values())
        return {"nodes": int(self.size[g]), "edges": int(self.edges[g]),
                "bytes": int(self.size[g]) * per_node + int(self.states[g]) * per_state + int(self.edges[g]) * per_edge}


class GumbelPlans:
    """Each tree's root plan for Gumbel's sequential halving (``plugins.gumbel.RootPlan``)
    as arrays ``select`` reads: each move's Gumbel noise and visits before the search (by
    action), the moves considered, the halving's visits a search game, the ``counters``
    (``PLANNED``, ...), the moves left at the plan's end (by action), the root's own value,
    and the policy's ``c_visit`` and ``c_scale``. A tree policy without plans passes
    ``GumbelPlans(trees, 1)``."""

    def __init__(self, trees: int, num_actions: int, c_visit: float = 0.0, c_scale: float = 0.0):
        self.gumbel = np.zeros((trees, num_actions), np.float64)
        self.start = np.zeros((trees, num_actions), np.int64)
        self.considered = np.zeros((trees, num_actions), np.int64)
        self.sequence = np.zeros((trees, 1), np.int64)
        self.counters = np.zeros((trees, 5), np.int64)
        self.last = np.zeros((trees, num_actions), np.bool_)
        self.value = np.zeros(trees, np.float64)
        self.params = np.array([c_visit, c_scale], np.float64)

    def set(self, g: int, actions: np.ndarray, gumbel: np.ndarray, considered: np.ndarray, tried: int,
            visits: np.ndarray, sequence: list[int], value: float) -> None:
        """Tree g's root plan (``Gumbel.draw``'s): the root's moves ``actions`` (its children
        first, the first ``tried``, with their ``visits`` so far) and their Gumbel noise, the
        moves ``considered``, the halving's ``sequence`` and the root's own ``value``."""
        self.gumbel[g] = 0.0
        self.gumbel[g, actions] = gumbel
        self.start[g] = 0
        self.start[g, actions[:tried]] = visits[:tried]
        self.last[g] = False
        k, length = len(considered), len(sequence)
        self.considered[g, :k] = considered
        if self.sequence.shape[1] < length:
            grown = np.zeros((self.sequence.shape[0], length), np.int64)
            grown[:, :self.sequence.shape[1]] = self.sequence
            self.sequence = grown
        self.sequence[g, :length] = sequence
        self.counters[g] = (1, k, length, 0, 0)
        self.value[g] = value

    def arrays(self) -> tuple:
        return (self.gumbel, self.start, self.considered, self.sequence, self.counters, self.last, self.value,
                self.params)


# ---- selection ------------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def first_play_value(value, visits, node, first_play, fpu_reduction):
    """PUCT's value of an untried move of ``node`` for its player to move."""
    if first_play == FPU_PARENT or first_play == FPU_REDUCTION:
        parent = 1.0 - value[node] / visits[node] if visits[node] else 0.5
        if first_play == FPU_PARENT:
            return parent
        return max(parent - fpu_reduction, 0.0)
    return 0.0 if first_play == FPU_LOSS else 1.0


@njit(cache=True, _nrt=False)
def best_child(visits, value, proven, depth, edge_first, tried, edge_child, node):
    """The child to play (``mcts.best_child``): a proven win (the fastest), else the most
    visited not proven lost (ties by mean value, the first), else the one that loses last."""
    start, end = edge_first[node], edge_first[node] + tried[node]
    best, best_depth = -1, 1 << 30
    for e in range(start, end):
        i = edge_child[e]
        if proven[i] == WIN and depth[i] < best_depth:
            best, best_depth = i, depth[i]
    if best >= 0:
        return best
    most = -1
    for e in range(start, end):
        i = edge_child[e]
        if proven[i] != LOSS and visits[i] > most:
            most = visits[i]
    if most >= 0:
        best_q = -1.0
        for e in range(start, end):
            i = edge_child[e]
            if proven[i] != LOSS and visits[i] == most:
                q = value[i] / visits[i] if visits[i] else 0.0
                if best < 0 or q > best_q:
                    best, best_q = i, q
        return best
    longest = -1
    for e in range(start, end):
        i = edge_child[e]
        if depth[i] > longest:
            best, longest = i, depth[i]
    return best


@njit(cache=True, _nrt=False)
def root_targets(visits, value, proven, depth, edge_first, tried, edge_child, action, g, counts):
    """Tree g's root's visits by action into ``counts`` (``ArrayMCTS.targets``): its proven
    win alone where it has one, else its children's visits, those proven lost left out
    unless every child is; the best child (``best_child``), -1 where none was made."""
    counts[:] = 0
    start, k = edge_first[g, 0], tried[g, 0]
    if start < 0 or k == 0:
        return -1
    best = best_child(visits[g], value[g], proven[g], depth[g], edge_first[g], tried[g], edge_child[g], 0)
    if proven[g, best] == WIN:
        counts[action[g, best]] = 1
        return best
    keep_lost = proven[g, best] == LOSS
    for e in range(start, start + k):
        i = edge_child[g, e]
        if keep_lost or proven[g, i] != LOSS:
            counts[action[g, i]] = visits[g, i]
    return best


@njit(cache=True, _nrt=False)
def root_child(edge_first, tried, edge_child, action, g, move):
    """Tree g's root's child that ``move`` made, -1 where it has none."""
    start = edge_first[g, 0]
    if start < 0:
        return -1
    for e in range(start, start + tried[g, 0]):
        i = edge_child[g, e]
        if action[g, i] == move:
            return i
    return -1


# ---- Gumbel (``plugins/gumbel.py``: its formulas term for term) ------------------------------------
#: ``GumbelPlans.counters`` columns: whether the root has a plan, the moves considered, the
#: plan's length, its search games so far, whether the moves left at its end are marked
PLANNED, CONSIDERED, LENGTH, PLAYED, LAST_KNOWN = 0, 1, 2, 3, 4


@njit(cache=True, _nrt=False)
def gumbel_completion(vis, val, pri, prv, efirst, ecount, tri, echild, node, own, params):
    """``Gumbel.completion`` of ``node``: (the value of a move not visited, the least
    value, sigma's factor, the children's visits)."""
    start, k = efirst[node], tri[node]
    total, most, known_p, known_pq = 0, 0, 0.0, 0.0
    for e in range(start, start + k):
        i = echild[e]
        n = vis[i]
        total += n
        most = max(most, n)
        if prv[i] != UNKNOWN or n:
            q = prv[i] * 0.5 if prv[i] != UNKNOWN else val[i] / n
            known_p += np.float64(pri[i])
            known_pq += np.float64(pri[i]) * q
    mixed = (own + total * known_pq / known_p) / (1.0 + total) if known_p > 0 else own
    low, high = math.inf, -math.inf
    for e in range(start, start + k):
        q = gumbel_q(vis, val, prv, echild[e], mixed)
        low, high = min(low, q), max(high, q)
    if k < ecount[node]:
        low, high = min(low, mixed), max(high, mixed)
    return mixed, low, (params[0] + most) * params[1] / max(high - low, 1e-8), total


@njit(cache=True, _nrt=False)
def gumbel_q(vis, val, prv, i, mixed):
    """A child's completed value for its mover: proven, its mean, else ``mixed``."""
    if prv[i] != UNKNOWN:
        return prv[i] * 0.5
    return val[i] / vis[i] if vis[i] else mixed


@njit(cache=True, _nrt=False)
def gumbel_child(vis, val, pri, prv, efirst, ecount, tri, echild, epri, node, own, params, logs):
    """``Gumbel.select_child`` below the root: the edge that maximises pi'(a) - N(a) / (1 +
    sum N), the untried moves sharing their value (the head of them, of highest prior,
    standing for them all); -1 where every move is tried and proven lost. ``logs``: scratch
    for each child's logit + sigma(q)."""
    start, k, count = efirst[node], tri[node], ecount[node]
    mixed, low, scale, total = gumbel_completion(vis, val, pri, prv, efirst, ecount, tri, echild, node, own, params)
    top = -math.inf
    for j in range(k):
        i = echild[start + j]
        logs[j] = math.log(max(np.float64(pri[i]), TINY)) + scale * (gumbel_q(vis, val, prv, i, mixed) - low)
        top = max(top, logs[j])
    untried_log = scale * (mixed - low)
    norm = 0.0
    if k < count:
        untried_sum = 0.0
        for e in range(start + k, start + count):
            untried_sum += np.float64(epri[e])
        spread = math.log(max(untried_sum, TINY)) + untried_log
        top = max(top, spread)
        norm = math.exp(spread - top)
    total_exp = 0.0
    for j in range(k):
        total_exp += math.exp(logs[j] - top)
    norm += total_exp
    share = 1.0 / (1 + total)
    chosen, best_score = -1, -math.inf
    for j in range(k):
        e = start + j
        i = echild[e]
        score = math.exp(logs[j] - top) / norm - vis[i] * share
        if score > best_score and prv[i] != LOSS:  # a move proven lost is never searched again
            chosen, best_score = e, score
    if k < count and math.exp(math.log(max(np.float64(epri[start + k]), TINY)) + untried_log - top) / norm > best_score:
        return start + k
    return chosen


@njit(cache=True)
def gumbel_root_edge(vis, val, pri, prv, efirst, ecount, tri, echild, eact, epri, node, own, gumbel, start_visits,
                     considered, sequence, counters, last, params, ints, flags):
    """``Gumbel._root_child``: the halving's next move at the root, as an edge (tried or
    not): of the moves considered and not proven lost, those with the visits the plan
    wants for this search game, the best by g + logit + sigma(q); past the plan (a time
    limit), the moves that were left at its end take turns. ``ints`` (3 rows) and
    ``flags`` (2 rows), each row an action long: scratch."""
    start, k, count = efirst[node], tri[node], ecount[node]
    mixed, low, scale, total = gumbel_completion(vis, val, pri, prv, efirst, ecount, tri, echild, node, own, params)
    m = counters[CONSIDERED]
    edge_of, edge, searched = ints[0], ints[1], ints[2]
    alive, searched_alive = flags[0], flags[1]
    for e in range(start, start + count):
        edge_of[eact[e]] = e
    any_alive = False
    for j in range(m):
        a = considered[j]
        edge[j] = e = edge_of[a]
        child = echild[e] if e < start + k else -1
        searched[j] = (vis[child] if child >= 0 else 0) - start_visits[a]
        alive[j] = child < 0 or prv[child] != LOSS
        any_alive = any_alive or alive[j]
    if not any_alive:
        alive[:m] = True
    searched_alive[:m] = alive[:m]  # the moves whose visits were counted (``searched``' keys)
    i = counters[PLAYED]
    counters[PLAYED] = i + 1
    if i < counters[LENGTH]:
        want = sequence[i]
    else:  # past the plan: the moves left at its end share the rest
        if not counters[LAST_KNOWN]:
            most = -1
            for j in range(m):
                if alive[j]:
                    most = max(most, searched[j])
            for j in range(m):
                last[considered[j]] = alive[j] and searched[j] == most
            counters[LAST_KNOWN] = 1
        kept = False
        for j in range(m):
            kept = kept or (alive[j] and last[considered[j]])
        if kept:
            for j in range(m):
                alive[j] = alive[j] and last[considered[j]]
        want = 1 << 62
        for j in range(m):
            if alive[j]:
                want = min(want, searched[j])
    found = False
    for j in range(m):
        found = found or (alive[j] and searched[j] == want)
    if not found:  # (a move proven lost left the halving)
        least = 1 << 62
        for j in range(m):
            if searched_alive[j]:
                least = min(least, searched[j])
        want = least
    chosen, best_score = -1, -math.inf
    for j in range(m):
        if not alive[j] or searched[j] != want:
            continue
        e = edge[j]
        if e < start + k:
            i = echild[e]
            x = math.log(max(np.float64(pri[i]), TINY)) + scale * (gumbel_q(vis, val, prv, i, mixed) - low)
        else:
            x = math.log(max(np.float64(epri[e]), TINY)) + scale * (mixed - low)
        x += gumbel[considered[j]]
        if chosen < 0 or x > best_score:
            chosen, best_score = e, x
    return chosen


@njit(cache=True)
def root_moves(efirst, ecount, tri, echild, eact, epri, act, pri, vis, order, acts, priors, visits):
    """The root's (node 0's) moves as ``Gumbel.moves`` lists a node's: its children as they
    were made, then its untried moves in the object search's order (``untried_order``),
    into ``acts``, ``priors`` and ``visits`` (an untried move's 0); their number."""
    start, k, count = efirst[0], tri[0], ecount[0]
    for j in range(k):
        i = echild[start + j]
        acts[j], priors[j], visits[j] = act[i], np.float64(pri[i]), vis[i]
    untried_order(epri, start + k, start + count, order)
    for j in range(count - k):
        e = order[j]
        acts[k + j], priors[k + j], visits[k + j] = eact[e], np.float64(epri[e]), 0
    return count


@njit(cache=True, _nrt=False)
def gumbel_root_target(vis, val, pri, prv, dep, efirst, ecount, tri, echild, eact, epri, act, own, params, order,
                       acts, logs, visits, target):
    """``Gumbel.root_target`` of the root (node 0, with children) into ``target`` (by
    action), before its last division by its sum: a proven win alone; else pi' (softmax
    of ``Gumbel.log_weights``, in ``root_moves``' order) of every move not proven lost, or
    of every move where all are. ``order``, ``acts``, ``logs`` and ``visits``: scratch,
    an action long."""
    target[:] = 0.0
    start, k = efirst[0], tri[0]
    best = best_child(vis, val, prv, dep, efirst, tri, echild, 0)
    if prv[best] == WIN:
        target[act[best]] = 1.0
        return
    mixed, low, scale, total = gumbel_completion(vis, val, pri, prv, efirst, ecount, tri, echild, 0, own, params)
    m = root_moves(efirst, ecount, tri, echild, eact, epri, act, pri, vis, order, acts, logs, visits)  # (logs: priors)
    top = -math.inf
    for j in range(m):
        if j < k:
            i = echild[start + j]
            logs[j] = math.log(max(logs[j], TINY)) + scale * (gumbel_q(vis, val, prv, i, mixed) - low)
        else:
            logs[j] = math.log(max(logs[j], TINY)) + scale * (mixed - low)
        top = max(top, logs[j])
    norm = 0.0
    for j in range(m):
        logs[j] = math.exp(logs[j] - top)
        norm += logs[j]
    every_lost = prv[best] == LOSS
    for j in range(m):
        if j >= k or prv[echild[start + j]] != LOSS or every_lost:
            target[acts[j]] = logs[j] / norm


@njit(cache=True, _nrt=False)
def gumbel_root_choice(vis, val, pri, prv, dep, efirst, ecount, tri, echild, act, own, gumbel, start_visits,
                       considered, m, params):
    """``Gumbel.root_choice`` (the root, node 0, with children): its proven win; else, of
    the ``m`` moves considered that have a child not proven lost, the ones searched most
    in this search, the first best by g + logit + sigma(q); else ``best_child``."""
    start, k = efirst[0], tri[0]
    best = best_child(vis, val, prv, dep, efirst, tri, echild, 0)
    if prv[best] == WIN:
        return best
    mixed, low, scale, total = gumbel_completion(vis, val, pri, prv, efirst, ecount, tri, echild, 0, own, params)
    chosen, most, best_score = -1, -1, -math.inf
    for j in range(m):
        a = considered[j]
        child = -1
        for e in range(start, start + k):
            if act[echild[e]] == a:
                child = echild[e]
                break
        if child < 0 or prv[child] == LOSS:
            continue
        searched = vis[child] - start_visits[a]
        x = math.log(max(np.float64(pri[child]), TINY)) + scale * (gumbel_q(vis, val, prv, child, mixed) - low)
        x += gumbel[a]
        if searched > most or (searched == most and x > best_score):
            chosen, most, best_score = child, searched, x
    return chosen if chosen >= 0 else best


@njit(cache=True)
def select(parent, action, prior, visits, value, edge_first, edge_count, tried, player, mover, proven, depth,
           own, edge_action, edge_prior, edge_child, size, roots, batch, policy, c, first_play, fpu_reduction,
           plans, paths, path_len, leaves):
    """``batch[g]`` descents in each tree g from ``roots[g]`` down to a leaf (a node not
    expanded, final or proven), each node on the way counting the visit at once (the
    virtual loss of a batch); a descent that takes an untried move makes its node.
    ``paths[g, b, :path_len[g, b]]`` holds each descent's nodes, ``leaves[g, b]`` its last.
    Gumbel: the root's move from its plan (``plans``: ``GumbelPlans.arrays()``), the
    improved policy below it (``gumbel_child``)."""
    gumbel, start_visits, considered, sequence, counters, last, plan_value, gumbel_params = plans
    logs = np.empty(gumbel.shape[1], np.float64)  # Gumbel's scratch: a node's children's log weights
    root_ints, root_flags = np.empty((3, gumbel.shape[1]), np.int64), np.empty((2, gumbel.shape[1]), np.bool_)
    for g in range(visits.shape[0]):
        vis, val, prv, dep, pri = visits[g], value[g], proven[g], depth[g], prior[g]
        efirst, ecount, tri = edge_first[g], edge_count[g], tried[g]
        eact, epri, echild = edge_action[g], edge_prior[g], edge_child[g]
        for b in range(batch[g]):
            node = roots[g]
            length = 0
            paths[g, b, 0] = node
            length = 1
            while efirst[node] >= 0 and prv[node] == UNKNOWN:
                k, start = tri[node], efirst[node]
                chosen = -1  # an edge
                if policy == PUCT:
                    scale = c * math.sqrt(vis[node])
                    best_score = -math.inf
                    if k < ecount[node]:  # the untried move of highest prior stands for them all
                        chosen = start + k
                        best_score = first_play_value(val, vis, node, first_play, fpu_reduction) + scale * epri[chosen]
                    for e in range(start, start + k):
                        i = echild[e]
                        n = vis[i]
                        score = val[i] / n + scale * epri[e] / (1 + n)
                        if score > best_score and prv[i] != LOSS:  # a move proven lost is never searched again
                            chosen, best_score = e, score
                elif policy == GUMBEL:
                    if node == roots[g] and counters[g, PLANNED]:
                        chosen = gumbel_root_edge(vis, val, pri, prv, efirst, ecount, tri, echild, eact, epri, node,
                                                  plan_value[g], gumbel[g], start_visits[g], considered[g],
                                                  sequence[g], counters[g], last[g], gumbel_params, root_ints,
                                                  root_flags)
                    else:
                        if np.isnan(own[g, node]):  # first entered: its visits so far are its own judgement
                            own[g, node] = 1.0 - val[node] / vis[node] if vis[node] else 0.5
                        chosen = gumbel_child(vis, val, pri, prv, efirst, ecount, tri, echild, epri, node,
                                              own[g, node], gumbel_params, logs)
                else:
                    if k < ecount[node]:  # an untried move first (the block is in a random order)
                        chosen = start + k
                    else:
                        explore = c * math.sqrt(math.log(vis[node]))
                        best_score = -1.0
                        for e in range(start, start + k):
                            i = echild[e]
                            n = vis[i]
                            score = val[i] / n + explore / math.sqrt(n)
                            if score > best_score and prv[i] != LOSS:
                                chosen, best_score = e, score
                if chosen < 0:  # every move tried and proven lost: the one that loses last
                    child = best_child(vis, val, prv, dep, efirst, tri, echild, node)
                elif echild[chosen] >= 0:
                    child = echild[chosen]
                else:  # the untried move taken: its node made (its position worked out as a leaf)
                    if chosen != start + k:  # (Gumbel's root: any untried move) moved to the head, the rest kept in order
                        a, p = eact[chosen], epri[chosen]
                        for e in range(chosen, start + k, -1):
                            eact[e], epri[e] = eact[e - 1], epri[e - 1]
                        chosen = start + k
                        eact[chosen], epri[chosen] = a, p
                    child = size[g]
                    size[g] = child + 1
                    parent[g, child], action[g, child], prior[g, child] = node, eact[chosen], epri[chosen]
                    mover[g, child] = player[g, node]
                    echild[chosen] = child
                    tri[node] = k + 1
                    if policy != UCT:  # the next untried move of highest prior brought forward
                        best_untried_first(eact, epri, start + k + 1, start + ecount[node])
                vis[node] += 1
                node = child
                paths[g, b, length] = node
                length += 1
            vis[node] += 1
            path_len[g, b] = length
            leaves[g, b] = node


# ---- expansion ----------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def rng_next(rng, g):
    """xorshift64* on ``rng[g]`` (a tree's generator, ``ArrayTree.rng``): the next 64 bits."""
    x = rng[g]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[g] = x
    return x * np.uint64(2685821657736338717)


@njit(cache=True, _nrt=False)
def rng_below(rng, g, n):
    """A uniformly random whole number below ``n`` from ``rng[g]``."""
    return int(rng_next(rng, g) >> np.uint64(33)) % n


@njit(cache=True, _nrt=False)
def best_untried_first(eact, epri, first, end):
    """PUCT's untried edges ``first:end`` of a block (in the order they were listed): the
    one of highest prior (of the ties the last listed) moved to ``first``, the others
    keeping their order. Listed in action order, that is the move the object search pops
    next from its sorted list (ties: the larger action first); a block's untried edges are
    found in full order only when root noise asks for it (``untried_order``), so a leaf
    never entered again costs one pass, not a sort."""
    if end - first < 2:
        return
    best, best_prior = first, epri[first]
    for e in range(first + 1, end):
        if epri[e] >= best_prior:
            best, best_prior = e, epri[e]
    if best == first:
        return
    a = eact[best]
    for e in range(best, first, -1):
        eact[e], epri[e] = eact[e - 1], epri[e - 1]
    eact[first], epri[first] = a, best_prior


@njit(cache=True)
def untried_order(epri, first, end, out):
    """The untried edges ``first:end`` of a PUCT block in the object search's order of its
    untried list, the lowest prior first: ``first`` (the highest, ``best_untried_first``)
    last, the others by prior, ties in the order listed. ``out[:end - first]``."""
    n = end - first
    if n == 0:
        return
    rest = np.argsort(epri[first + 1:end], kind="mergesort")
    for i in range(n - 1):
        out[i] = first + 1 + rest[i]
    out[n - 1] = first


@njit(cache=True)
def root_noise_order(edge_first, edge_count, tried, edge_action, edge_prior, g, clean, fresh, order, out):
    """Tree g's root's edges in the order its noise is drawn for (the tried as made, then
    the untried as ``untried_order`` lists them) into ``order``, and their clean priors
    into ``out``, from ``clean`` (by action; first filled from the edges' priors where
    ``fresh``); how many edges."""
    start, count, k = edge_first[g, 0], edge_count[g, 0], tried[g, 0]
    for i in range(k):
        order[i] = start + i
    untried_order(edge_prior[g], start + k, start + count, order[k:])
    if fresh:
        for e in range(start, start + count):
            clean[edge_action[g, e]] = edge_prior[g, e]
    for i in range(count):
        out[i] = clean[edge_action[g, order[i]]]
    return count


@njit(cache=True)
def set_root_noise(edge_action, edge_prior, edge_child, prior, g, start, tried, count, noisy, order, out):
    """The root's noisy priors (``noisy``, float64, in ``order``: the tried edges as made,
    then the untried as ``untried_order`` lists them) written: a tried edge's and its
    child's prior; the untried edges listed anew by noisy prior, lowest first (a stable
    sort of that order, as the object search sorts its list), the highest then brought
    forward. ``out``: the untried edges' actions, in the new order, lowest first."""
    for i in range(tried):
        e = order[i]
        edge_prior[g, e] = noisy[i]
        prior[g, edge_child[g, e]] = noisy[i]
    n = count - tried
    if n == 0:
        return
    ranked = np.argsort(noisy[tried:count], kind="mergesort")
    for i in range(n):
        out[i] = edge_action[g, order[tried + ranked[i]]]
    first = start + tried
    for i in range(n):
        edge_action[g, first + i] = out[i]
        edge_prior[g, first + i] = noisy[tried + ranked[i]]
    best_untried_first(edge_action[g], edge_prior[g], first, first + n)


@njit(cache=True)
def mix_root_noise(edge_first, edge_count, tried, edge_action, edge_prior, edge_child, prior, g, clean, fresh, weights,
                   total, epsilon, order, noisy, out):
    """PUCT's root noise in one call (``PUCT.noisy_priors``): the root's clean priors in
    the order the noise is drawn for (``root_noise_order``), mixed with Dir(alpha)'s
    ``weights`` over their ``total`` as ``noise`` share ``epsilon``, written
    (``set_root_noise``)."""
    count = root_noise_order(edge_first, edge_count, tried, edge_action, edge_prior, g, clean, fresh, order, noisy)
    for i in range(count):
        noisy[i] = (1 - epsilon) * noisy[i] + epsilon * (weights[i] / total)
    set_root_noise(edge_action, edge_prior, edge_child, prior, g, edge_first[g, 0], tried[g, 0], count, noisy, order,
                   out)


@njit(cache=True, _nrt=False)
def expand(parent, action, prior, visits, value, edge_first, edge_count, tried, player, mover, proven, depth,
           edge_action, edge_prior, edge_child, size, edges, leaves, judged, forced, forced_move, plies, masks,
           priors, policy, rng, order):
    """Each leaf ``leaves[g, b]`` the game's ``moves`` kernel looked at this round gets its
    edges, or its proof: ``forced[g, b]`` says a move wins there, at once or in
    ``plies[g, b]`` by the game's threat search (proven won; the winning child made), or
    every stop of the opponent's win leaves another (proven lost in 2), or neither: then
    each judged leaf (``judged[g, b]``) gets an edge a move of
    ``masks[g, b]`` (the moves the search considers there), ordered as ``policy`` takes
    them: PUCT and Gumbel in action order, the one of highest prior first (ties: the larger
    action), each judged leaf's priors a row of ``priors`` in (g, b) order (uniform where
    ``priors`` holds none: the object search's order without a network); UCT at random
    (``rng[g]``)."""
    trees, batch = leaves.shape
    num_actions = masks.shape[2]
    row = -1  # the judged leaf's row of ``priors``
    for g in range(trees):
        for b in range(batch):
            leaf = leaves[g, b]
            if forced[g, b] != SEARCH:
                won = forced[g, b] == WINS_NOW
                child = size[g]
                size[g] = child + 1
                e = edges[g]
                edges[g] = e + 1
                edge_action[g, e], edge_prior[g, e], edge_child[g, e] = forced_move[g, b], 1.0, child
                parent[g, child], action[g, child], prior[g, child] = leaf, forced_move[g, b], 1.0
                visits[g, child], value[g, child] = 1, 1.0 if won else 0.0
                mover[g, child] = player[g, leaf]
                edge_first[g, leaf], edge_count[g, leaf], tried[g, leaf] = e, 1, 1
                if won:  # (``MCTS._prove_by``) the player to move wins, at once or by force
                    proven[g, leaf], depth[g, leaf] = LOSS, max(plies[g, b], 1)
                    if plies[g, b] <= 1:
                        proven[g, child], depth[g, child] = WIN, 0
                else:  # whatever stops one threat, the opponent wins with another
                    proven[g, leaf], depth[g, leaf] = WIN, 2
                    proven[g, child], depth[g, child] = LOSS, 1
                continue
            if not judged[g, b]:
                continue
            row += 1
            n = 0
            for a in range(num_actions):
                if masks[g, b, a]:
                    order[n] = a
                    n += 1
            if n == 0:
                continue
            start = edges[g]
            if policy != UCT and priors.shape[1] < num_actions:  # no priors given: uniform ones, in
                for i in range(n):  # action order, the largest (first of the ties) brought forward
                    edge_action[g, start + i] = order[i]
                    edge_prior[g, start + i] = 1.0 / n
                best_untried_first(edge_action[g], edge_prior[g], start, start + n)
            elif policy != UCT:  # in action order, the one of highest prior first (``best_untried_first``)
                for i in range(n):
                    a = order[i]
                    edge_action[g, start + i] = a
                    edge_prior[g, start + i] = priors[row, a]
                best_untried_first(edge_action[g], edge_prior[g], start, start + n)
            else:
                for i in range(n - 1, 0, -1):  # Fisher-Yates
                    j = rng_below(rng, g, i + 1)
                    order[i], order[j] = order[j], order[i]
                uniform = 1.0 / n
                for i in range(n):
                    edge_action[g, start + i] = order[i]
                    edge_prior[g, start + i] = uniform
            for i in range(n):
                edge_child[g, start + i] = -1
            edge_first[g, leaf] = start
            edge_count[g, leaf] = n
            edges[g] = start + n


# ---- values, backup and proofs --------------------------------------------------------------
@njit(cache=True, _nrt=False)
def leaves_to_judge(proven, edge_first, player, leaves, batch, judged):
    """Which leaves the evaluator judges this round: the first time each is met, not
    proven, not final, not expanded (a leaf reached twice in one round is judged once)."""
    for g in range(leaves.shape[0]):
        judged[g, :] = False
        for b in range(batch[g]):
            leaf = leaves[g, b]
            if proven[g, leaf] != UNKNOWN or edge_first[g, leaf] >= 0 or player[g, leaf] == 0:
                continue
            again = False
            for e in range(b):
                if leaves[g, e] == leaf:
                    again = True
                    break
            judged[g, b] = not again


@njit(cache=True, _nrt=False)
def proven_value_p1(proven, mover, g, node):
    """A proven node's result for player 1."""
    result = proven[g, node] * 0.5
    return result if mover[g, node] == 1 else 1.0 - result


@njit(cache=True)
def round_values(proven, mover, player, leaves, batch, judged, values):
    """Each descent's result for player 1: a proven leaf's exact result, a judged leaf's
    value (``values[g, b]``, for its player to move), and for a leaf met again this round
    the value of its first meeting."""
    out = np.zeros(leaves.shape, np.float64)
    for g in range(leaves.shape[0]):
        for b in range(batch[g]):
            leaf = leaves[g, b]
            if proven[g, leaf] != UNKNOWN:
                out[g, b] = proven_value_p1(proven, mover, g, leaf)
            elif judged[g, b]:
                out[g, b] = values[g, b] if player[g, leaf] == 1 else 1.0 - values[g, b]
            else:
                for e in range(b):
                    if leaves[g, e] == leaf:
                        out[g, b] = out[g, e]
                        break
    return out


@njit(cache=True, _nrt=False)
def backup(value, mover, paths, path_len, values_p1, batch):
    """Each descent's result for player 1 added to every node on its path, for the player
    who moved into it (the visits were counted by ``select``)."""
    for g in range(paths.shape[0]):
        for b in range(batch[g]):
            v = values_p1[g, b]
            for j in range(path_len[g, b]):
                node = paths[g, b, j]
                value[g, node] += v if mover[g, node] == 1 else 1.0 - v


@njit(cache=True, _nrt=False)
def prove(proven, depth, edge_first, edge_count, tried, edge_child, paths, path_len, batch):
    """Proofs back up each path that ends in a proven leaf (MCTS-Solver, ``MCTS.prove``):
    a node with a move that is a proven win for its player to move is proven lost for its
    mover; a node whose moves are all tried and proven takes the best of them. The first
    node on the way up that is not proven stops it."""
    for g in range(paths.shape[0]):
        prv, dep, efirst, ecount, tri, echild = proven[g], depth[g], edge_first[g], edge_count[g], tried[g], edge_child[g]
        for b in range(batch[g]):
            length = path_len[g, b]
            if prv[paths[g, b, length - 1]] == UNKNOWN:
                continue
            for j in range(length - 2, -1, -1):
                node, child = paths[g, b, j], paths[g, b, j + 1]
                if prv[node] != UNKNOWN:
                    break
                if prv[child] == WIN:  # the player to move here wins with this move
                    prv[node], dep[node] = LOSS, dep[child] + 1
                    continue
                if tri[node] < ecount[node]:
                    break
                best = -1
                for e in range(efirst[node], efirst[node] + ecount[node]):
                    if prv[echild[e]] == UNKNOWN:
                        best = -2
                        break
                    best = max(best, prv[echild[e]])
                if best == -2:
                    break
                ends = -1 if best == LOSS else 1 << 30
                for e in range(efirst[node], efirst[node] + ecount[node]):
                    i = echild[e]
                    if prv[i] == best:
                        ends = max(ends, dep[i]) if best == LOSS else min(ends, dep[i])
                prv[node], dep[node] = WIN - best, 1 + ends


# ---- tree reuse ---------------------------------------------------------------------------
@njit(cache=True)
def keep_subtree(nodes, edge_action, edge_prior, edge_child, board, aux, size, edges, states, g, root):
    """Tree g's subtree under ``root`` made the whole of its row, ``root`` node 0: the
    used part of the row copied aside, the row cleared, then the subtree copied back
    breadth first, each node's edges kept as a block, their positions too (``nodes``: the
    node fields in ``NODE_FIELDS``' order)."""
    (parent, action, prior, visits, value, edge_first, edge_count, tried, player, mover, proven, depth, slot, own) = nodes
    n, m, k = size[g], edges[g], states[g]
    o_action, o_prior, o_visits, o_value = action[g, :n].copy(), prior[g, :n].copy(), visits[g, :n].copy(), \
        value[g, :n].copy()
    o_first, o_count, o_tried = edge_first[g, :n].copy(), edge_count[g, :n].copy(), tried[g, :n].copy()
    o_player, o_mover, o_proven, o_depth = player[g, :n].copy(), mover[g, :n].copy(), proven[g, :n].copy(), \
        depth[g, :n].copy()
    o_slot, o_own = slot[g, :n].copy(), own[g, :n].copy()
    o_eaction, o_eprior, o_echild = edge_action[g, :m].copy(), edge_prior[g, :m].copy(), edge_child[g, :m].copy()
    o_board, o_aux = board[g, :k].copy(), aux[g, :k].copy()
    # (the fills of NODE_FIELDS and EDGE_FIELDS)
    parent[g, :n], action[g, :n], prior[g, :n], visits[g, :n], value[g, :n] = -1, -1, 0, 0, 0
    edge_first[g, :n], edge_count[g, :n], tried[g, :n] = -1, 0, 0
    player[g, :n], mover[g, :n], proven[g, :n], depth[g, :n], slot[g, :n], own[g, :n] = 0, 0, UNKNOWN, 0, -1, np.nan
    edge_action[g, :m], edge_prior[g, :m], edge_child[g, :m] = -1, 0, -1
    queue = np.empty(n, np.int64)
    queue[0] = root
    head, tail, used_edges, used_states = 0, 1, 0, 0
    while head < tail:
        old, new = queue[head], head
        head += 1
        action[g, new] = -1 if new == 0 else o_action[old]
        own[g, new] = o_own[old]
        prior[g, new], visits[g, new], value[g, new], tried[g, new] = o_prior[old], o_visits[old], o_value[old], \
            o_tried[old]
        player[g, new], mover[g, new], proven[g, new], depth[g, new] = o_player[old], o_mover[old], o_proven[old], \
            o_depth[old]
        if o_slot[old] >= 0:
            board[g, used_states] = o_board[o_slot[old]]
            aux[g, used_states] = o_aux[o_slot[old]]
            slot[g, new] = used_states
            used_states += 1
        if o_first[old] >= 0:
            count = o_count[old]
            edge_first[g, new], edge_count[g, new] = used_edges, count
            for j in range(count):
                e = o_first[old] + j
                edge_action[g, used_edges + j] = o_eaction[e]
                edge_prior[g, used_edges + j] = o_eprior[e]
                child = o_echild[e]
                if child >= 0:
                    queue[tail] = child
                    edge_child[g, used_edges + j] = tail
                    parent[g, tail] = new
                    tail += 1
            used_edges += count
    size[g], edges[g], states[g] = tail, used_edges, used_states
