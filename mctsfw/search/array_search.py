"""The search on arrays: ``ArrayMCTS``, the object search's loop over an ``ArrayTree``.

It searches as ``mctsfw.search.object_search.MCTS`` does (select a batch of leaves under virtual loss,
judge them in one call, expand, back up, prove; root noise for self-play), with the same
formulas and the same order of moves, so that a search that draws nothing at random
visits alike on either (``tests/test_array_search.py``); but the tree is arrays and every
phase is one compiled call for the whole round (``mctsfw.search.arrays`` for the tree,
the game's kernels for its rules, ``mctsfw.search.kernels``). Python enters once a round,
for the evaluator: random playouts (the game's kernel), or a network's values and priors
(one call for the round's leaves), or both mixed.

The searches of a lock-step group (the games of a self-play group) share one tree of G
rows (``share_tree``), so ``search_together`` runs every phase of a round for all of them
in one call, and their leaves go to the network in one batch.

``array_problem`` says whether a search can run here (a game with kernels; UCT, PUCT, or
Gumbel with a network's priors; random playouts, a value head, or the two mixed);
``make_search`` builds this search where it can and the object search elsewhere.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Sequence

import numpy as np

from hexzero.mctsfw.evaluators import LeafEvaluator, MixedEvaluator, NetValue, RandomRollouts
from hexzero.mctsfw.game import Action, Game, State
from hexzero.mctsfw.records import shares
from hexzero.mctsfw.sampling import masked_policy
from hexzero.mctsfw.search import arrays
from hexzero.mctsfw.search.arrays import GUMBEL, LOSS, PUCT, UCT, UNKNOWN, ArrayTree, GumbelPlans

#: random playouts are judged up to this many a round, and a search keeps at least
#: ``ROUNDS_AT_LEAST`` rounds (a 64th of its budget a round): the virtual loss of a round
#: spreads its descents, and fewer rounds than that would search wider than one at a time;
#: a network's leaves come its own batch a round (``LeafEvaluator.batch_for``)
ROLLOUT_ROUND = 64
ROUNDS_AT_LEAST = 64
#: the priors of a round without a network's (``judge_leaves``, ``arrays.expand``)
NO_PRIORS = np.zeros((0, 1), np.float32)
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
    if tree_policy.name not in ("uct", "puct", "gumbel"):
        return f"the {tree_policy.name} tree policy runs on the object search"
    if not kernels.threat_search and (type(game).forced_win is not Game.forced_win
                                      or type(game).threat_defences is not Game.threat_defences):
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
    if tree_policy.name == "gumbel" and net is None:
        return "Gumbel without a network's priors runs on the object search"
    if root_noise and tree_policy.name == "uct":
        return "root noise perturbs priors, which UCT does not read"
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
    """The search of one game on row ``g`` of an ``ArrayTree`` (its own, or one it shares
    with the other searches of a lock-step group: ``share_tree``): the public methods of
    ``mctsfw.search.object_search.MCTS`` that players and self-play use."""

    def __init__(self, game: Game, tree_policy: Any, evaluator: LeafEvaluator, seed: int | None = None,
                 batch_size: int | None = None, threats: bool = True, solver: bool = True, root_noise: bool = False):
        problem = array_problem(game, tree_policy, evaluator, root_noise)
        if problem:
            raise ValueError(problem)
        self.game, self.tree_policy, self.evaluator = game, tree_policy, evaluator
        self.kernels = kernels_of(game)
        self.net, self.rollouts = split_evaluator(evaluator)
        self.weight = evaluator.weight if type(evaluator) is MixedEvaluator else 1.0
        self.policy = {"puct": PUCT, "gumbel": GUMBEL}.get(tree_policy.name, UCT)
        self.c = tree_policy.c_puct if self.policy == PUCT else tree_policy.c if self.policy == UCT else 0.0
        self.first_play = FIRST_PLAY[getattr(tree_policy, "first_play", "parent")]
        self.fpu_reduction = float(getattr(tree_policy, "fpu_reduction", 0.2))
        self.batch_size = batch_size
        self.threats = bool(threats) and type(game).forcing_actions is not Game.forcing_actions
        self.forced_wins = self.threats and type(game).forced_win is not Game.forced_win
        self.threats_searched = False  # whether the root had the game's thorough threat search
        self.solver = bool(solver)
        self.root_noise = bool(root_noise)
        self.np_rng = np.random.default_rng(seed)  # root noise: as the object search draws it
        self.xorshift = np.random.SeedSequence(seed).generate_state(1, np.uint64)[0] | np.uint64(1)  # never 0
        k = self.kernels
        self.tree, self.g = ArrayTree(1, k.state_len, k.aux_len), 0
        self.tree.rng[0] = self.xorshift
        self.root_state: State | None = None
        self.root_move: Action | None = None  # the move that made the root, when it was played (``advance``)
        self._clean_priors: np.ndarray | None = None  # the kept root's own priors, by action, once noised
        self._noise_order: np.ndarray | None = None  # root noise's scratch: the edges in order, their clean priors
        self._noise_clean: np.ndarray | None = None
        self._noise_out: np.ndarray | None = None
        self.plan_value: float | None = None  # Gumbel: the root's own value as planned (``begin``), once searched
        self._gumbel_scratch: tuple[np.ndarray, ...] | None = None  # (``_scratch``)
        self._judged_root: float | None = None  # a new root's value as judged for its priors
        self.last_search_games = 0
        self.on_progress: Callable | None = None
        self.progress_interval = 0.1
        self.stop_requested = False
        warm_up(game, k)

    @property
    def draws_at_random(self) -> bool:
        return self.root_noise or self.evaluator.draws_at_random or self.policy == UCT

    # ---- the public API ---------------------------------------------------------------
    def search(self, state: State, search_games: int | None = None, time_limit: float | None = None) -> "ArrayMCTS":
        """Search ``state`` until either budget is spent (a kept subtree reused); the search
        itself stands for its root (``best_action``, ``visit_distribution``, ``progress``)."""
        from hexzero.mctsfw.search import budget_problem

        problem = budget_problem(search_games, time_limit)
        if problem:
            raise ValueError(problem)
        self.prepare(state)
        self.last_search_games = run_rounds([self], [search_games or math.inf], time_limit)[0]
        return self

    def prepare(self, state: State) -> None:
        """The root for ``state``: the kept node whose position it is, else a fresh one."""
        if self.game.is_final(state):
            raise ValueError("the game is over: nothing to search")
        self._root_for(state)

    def _children(self) -> np.ndarray:
        """The root's children, in the order they were made."""
        t, g = self.tree, self.g
        start = t.edge_first[g, 0]
        return t.edge_child[g, :0] if start < 0 else t.edge_child[g, start:start + t.tried[g, 0]]

    def _best_child(self) -> int:
        t, g = self.tree, self.g
        return int(arrays.best_child(t.visits[g], t.value[g], t.proven[g], t.depth[g], t.edge_first[g], t.tried[g],
                                     t.edge_child[g], 0))

    def best_action(self, root: Any = None) -> Action:
        """A proven win, else the most visited move not proven lost (``MCTS.best_action``);
        a move never tried before one proven lost."""
        t, g = self.tree, self.g
        start, tried = t.edge_first[g, 0], t.tried[g, 0]
        if tried == 0:
            return int(t.edge_action[g, start])
        if self.plan_value is not None:  # Gumbel's own choice: the halving's winner (``Gumbel.root_choice``)
            p = t.gumbel_plans
            chosen = arrays.gumbel_root_choice(
                t.visits[g], t.value[g], t.prior[g], t.proven[g], t.depth[g], t.edge_first[g], t.edge_count[g],
                t.tried[g], t.edge_child[g], t.action[g], self.plan_value, p.gumbel[g], p.start[g],
                p.considered[g], int(p.counters[g, arrays.CONSIDERED]), p.params)
            return int(t.action[g, chosen])
        best = self._best_child()
        if t.proven[g, best] == LOSS and tried < t.edge_count[g, 0]:
            return int(t.edge_action[g, start + tried])
        return int(t.action[g, best])

    def targets(self, root: Any = None) -> np.ndarray:
        """The root's visits over all actions, corrected by what is proven (``target_counts``),
        or Gumbel's improved policy in ``TARGET_SCALE`` parts (``MCTS.targets``)."""
        t, g = self.tree, self.g
        if self.plan_value is not None and t.tried[g, 0]:  # ``Gumbel.root_target``
            from hexzero.mctsfw.search import TARGET_SCALE

            order, acts, logs, visits = self._scratch()
            own = np.empty(self.game.num_actions, np.float64)
            arrays.gumbel_root_target(t.visits[g], t.value[g], t.prior[g], t.proven[g], t.depth[g], t.edge_first[g],
                                      t.edge_count[g], t.tried[g], t.edge_child[g], t.edge_action[g], t.edge_prior[g],
                                      t.action[g], self.plan_value, t.gumbel_plans.params, order, acts, logs,
                                      visits, own)
            return np.rint(own / own.sum() * TARGET_SCALE).astype(np.int64)
        counts = np.empty(self.game.num_actions, dtype=np.int64)
        arrays.root_targets(t.visits, t.value, t.proven, t.depth, t.edge_first, t.tried, t.edge_child, t.action, self.g,
                            counts)
        return counts

    def visit_distribution(self, root: Any = None) -> np.ndarray:
        return shares(self.targets())

    def root_result(self) -> float | None:
        """The root's proven result for its player to move (1, 0.5, 0), None while unknown."""
        code = self.tree.proven[self.g, 0]
        return None if code == UNKNOWN else 1.0 - code * 0.5

    def root_value(self) -> float:
        """The root's mean result for its player to move: one less its mover's (``MCTS.root_value``)."""
        t, g = self.tree, self.g
        return 1.0 - (t.value[g, 0] / t.visits[g, 0] if t.visits[g, 0] else 0.0)

    def child_value(self, action: Action) -> float:
        """The mean result of the root's child ``action`` for its mover (0 if never tried)."""
        t, g = self.tree, self.g
        child = self._child(action)
        return float(t.value[g, child] / t.visits[g, child]) if child is not None and t.visits[g, child] else 0.0

    def _child(self, action: Action) -> int | None:
        """The root's child that ``action`` made, None where it has none."""
        t = self.tree
        child = arrays.root_child(t.edge_first, t.tried, t.edge_child, t.action, self.g, int(action))
        return None if child < 0 else int(child)

    def advance(self, action: Action, state: State | None = None) -> None:
        """The subtree under ``action`` kept as the new root (a move never entered starts
        afresh); ``state``: the position after it, where the caller has it already."""
        if self.root_state is None:
            return
        state = self.game.next_state(self.root_state, action) if state is None else state
        child = self._child(action)
        if child is None:
            self.reset()
            return
        if self.tree.slot[self.g, child] < 0:  # a child a proof made: its position worked out now
            self.tree.reserve(0, 0, 1)
            leaves, batch = np.zeros((self.tree.trees, 1), np.int32), np.zeros(self.tree.trees, np.int32)
            leaves[self.g, 0], batch[self.g] = child, 1
            self.kernels.positions(self.tree, leaves, batch)
        self._keep(child)
        self.kernels.rooted(self.tree, self.g, state)
        self.root_state, self.root_move, self.threats_searched = state, action, False

    def reset(self) -> None:
        self.root_state = self.root_move = None

    def kept_value(self, action: Action) -> float | None:
        """The mean result for its mover of the move ``action`` the search played last (``MCTS.kept_value``)."""
        t, g = self.tree, self.g
        if self.root_state is None or self.root_move != action or not t.visits[g, 0]:
            return None
        return float(t.value[g, 0] / t.visits[g, 0])

    def progress(self, simulations: int, seconds: float):
        """The root as a person watching it reads it (``mctsfw.search.nodes.SearchProgress``)."""
        from hexzero.mctsfw.search import SearchProgress

        t, g = self.tree, self.g
        visits = {int(t.action[g, i]): int(t.visits[g, i]) for i in self._children().tolist() if t.visits[g, i]}
        best = self.best_action() if t.edge_first[g, 0] >= 0 else None
        proven = self.root_result()
        estimate = proven if proven is not None else self.root_value() if t.visits[g, 0] else 0.5
        return SearchProgress(simulations, seconds, visits, estimate, best, proven, int(t.depth[g, 0]))

    # ---- Gumbel's root ----------------------------------------------------------------
    def _scratch(self) -> tuple[np.ndarray, ...]:
        """Working arrays an action long for the root's compiled Gumbel kernels: (edge order,
        actions, floats, visits)."""
        if self._gumbel_scratch is None:
            n = self.game.num_actions
            self._gumbel_scratch = (np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.float64),
                                    np.empty(n, np.int64))
        return self._gumbel_scratch

    def begin(self, limit: float) -> None:
        """Gumbel's plan for the root (``Gumbel.begin``): its own value (as judged when it
        was new, else from its statistics), its moves in the object search's order."""
        t, g = self.tree, self.g
        if self._judged_root is not None:
            own = self._judged_root
        elif self.plan_value is not None:
            own = self.plan_value
        elif not np.isnan(t.own[g, 0]):
            own = float(t.own[g, 0])
        else:
            own = 1.0 - t.value[g, 0] / t.visits[g, 0] if t.visits[g, 0] else 0.5
        order, acts, priors, visits = self._scratch()  # the root's moves as ``Gumbel.moves`` lists them
        count = arrays.root_moves(t.edge_first[g], t.edge_count[g], t.tried[g], t.edge_child[g], t.edge_action[g],
                                  t.edge_prior[g], t.action[g], t.prior[g], t.visits[g], order, acts, priors, visits)
        gumbel, top, sequence = self.tree_policy.draw(priors[:count], limit, self.root_noise, self.np_rng)
        plans = t.gumbel_plans
        if plans is None or plans.gumbel.shape[1] != self.game.num_actions:
            plans = t.gumbel_plans = GumbelPlans(t.trees, self.game.num_actions, self.tree_policy.c_visit,
                                                 self.tree_policy.c_scale)
        actions = acts[:count]
        plans.set(g, actions, gumbel, actions[top], int(t.tried[g, 0]), visits, sequence, float(own))
        self.plan_value = float(own)

    # ---- the pieces of a round --------------------------------------------------------
    def round_size(self, limit: float) -> int:
        if self.batch_size is not None:
            return self.batch_size
        if self.net is None:
            return ROLLOUT_ROUND if not math.isfinite(limit) else int(min(ROLLOUT_ROUND, max(1, limit // ROUNDS_AT_LEAST)))
        return self.evaluator.batch_for(limit)

    def add_root_noise(self) -> None:
        """Fresh noise mixed into the root's clean priors (``MCTS.add_root_noise``: the same
        order of moves, so the same draw gives the same priors): the children's in the
        order they were made, then the untried moves' in the object search's order of its
        list (``arrays.untried_order``), lowest first; PUCT's Dirichlet noise drawn as
        ``PUCT.noise`` draws it and mixed compiled (``arrays.mix_root_noise``)."""
        t, g, num_actions, policy = self.tree, self.g, self.game.num_actions, self.tree_policy
        if self._noise_order is None:
            self._noise_order, self._noise_clean = np.empty(num_actions, np.int64), np.empty(num_actions, np.float64)
            self._noise_out = np.empty(num_actions, np.int32)
        fresh = self._clean_priors is None
        if fresh:  # the root's own priors, by action, kept aside once
            self._clean_priors = np.zeros(num_actions, np.float64)
        count = int(t.edge_count[g, 0])
        if hasattr(policy, "noise") and count >= 2 and policy.dirichlet_epsilon > 0:
            weights, total = policy.noise(count, self.np_rng)
            arrays.mix_root_noise(t.edge_first, t.edge_count, t.tried, t.edge_action, t.edge_prior, t.edge_child,
                                  t.prior, g, self._clean_priors, fresh, weights, total, policy.dirichlet_epsilon,
                                  self._noise_order, self._noise_clean, self._noise_out)
            return
        count = arrays.root_noise_order(t.edge_first, t.edge_count, t.tried, t.edge_action, t.edge_prior, g,
                                        self._clean_priors, fresh, self._noise_order, self._noise_clean)
        noisy = policy.noisy_priors(self._noise_clean[:count], self.np_rng)
        arrays.set_root_noise(t.edge_action, t.edge_prior, t.edge_child, t.prior, g, int(t.edge_first[g, 0]),
                              int(t.tried[g, 0]), count, np.asarray(noisy, np.float64), self._noise_order[:count],
                              self._noise_out)

    def search_root_threats(self) -> None:
        """Once a root (new or kept): the game's thorough threat search
        (``Game.forced_win(state, thorough=True)``, as ``MCTS.search_root_threats``); a win
        found proves the root (its statistics give way), which then plays its first move."""
        t, g = self.tree, self.g
        self.threats_searched = True
        state, game = self.root_state, self.game
        if game.forcing_actions(state) is None and (line := game.forced_win(state, thorough=True)):
            self.kernels.set_root(t, g, state)
            leaves, judged = np.zeros((t.trees, 1), np.int32), np.zeros((t.trees, 1), np.bool_)
            forced, forced_move = np.zeros((t.trees, 1), np.int8), np.zeros((t.trees, 1), np.int32)
            plies = np.zeros((t.trees, 1), np.int32)
            forced[g, 0], forced_move[g, 0], plies[g, 0] = arrays.WINS_NOW, line[0], len(line) + 2
            t.reserve(2, 2, 1)
            arrays.expand(*t.nodes()[:12], t.edge_action, t.edge_prior, t.edge_child, t.size, t.edges, leaves, judged,
                          forced, forced_move, plies, np.zeros((t.trees, 1, 1), np.bool_),
                          NO_PRIORS, self.policy, t.rng, np.empty(1, np.int64))
            self._clean_priors = None

    def expand_root(self) -> None:
        """A new root: its forcing moves asked (it may be proven), then expanded; PUCT
        judges it first for its priors (not a search game: nothing backed up)."""
        t, g = self.tree, self.g
        num_actions = self.game.num_actions
        leaves, judged = np.zeros((t.trees, 1), np.int32), np.zeros((t.trees, 1), np.bool_)
        judged[g, 0] = True
        forced, forced_move = np.zeros((t.trees, 1), np.int8), np.zeros((t.trees, 1), np.int32)
        plies = np.zeros((t.trees, 1), np.int32)
        masks = np.zeros((t.trees, 1, num_actions), np.bool_)
        self.kernels.moves(t, leaves, judged, masks, forced, forced_move, plies, self.threats)
        judged &= forced == arrays.SEARCH
        priors = NO_PRIORS
        if self.policy != UCT and judged[g, 0]:
            values, priors = judge_leaves([self], leaves, judged, masks)
            self._judged_root = float(values[g, 0])
        t.reserve(2, num_actions + 1, 1)
        arrays.expand(*t.nodes()[:12], t.edge_action, t.edge_prior, t.edge_child, t.size, t.edges, leaves, judged,
                      forced, forced_move, plies, masks, priors, self.policy, t.rng, np.empty(num_actions, np.int64))
        self._clean_priors = None

    # ---- tree reuse -------------------------------------------------------------------
    def _root_for(self, state: State) -> None:
        """The kept node for ``state`` (the root, or a child whose position it is), else a fresh root."""
        if self.root_state is not None:
            if self.root_state == state:
                return
            for i in self._children().tolist():
                if self.tree.slot[self.g, i] >= 0 and \
                        self.game.next_state(self.root_state, int(self.tree.action[self.g, i])) == state:
                    self._keep(i)
                    self.kernels.rooted(self.tree, self.g, state)
                    self.root_state, self.root_move, self.threats_searched = state, None, False
                    return
        self.kernels.set_root(self.tree, self.g, state)
        self.root_state, self.root_move, self._clean_priors, self.threats_searched = state, None, None, False
        self.plan_value = None

    def _keep(self, node: int) -> None:
        """Node ``node``'s subtree becomes the whole of this search's row, ``node`` its root."""
        t = self.tree
        arrays.keep_subtree(t.nodes(), t.edge_action, t.edge_prior, t.edge_child, t.board, t.aux, t.size, t.edges,
                            t.states, self.g, node)
        self._clean_priors = self.plan_value = None


def share_tree(searches: Sequence[ArrayMCTS]) -> None:
    """The searches of a lock-step group on one ``ArrayTree``, a row each (before they search)."""
    k = searches[0].kernels
    tree = ArrayTree(len(searches), k.state_len, k.aux_len)
    for g, search in enumerate(searches):
        search.tree, search.g = tree, g
        tree.rng[g] = search.xorshift
        search.reset()


def judge_leaves(searches: Sequence[ArrayMCTS], leaves: np.ndarray, judged: np.ndarray,
                 masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each judged leaf's value for its player to move, by (g, b); the priors over every
    action of the judged leaves, a row each in (g, b) order: the network's masked over the
    legal moves, none without a network), for the searches of one tree (their evaluators
    alike: one network, or none), in one network call; ``masks`` the round's moves as the
    game's ``moves`` kernel wrote them."""
    first = searches[0]
    tree, kernels = first.tree, first.kernels
    values = np.zeros(leaves.shape, np.float64)
    net = first.net
    priors = NO_PRIORS
    if not judged.any():
        return values, priors
    if net is not None:
        x = kernels.encode(tree, leaves, judged, net.net.input_kind)
        legal = kernels.legal_after_moves(tree, leaves, judged, masks)
        probs, v = net.net.evaluate(x)
        values[judged] = np.asarray(v, dtype=np.float64)
        priors = np.ascontiguousarray(masked_policy(probs, legal), dtype=np.float32)
        rows = judged.sum(axis=1)
        for search in searches:  # each counts its call and its states, as ``NetValue.evaluate_many``
            if rows[search.g]:
                search.net.calls += 1
                search.net.states_evaluated += int(rows[search.g])
    if first.rollouts is not None:
        played = kernels.playouts(tree, leaves, judged, tree.rng)
        if net is None:
            values = played
        else:
            weights = np.ones((tree.trees, 1), np.float64)
            for search in searches:
                weights[search.g] = search.weight
            values = weights * values + (1.0 - weights) * played
    return values, priors


def run_rounds(searches: Sequence[ArrayMCTS], limits: Sequence[float], time_limit: float | None = None) -> list[int]:
    """The searches of one tree (each prepared: ``ArrayMCTS.prepare``) in lock-step rounds
    until each has spent its ``limits`` of search games (or ``time_limit`` passed, or its
    root is proven): every phase of a round one call for all of them. The search games
    each ran."""
    started = time.perf_counter()
    first = searches[0]
    tree, kernels, num_actions = first.tree, first.kernels, first.game.num_actions
    trees = tree.trees
    done = [0] * len(searches)
    active = []
    for i, search in enumerate(searches):
        search._judged_root = None
        if search.forced_wins and not search.threats_searched and tree.proven[search.g, 0] == UNKNOWN:
            search.search_root_threats()
        if tree.edge_first[search.g, 0] < 0:  # a new root (or one a proof made without its move): expanded
            search.expand_root()
        if tree.proven[search.g, 0] == UNKNOWN:
            if search.root_noise and search.policy == PUCT:  # (Gumbel's noise is in its plan: ``begin``)
                search.add_root_noise()
            if search.policy == GUMBEL:
                search.begin(limits[i])
            active.append(i)
        elif search.on_progress is not None:
            search.on_progress(search.progress(0, time.perf_counter() - started))
    if not active:
        return done
    if tree.gumbel_plans is None:  # (a tree policy without plans reads none)
        tree.gumbel_plans = GumbelPlans(trees, 1)
    plans = tree.gumbel_plans.arrays()
    batch = max(searches[i].round_size(limits[i]) for i in active)
    roots = np.zeros(trees, np.int32)
    paths = np.zeros((trees, batch, kernels.max_depth + 2), np.int32)
    path_len, leaves = np.zeros((trees, batch), np.int32), np.zeros((trees, batch), np.int32)
    judged = np.zeros((trees, batch), np.bool_)
    forced, forced_move = np.zeros((trees, batch), np.int8), np.zeros((trees, batch), np.int32)
    plies = np.zeros((trees, batch), np.int32)
    masks = np.zeros((trees, batch, num_actions), np.bool_)
    order = np.empty(num_actions, np.int64)
    sizes = np.zeros(trees, np.int32)
    rounds = {i: searches[i].round_size(limits[i]) for i in active}
    deadline = started + time_limit if time_limit is not None else math.inf
    next_report = started + first.progress_interval
    report = [s for s in searches if s.on_progress is not None]
    while active:
        sizes[:] = 0
        for i in active:
            left = limits[i] - done[i]
            sizes[searches[i].g] = rounds[i] if left >= rounds[i] else int(left)
        count = int(sizes.max())
        # a leaf a node when selected, and its winning child when a forcing move proves it
        tree.reserve(2 * count + 1, count * num_actions + 1, count)
        t = tree
        arrays.select(t.parent, t.action, t.prior, t.visits, t.value, t.edge_first, t.edge_count, t.tried, t.player,
                      t.mover, t.proven, t.depth, t.own, t.edge_action, t.edge_prior, t.edge_child, t.size, roots,
                      sizes, first.policy, first.c, first.first_play, first.fpu_reduction, plans, paths, path_len,
                      leaves)
        kernels.positions(t, leaves, sizes)
        arrays.leaves_to_judge(t.proven, t.edge_first, t.player, leaves, sizes, judged)
        kernels.moves(t, leaves, judged, masks, forced, forced_move, plies, first.threats)
        judged &= forced == arrays.SEARCH  # (a leaf a forcing move proves is judged no more)
        values, priors = judge_leaves(searches, leaves, judged, masks)
        arrays.expand(*t.nodes()[:12], t.edge_action, t.edge_prior, t.edge_child, t.size, t.edges, leaves, judged,
                      forced, forced_move, plies, masks, priors, first.policy, t.rng, order)
        values_p1 = arrays.round_values(t.proven, t.mover, t.player, leaves, sizes, judged, values)
        arrays.backup(t.value, t.mover, paths, path_len, values_p1, sizes)
        if first.solver:
            arrays.prove(t.proven, t.depth, t.edge_first, t.edge_count, t.tried, t.edge_child, paths, path_len, sizes)
        out_of_time = False
        if time_limit is not None or report:
            now = time.perf_counter()
            out_of_time = now >= deadline
            if report and now >= next_report:
                for s in report:
                    s.on_progress(s.progress(done[searches.index(s)], now - started))
                next_report = now + first.progress_interval
        still = []
        for i in active:
            search = searches[i]
            done[i] += int(sizes[search.g])
            if not (done[i] >= limits[i] or tree.proven[search.g, 0] != UNKNOWN or search.stop_requested or out_of_time):
                still.append(i)
        active = still
    for i, search in enumerate(searches):
        search.stop_requested = False
        if search.on_progress is not None:
            search.on_progress(search.progress(done[i], time.perf_counter() - started))
    return done


def search_arrays_together(searches: Sequence[tuple[ArrayMCTS, State]], budgets: Sequence[int]) -> list[ArrayMCTS]:
    """``mcts.search_together`` for array searches that share a tree (``share_tree``): each
    searches its own state for its own budget, all in the same rounds."""
    for search, state in searches:
        search.prepare(state)
    done = run_rounds([s for s, _ in searches], [float(b) for b in budgets])
    for (search, _), count in zip(searches, done):
        search.last_search_games = count
    return [s for s, _ in searches]


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
    """The search a player or a self-play game uses: on arrays where it can run there
    (``array_problem``) and ``engine`` allows ("auto", "arrays"), else the object search
    (``mctsfw.search.object_search.MCTS``)."""
    from hexzero.mctsfw.search import MCTS

    if engine != "objects":
        problem = array_problem(game, tree_policy, evaluator, root_noise)
        if problem is None:
            return ArrayMCTS(game, tree_policy, evaluator, seed=seed, batch_size=batch_size, threats=threats,
                             solver=solver, root_noise=root_noise)
        if engine == "arrays":
            raise ValueError(f"the array search cannot run this search: {problem}")
    return MCTS(game, tree_policy, evaluator, seed=seed, batch_size=batch_size, root_noise=root_noise,
                threats=threats, solver=solver)
