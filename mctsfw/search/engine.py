"""The search on arrays: ``ArrayMCTS``, the object search's loop over an ``ArrayTree``.

It searches as ``mctsfw.mcts.MCTS`` does (select a batch of leaves under virtual loss,
judge them in one call, expand, back up, prove), with the same formulas and the same
order of moves, so that a search that draws nothing at random visits alike on either
(``tests/test_array_search.py``); but the tree is arrays and every phase is one compiled
call for the whole round (``mctsfw.search.arrays`` for the tree, the game's kernels for
its rules, ``mctsfw.search.kernels``). Python enters once a round, for the evaluator:
random playouts (the game's kernel), or a network's values and priors (one call for the
round's leaves), or both mixed.

``array_problem`` says whether a search can run here (a game with kernels; UCT or PUCT;
random playouts, a value head, or the two mixed); ``make_search`` builds this search
where it can and the object search elsewhere.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from hexzero.mctsfw.evaluators import LeafEvaluator, MixedEvaluator, NetValue, RandomRollouts
from hexzero.mctsfw.game import Action, Game, State
from hexzero.mctsfw.sampling import masked_policy
from hexzero.mctsfw.search import arrays
from hexzero.mctsfw.search.arrays import LOSS, PUCT, UCT, UNKNOWN, WIN, ArrayTree

#: random playouts are judged up to this many a round, and a search keeps at least
#: ``ROUNDS_AT_LEAST`` rounds (a 64th of its budget a round): the virtual loss of a round
#: spreads its descents, and fewer rounds than that would search wider than one at a time;
#: a network's leaves come its own batch a round (``LeafEvaluator.batch_for``)
ROLLOUT_ROUND = 64
ROUNDS_AT_LEAST = 64
FIRST_PLAY = {"parent": arrays.FPU_PARENT, "reduction": arrays.FPU_REDUCTION, "loss": arrays.FPU_LOSS,
              "win": arrays.FPU_WIN}


def kernels_of(game: Game):
    """The game's kernels for the array search, or None where it offers none."""
    make = getattr(game, "kernels", None)
    return make() if callable(make) else None


def array_problem(game: Game, tree_policy: Any, evaluator: LeafEvaluator, root_noise: bool = False) -> str | None:
    """None where a search of ``game`` with this tree policy and evaluator runs on arrays,
    else why it stays on the object search."""
    kernels = kernels_of(game)
    if kernels is None:
        return f"{game.name} offers no compiled kernels"
    if tree_policy.name not in ("uct", "puct"):
        return f"the {tree_policy.name} tree policy runs on the object search"
    if root_noise:
        return "root noise runs on the object search"
    if type(game).forced_win is not Game.forced_win or type(game).threat_defences is not Game.threat_defences:
        return f"{game.name}'s threat search runs on the object search"
    net, rollouts = split_evaluator(evaluator)
    if net is None and rollouts is None:
        return f"the {evaluator.name} evaluator runs on the object search"
    if net is not None and (net.random_symmetry or net.mean_symmetry):
        return "a network judged in its symmetries runs on the object search"
    if net is not None and net.net.input_kind not in kernels.encodings:
        return f"{game.name}'s kernels give no {net.net.input_kind} encoding"
    if rollouts is not None and rollouts.choose is not None:
        return "tactical playouts run on the object search"
    if tree_policy.name == "uct" and net is not None:
        return "UCT with a network runs on the object search"
    return None


def split_evaluator(evaluator: LeafEvaluator) -> tuple[NetValue | None, RandomRollouts | None]:
    """(the value head, the random playouts) an evaluator mixes; (None, None) for others."""
    if type(evaluator) is RandomRollouts:
        return None, evaluator
    if type(evaluator) is NetValue:
        return evaluator, None
    if type(evaluator) is MixedEvaluator and type(evaluator.value) is NetValue and type(evaluator.rollout) is RandomRollouts:
        return evaluator.value, evaluator.rollout
    return None, None


class ArrayMCTS:
    """The search of one game on an ``ArrayTree`` (see the module's text): the public
    methods of ``mctsfw.mcts.MCTS`` that players use."""

    def __init__(self, game: Game, tree_policy: Any, evaluator: LeafEvaluator, seed: int | None = None,
                 batch_size: int | None = None, threats: bool = True, solver: bool = True):
        problem = array_problem(game, tree_policy, evaluator)
        if problem:
            raise ValueError(problem)
        self.game, self.tree_policy, self.evaluator = game, tree_policy, evaluator
        self.kernels = kernels_of(game)
        self.net, self.rollouts = split_evaluator(evaluator)
        self.weight = evaluator.weight if type(evaluator) is MixedEvaluator else 1.0
        self.policy = PUCT if tree_policy.name == "puct" else UCT
        self.c = tree_policy.c_puct if self.policy == PUCT else tree_policy.c
        self.first_play = FIRST_PLAY[getattr(tree_policy, "first_play", "parent")]
        self.fpu_reduction = float(getattr(tree_policy, "fpu_reduction", 0.2))
        self.batch_size = batch_size
        self.threats = bool(threats) and type(game).forcing_actions is not Game.forcing_actions
        self.solver = bool(solver)
        self.root_noise = False
        seeds = np.random.SeedSequence(seed).generate_state(2, np.uint64)
        self.rng = np.array([seeds[0] | np.uint64(1)], np.uint64)  # xorshift: never 0
        k = self.kernels
        self.tree = ArrayTree(1, k.state_len, k.aux_len)
        self.root_state: State | None = None
        self.root_move: Action | None = None  # the move that made the root, when it was played (``advance``)
        self.last_search_games = 0
        self.on_progress: Callable | None = None
        self.progress_interval = 0.1
        self.stop_requested = False
        warm_up(game, k)

    @property
    def draws_at_random(self) -> bool:
        return self.evaluator.draws_at_random or self.policy == UCT

    # ---- the public API ---------------------------------------------------------------
    def search(self, state: State, search_games: int | None = None, time_limit: float | None = None) -> "ArrayMCTS":
        """Search ``state`` until either budget is spent (a kept subtree reused); the search
        itself stands for its root (``best_action``, ``visit_distribution``, ``progress``)."""
        from hexzero.mctsfw.mcts import budget_problem

        problem = budget_problem(search_games, time_limit)
        if problem:
            raise ValueError(problem)
        if self.game.is_final(state):
            raise ValueError("the game is over: nothing to search")
        self._root_for(state)
        self.last_search_games = self.run(search_games or math.inf, time_limit)
        return self

    def _root_children(self) -> list[int]:
        """The root's children, in the order they were made."""
        t = self.tree
        start = t.edge_first[0, 0]
        return [] if start < 0 else [int(t.edge_child[0, e]) for e in range(start, start + t.tried[0, 0])]

    def _best_child(self) -> int:
        t = self.tree
        return int(arrays.best_child(t.visits[0], t.value[0], t.proven[0], t.depth[0], t.edge_first[0], t.tried[0],
                                     t.edge_child[0], 0))

    def best_action(self, root: Any = None) -> Action:
        """A proven win, else the most visited move not proven lost (``MCTS.best_action``);
        a move never tried before one proven lost."""
        t = self.tree
        start, tried = t.edge_first[0, 0], t.tried[0, 0]
        if tried == 0:
            return int(t.edge_action[0, start])
        best = self._best_child()
        if t.proven[0, best] == LOSS and tried < t.edge_count[0, 0]:
            return int(t.edge_action[0, start + tried])
        return int(t.action[0, best])

    def targets(self, root: Any = None) -> np.ndarray:
        """The root's visits over all actions, corrected by what is proven (``target_counts``)."""
        t = self.tree
        counts = np.zeros(self.game.num_actions, dtype=np.int64)
        children = self._root_children()
        if not children:
            return counts
        best = self._best_child()
        if t.proven[0, best] == WIN:
            counts[t.action[0, best]] = 1
            return counts
        for i in children:
            if t.proven[0, i] != LOSS or t.proven[0, best] == LOSS:
                counts[t.action[0, i]] = t.visits[0, i]
        return counts

    def visit_distribution(self, root: Any = None) -> np.ndarray:
        counts = self.targets().astype(np.float32)
        total = counts.sum()
        return counts / total if total else counts

    def advance(self, action: Action) -> None:
        """The subtree under ``action`` kept as the new root (a move never entered starts afresh)."""
        if self.root_state is None:
            return
        state = self.game.next_state(self.root_state, action)
        child = next((i for i in self._root_children() if self.tree.action[0, i] == action), None)
        if child is None:
            self.reset()
            return
        if self.tree.slot[0, child] < 0:  # a child a proof made: its position worked out now
            self.tree.reserve(0, 0, 1)
            self.kernels.positions(self.tree, np.array([[child]], np.int32), np.ones(1, np.int32))
        self._keep(child)
        self.root_state, self.root_move = state, action

    def reset(self) -> None:
        self.root_state = self.root_move = None

    def kept_value(self, action: Action) -> float | None:
        """The mean result for its mover of the move ``action`` the search played last (``MCTS.kept_value``)."""
        t = self.tree
        if self.root_state is None or self.root_move != action or not t.visits[0, 0]:
            return None
        return float(t.value[0, 0] / t.visits[0, 0])

    def progress(self, simulations: int, seconds: float):
        """The root as a person watching it reads it (``mctsfw.mcts.SearchProgress``)."""
        from hexzero.mctsfw.mcts import SearchProgress

        t = self.tree
        visits = {int(t.action[0, i]): int(t.visits[0, i]) for i in self._root_children() if t.visits[0, i]}
        best = self.best_action() if t.edge_first[0, 0] >= 0 else None
        code = t.proven[0, 0]
        proven = None if code == UNKNOWN else 1.0 - code * 0.5
        root_visits = t.visits[0, 0]
        estimate = proven if proven is not None else 1.0 - t.value[0, 0] / root_visits if root_visits else 0.5
        return SearchProgress(simulations, seconds, visits, estimate, best, proven, int(t.depth[0, 0]))

    # ---- the loop ---------------------------------------------------------------------
    def run(self, limit: float, time_limit: float | None) -> int:
        """Rounds until ``limit`` search games or the time are spent; the search games run."""
        started = time.perf_counter()
        report = self.on_progress
        tree = self.tree
        if tree.edge_first[0, 0] < 0 and tree.proven[0, 0] == UNKNOWN:  # a new root: expanded (PUCT: its priors)
            self._expand_root()
        if tree.proven[0, 0] != UNKNOWN:
            if report is not None:
                report(self.progress(0, time.perf_counter() - started))
            return 0
        batch = self._round_size(limit)
        num_actions, kernels = self.game.num_actions, self.kernels
        roots = np.zeros(1, np.int32)
        paths = np.zeros((1, batch, kernels.max_depth + 2), np.int32)
        path_len, leaves = np.zeros((1, batch), np.int32), np.zeros((1, batch), np.int32)
        judged = np.zeros((1, batch), np.bool_)
        forced, forced_move = np.zeros((1, batch), np.int8), np.zeros((1, batch), np.int32)
        masks = np.zeros((1, batch, num_actions), np.bool_)
        order, keys = np.empty(num_actions, np.int64), np.empty(num_actions, np.float64)
        deadline = started + time_limit if time_limit is not None else math.inf
        next_report = started + self.progress_interval
        done = 0
        while done < limit:
            count = batch if limit - done >= batch else int(limit - done)
            sizes = np.array([count], np.int32)
            tree.reserve(count + 1, count * num_actions + 1, count)
            t = tree
            arrays.select(t.parent, t.action, t.prior, t.visits, t.value, t.edge_first, t.edge_count, t.tried,
                          t.player, t.mover, t.proven, t.depth, t.edge_action, t.edge_prior, t.edge_child, t.size,
                          roots, sizes, self.policy, self.c, self.first_play, self.fpu_reduction, paths, path_len,
                          leaves)
            kernels.positions(t, leaves, sizes)
            arrays.leaves_to_judge(t.proven, t.edge_first, t.player, leaves, sizes, judged)
            kernels.moves(t, leaves, judged, masks, forced, forced_move, self.threats)
            judged &= forced == arrays.SEARCH  # (a leaf a forcing move proves is judged no more)
            values, priors = self._judge(leaves, judged)
            arrays.expand(*t.nodes()[:12], t.edge_action, t.edge_prior, t.edge_child, t.size, t.edges, leaves, judged,
                          forced, forced_move, masks, priors, self.policy, self.rng, order, keys)
            values_p1 = arrays.round_values(t.proven, t.mover, t.player, leaves, sizes, judged, values)
            arrays.backup(t.value, t.mover, paths, path_len, values_p1, sizes)
            if self.solver:
                arrays.prove(t.proven, t.depth, t.edge_first, t.edge_count, t.tried, t.edge_child, paths, path_len,
                             sizes)
            done += count
            if t.proven[0, 0] != UNKNOWN or self.stop_requested:
                break
            if time_limit is not None or report is not None:
                now = time.perf_counter()
                if now >= deadline:
                    break
                if report is not None and now >= next_report:
                    report(self.progress(done, now - started))
                    next_report = now + self.progress_interval
        self.stop_requested = False
        if report is not None:
            report(self.progress(done, time.perf_counter() - started))
        return done

    def _round_size(self, limit: float) -> int:
        if self.batch_size is not None:
            return self.batch_size
        if self.net is None:
            return ROLLOUT_ROUND if not math.isfinite(limit) else int(min(ROLLOUT_ROUND, max(1, limit // ROUNDS_AT_LEAST)))
        return self.evaluator.batch_for(limit)

    def _judge(self, leaves: np.ndarray, judged: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(each judged leaf's value for its player to move, by (g, b); the priors over every
        action, by (g, b): a network's masked over the legal moves, else none)."""
        values = np.zeros(leaves.shape, np.float64)
        priors = np.zeros((*leaves.shape, self.game.num_actions if self.net is not None else 1), np.float64)
        if not judged.any():
            return values, priors
        if self.net is not None:
            x = self.kernels.encode(self.tree, leaves, judged, self.net.net.input_kind)
            legal = self.kernels.legal(self.tree, leaves, judged)
            probs, v = self.net.net.evaluate(x)
            self.net.calls += 1
            self.net.states_evaluated += len(x)
            values[judged] = np.asarray(v, dtype=np.float64)
            priors[judged] = np.asarray(masked_policy(probs, legal), dtype=np.float64)
        if self.rollouts is not None:
            played = self.kernels.playouts(self.tree, leaves, judged, self.rng)
            values = played if self.net is None else self.weight * values + (1.0 - self.weight) * played
        return values, priors

    def _expand_root(self) -> None:
        """A new root: its forcing moves asked (it may be proven), then expanded; PUCT
        judges it first for its priors (not a search game: nothing backed up)."""
        t = self.tree
        num_actions = self.game.num_actions
        leaves, judged = np.zeros((1, 1), np.int32), np.ones((1, 1), np.bool_)
        forced, forced_move = np.zeros((1, 1), np.int8), np.zeros((1, 1), np.int32)
        masks = np.zeros((1, 1, num_actions), np.bool_)
        self.kernels.moves(t, leaves, judged, masks, forced, forced_move, self.threats)
        judged &= forced == arrays.SEARCH
        priors = self._judge(leaves, judged)[1] if self.policy == PUCT and judged[0, 0] else \
            np.zeros((1, 1, 1), np.float64)
        t.reserve(2, num_actions + 1, 1)
        arrays.expand(*t.nodes()[:12], t.edge_action, t.edge_prior, t.edge_child, t.size, t.edges, leaves, judged,
                      forced, forced_move, masks, priors, self.policy, self.rng, np.empty(num_actions, np.int64),
                      np.empty(num_actions, np.float64))

    # ---- tree reuse -------------------------------------------------------------------
    def _root_for(self, state: State) -> None:
        """The kept node for ``state`` (the root, or a child whose position it is), else a fresh root."""
        if self.root_state is not None:
            if self.root_state == state:
                return
            for i in self._root_children():
                if self.tree.slot[0, i] >= 0 and self.game.next_state(self.root_state, int(self.tree.action[0, i])) == state:
                    self._keep(i)
                    self.root_state, self.root_move = state, None
                    return
        self.kernels.set_root(self.tree, 0, state)
        self.root_state, self.root_move = state, None

    def _keep(self, node: int) -> None:
        """Node ``node``'s subtree becomes the whole tree, ``node`` its root."""
        t = self.tree
        fresh = ArrayTree(1, t.state_len, t.aux_len, capacity=t.capacity, edges=t.edge_capacity,
                          states=t.state_capacity)
        queue = np.empty(t.capacity, np.int64)
        nodes, edges, states = arrays.keep_subtree(t.nodes(), fresh.nodes(), t.edge_action, t.edge_prior, t.edge_child,
                                                   fresh.edge_action, fresh.edge_prior, fresh.edge_child, t.board,
                                                   t.aux, fresh.board, fresh.aux, 0, node, queue)
        fresh.size[0], fresh.edges[0], fresh.states[0] = nodes, edges, states
        self.tree = fresh


_WARM: set[type] = set()


def warm_up(game: Game, kernels) -> None:
    """Once a process and kind of kernels, a tiny search (two rounds of random playouts,
    UCT and PUCT) and an encoding, so that loading the compiled code (a second or so) is
    paid when a player is made, not on its first move's clock."""
    if type(kernels) in _WARM:
        return
    _WARM.add(type(kernels))
    from hexzero.mctsfw import make_tree_policy

    state = game.initial_state()
    for policy in ("uct", "puct"):
        search = ArrayMCTS(game, make_tree_policy(policy), RandomRollouts(game, seed=0), seed=0, batch_size=2)
        search.search(state, 4)
    leaves, judged = np.zeros((1, 1), np.int32), np.ones((1, 1), np.bool_)
    for kind in kernels.encodings:
        kernels.encode(search.tree, leaves, judged, kind)
    kernels.legal(search.tree, leaves, judged)


def make_search(game: Game, tree_policy: Any, evaluator: LeafEvaluator, seed: int | None = None,
                batch_size: int | None = None, root_noise: bool = False, threats: bool = True, solver: bool = True,
                engine: str = "auto"):
    """The search a player uses: on arrays where it can run there (``array_problem``) and
    ``engine`` allows ("auto", "arrays"), else the object search (``mctsfw.mcts.MCTS``)."""
    from hexzero.mctsfw.mcts import MCTS

    if engine != "objects":
        problem = array_problem(game, tree_policy, evaluator, root_noise)
        if problem is None:
            return ArrayMCTS(game, tree_policy, evaluator, seed=seed, batch_size=batch_size, threats=threats,
                             solver=solver)
        if engine == "arrays":
            raise ValueError(f"the array search cannot run this search: {problem}")
    return MCTS(game, tree_policy, evaluator, seed=seed, batch_size=batch_size, root_noise=root_noise,
                threats=threats, solver=solver)
