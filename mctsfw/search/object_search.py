"""The search on the object tree (``MCTS``): one search loop, a tree policy and a leaf evaluator.

It knows no game (it talks to one through ``mctsfw.Game``), no network and no plugin:
how to walk the tree is a ``TreePolicy`` (UCT, PUCT, ...) and how to judge a leaf is a
``LeafEvaluator`` (random rollouts, network rollouts, a value head, a mix; see
``mctsfw.evaluators``), as OpenSpiel's ``MCTSBot`` with its ``Evaluator``.

``search`` runs this loop, iteratively (no recursion), until the budget is spent:

1. ``select``:   from the root, let the tree policy pick a child at every expanded node,
                 down to a leaf: a node search has just entered for the first time, or
                 a final state. A node keeps the legal actions that have no child yet
                 (``untried``); a child, and its state, is made only when the tree
                 policy picks its action (UCT picks a random untried action before any
                 child, PUCT the untried action of highest prior when that beats every
                 child). Every node on the way counts the visit at once.
2. ``evaluate``: the evaluator judges the leaves in one call: the win probability of the
                 player to move at each, and (if the tree policy reads them) priors over
                 its actions. A final leaf is judged by its winner.
3. ``expand``:   each judged leaf learns its legal actions (its ``untried`` list, ordered
                 by prior when there are priors), so the next descent can go on from it.
4. ``backpropagate``: every node on the path adds the result, seen from the player who
                 moved into it, so the result is right for two players whoever started.

A batch of ``batch_size`` leaves is selected before they are judged together (network
evaluators see one array a call): the visits counted in step 1 act as a *virtual loss*
that steers the later descents of a batch elsewhere. A batch of 1 is the classic loop.

The loop is written once, as a generator (``MCTS.steps``) that yields the leaf states it
needs judged and is sent the answers; it never calls the evaluator itself. ``search``
answers with the search's own evaluator; ``search_together`` runs several searches (the
games of a self-play group) in lock-step and answers every round's leaves of all of them
with one call (``evaluators.evaluate_together``), each search keeping its own tree,
seed, root noise and virtual loss.

Root noise (``root_noise=True``, for self-play only) mixes fresh noise from the tree
policy (PUCT: Dirichlet) into the root's clean priors at the start of every search.
The subtree under the actual move is kept for the next move (``advance``).

A search may also be addressed by history (``search_from``): a position is named by its
*ID*, the moves from the start of the game (and who made the first), as Alpha Omok
addresses its nodes. The root then knows its ID, ``advance`` extends it, and a node's ID
is the root's plus the actions on the way down, found when asked (``id_of``), never
stored in the nodes; ``state_of`` rebuilds a position from an ID (``Game.state_after``).

A person watching a search think (the terminal's indicator, the web board's heat map)
sets ``on_progress``: it is called with a ``SearchProgress`` (root visits, win
estimate, seconds) every ``progress_interval`` seconds of a search and once at its end.

Garbage collection is paused during a search: the tree holds no reference cycles (a
node knows its children, never its parent), so the collector has nothing to free
there, and with TensorFlow loaded each full collection walks TensorFlow's objects too.
"""

from __future__ import annotations

import gc
import math
import numbers
import operator
import random
import time
from contextlib import contextmanager
from typing import Callable, Generator, Iterator, Sequence

import numpy as np

from hexzero.mctsfw.evaluators import LeafEvaluator, RandomRollouts, evaluate_together
from hexzero.mctsfw.game import Action, Game, IllegalMoveError, State, opponent
from hexzero.mctsfw.records import shares
from hexzero.mctsfw.search.nodes import (NOTHING_PLAYED, TARGET_SCALE, Node, SearchProgress, best_child,
                                         proven_for_player1, target_counts)
from hexzero.mctsfw.search.policy import TreePolicy, search_problem


#: a search in progress (``MCTS.steps``): yields leaf states to judge, is sent (values, priors), returns the search games run
SearchSteps = Generator[list, tuple, int]


def budget_problem(search_games, time_limit) -> str | None:
    """None for a usable search budget, else the reason: ``search_games`` a whole number
    >= 0 or None, ``time_limit`` a finite number of seconds > 0 or None, at least one set."""
    if search_games is not None and (
        isinstance(search_games, bool) or not isinstance(search_games, numbers.Integral) or search_games < 0
    ):
        return f"search_games must be a whole number >= 0, not {search_games!r}"
    if time_limit is not None and (
        isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real)
        or not math.isfinite(time_limit) or time_limit <= 0
    ):
        return f"time_limit must be a finite number of seconds > 0 (or None), not {time_limit!r}"
    if not search_games and time_limit is None:
        return "give search_games > 0 or a time_limit"
    return None


@contextmanager
def paused_gc() -> Iterator[None]:
    """No garbage collection inside: the tree has no reference cycles to free, and each
    collection would walk every object of the process (TensorFlow's too)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class MCTS:
    """Monte Carlo Tree Search over any ``Game`` with a tree policy and a leaf evaluator."""

    def __init__(
        self,
        game: Game,
        tree_policy: TreePolicy,
        evaluator: LeafEvaluator | None = None,
        seed: int | None = None,
        batch_size: int | None = None,
        root_noise: bool = False,
        threats: bool = True,
        solver: bool = True,
    ):
        """``evaluator``: random rollouts (seeded by ``seed``) when None. ``batch_size``:
        leaves judged per evaluator call; by default the evaluator's for the search's
        budget (``LeafEvaluator.batch_for``). ``root_noise``: mix
        the tree policy's noise into the root's priors at every search (self-play only).
        ``threats``: ask the game for forcing moves at every new node
        (``Game.forcing_actions``): a move that wins at once proves the node, and where
        the opponent threatens to win only the moves that stop it are searched (and
        where it threatens a forced win, ``Game.threat_defences``, only the defences).
        ``solver``: back proofs up the tree (``prove``) and stop once the root is proven.
        A pair that cannot search together is refused here with the reason."""
        if evaluator is None:
            evaluator = RandomRollouts(game, seed=seed)
        problem = search_problem(tree_policy, evaluator, root_noise)
        if problem:
            raise ValueError(problem)
        batch_grows = batch_size is None  # the evaluator's batch_for each search's budget
        batch_size = evaluator.batch_size if batch_size is None else batch_size
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1:
            raise ValueError(f"batch_size must be a whole number >= 1, not {batch_size!r}")
        self.game = game
        self.tree_policy = tree_policy
        self.evaluator = evaluator
        if tree_policy.reads_playouts:
            evaluator.record_playouts = True
        self.batch_size = int(batch_size)
        self.batch_grows = batch_grows
        self.root_noise = bool(root_noise)
        # a game that declares no threats is not asked (``Game.forcing_actions`` says None)
        self.threats = bool(threats) and type(game).forcing_actions is not Game.forcing_actions
        self.forced_wins = self.threats and type(game).forced_win is not Game.forced_win
        self.defences = self.threats and type(game).threat_defences is not Game.threat_defences
        self.threats_searched: Node | None = None  # the root the game's thorough threat search has seen
        self.solver = bool(solver)
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.root: Node | None = None
        #: the root's ID (moves from the start) when known, and who made the first move
        self.root_id: tuple[Action, ...] | None = None
        self.starting_player = 1
        self.last_search_games = 0
        #: called with a ``SearchProgress`` every ``progress_interval`` seconds of a search and at its end
        self.on_progress: Callable[[SearchProgress], None] | None = None
        self.progress_interval = 0.1
        #: set (from another thread) to end the search under way after its present batch: the
        #: move is then the best so far (``MCTSActor.interrupt``); cleared when a search ends
        self.stop_requested = False
        self._clean_priors: tuple[Node, list[Action], list[float]] | None = None  # the noised root's own priors

    @property
    def draws_at_random(self) -> bool:
        """Whether a search draws random numbers (root noise, its tree policy's or its
        evaluator's): one that draws none plays the same move each time it meets a
        position with the same budget of search games."""
        return self.root_noise or self.tree_policy.draws_at_random or self.evaluator.draws_at_random

    # ---- the public API -------------------------------------------------------------
    def search(self, state: State, search_games: int | None = None, time_limit: float | None = None) -> Node:
        """Run search games from ``state`` until either budget is spent; return the root.

        ``search_games`` counts search games of this call (a kept subtree adds its old
        visits on top); ``time_limit`` is in seconds. At least one must be given.
        """
        problem = budget_problem(search_games, time_limit)
        if problem:
            raise ValueError(problem)
        return self._search(self._root_for(state), search_games, time_limit)

    def search_from(self, moves: Sequence[Action], starting_player: int = 1, search_games: int | None = None,
                    time_limit: float | None = None) -> Node:
        """``search`` from the position with this ID: ``moves`` played from the start,
        ``starting_player`` making the first. The kept tree is reused when the ID extends
        the root's; an illegal move in the ID raises IllegalMoveError."""
        problem = budget_problem(search_games, time_limit)
        if problem:
            raise ValueError(problem)
        return self._search(self._root_for_id(moves, starting_player), search_games, time_limit)

    def _search(self, root: Node, search_games: int | None, time_limit: float | None) -> Node:
        """Both searches, once the root is found (by state or by ID). A root proven
        already (by an earlier search, whose subtree was kept) is not searched again."""
        if root.final:
            raise ValueError("the game is over: nothing to search")
        with paused_gc():
            self.last_search_games = self.run(root, search_games or math.inf, time_limit)
        return root

    def run(self, root: Node, limit: float, time_limit: float | None) -> int:
        """The search loop (``steps``) with this search's own evaluator; the search games run."""
        return answer_requests(self.steps(root, limit, time_limit), self.evaluator, self.tree_policy.uses_priors)

    def steps(self, root: Node, limit: float, time_limit: float | None) -> SearchSteps:
        """The search loop as a generator: prepare the root, then select a batch of leaves,
        have them judged, expand, backpropagate, until ``limit`` search games or the time
        are spent; it returns the number of search games run.

        The loop does not call the evaluator itself: it yields the states it needs judged
        and is sent back the evaluator's answer ``(values, priors)``. So one loop serves a
        single search (``run``, which answers with this search's evaluator) and several
        searches in lock-step (``search_together``, which answers all their requests with
        one network call)."""
        started = time.perf_counter()
        report = self.on_progress
        policy = self.tree_policy
        root_value = None
        if self.forced_wins and root.proven is None and root is not self.threats_searched:
            self.search_root_threats(root)
        if root.untried is None and root.proven is None:  # a new root: expanded (with priors if the tree policy reads them)
            forced = self.forced_actions([root]) if self.threats else {}
            if root.proven is None:  # no move wins at once
                priors = None
                if policy.uses_priors:
                    judged, priors, *_ = yield [root.state]
                    root_value = float(judged[0])
                self.expand([root], priors, forced)
        if root.proven is not None:  # nothing left to learn: the result is exact
            if report is not None:
                report(SearchProgress.of(root, 0, time.perf_counter() - started))
            return 0
        if self.root_noise:
            self.add_root_noise(root)
        policy.begin(root, limit, root_value, self.root_noise, self.np_rng)
        deadline = started + time_limit if time_limit is not None else math.inf
        next_report = started + self.progress_interval
        reads_playouts, solver, select = self.tree_policy.reads_playouts, self.solver, self.select
        done = 0
        batch = self.evaluator.batch_for(limit) if self.batch_grows else self.batch_size
        while done < limit:
            paths = [select(root) for _ in range(batch if limit - done >= batch else int(limit - done))]
            leaves, values = self.leaves_to_judge(paths)
            proven = len(leaves) < len(values)  # a proven leaf (a final one too) was reached
            forced = None
            if self.threats and leaves:
                forced = self.forced_actions(leaves)
                if any(leaf.proven is not None for leaf in leaves):  # a move wins there at once
                    self.judge_proven(leaves, values)
                    leaves = [leaf for leaf in leaves if leaf.proven is None]
                    proven = True
            priors = played = None
            if leaves:
                answer = yield [leaf.state for leaf in leaves]
                priors = answer[1]
                self.judge(leaves, answer[0], values)
                if len(answer) > 2:  # the moves of each playout, for a tree policy that reads them
                    played = dict(zip(map(id, leaves), answer[2]))
            self.expand(leaves, priors, forced)
            self.backpropagate(paths, values)
            if reads_playouts:
                observe, played = self.tree_policy.observe, played or {}
                for path in paths:
                    observe(path, values[id(path[-1])], played.get(id(path[-1]), NOTHING_PLAYED))
            if solver and proven:
                self.prove(paths)
            done += len(paths)
            if root.proven is not None or self.stop_requested:
                break
            if time_limit is not None or report is not None:
                now = time.perf_counter()
                if now >= deadline:
                    break
                if report is not None and now >= next_report:
                    report(SearchProgress.of(root, done, now - started, policy.root_choice(root)))
                    next_report = now + self.progress_interval
        self.stop_requested = False
        if report is not None:
            report(SearchProgress.of(root, done, time.perf_counter() - started, policy.root_choice(root)))
        return done

    def targets(self, root: Node | None = None) -> np.ndarray:
        """The root's training target over all actions as whole-number weights: its
        ``target_counts``, or the tree policy's own target (``TreePolicy.root_target``,
        Gumbel's improved policy) in ``TARGET_SCALE`` parts. The replay records keep these."""
        root = root or self.root
        own = self.tree_policy.root_target(root, self.game.num_actions)
        if own is None:
            return target_counts(root, self.game.num_actions)
        return np.rint(np.asarray(own, dtype=np.float64) * TARGET_SCALE).astype(np.int64)

    def visit_distribution(self, root: Node | None = None) -> np.ndarray:
        """The root's ``targets`` as a probability vector over all actions (``records.shares``):
        what players sample from and self-play learns."""
        return shares(self.targets(root))

    def progress(self, simulations: int, seconds: float) -> SearchProgress:
        """The root as a person watching the search reads it (the array search says the same)."""
        return SearchProgress.of(self.root, simulations, seconds, self.tree_policy.root_choice(self.root))

    def root_result(self) -> float | None:
        """The root's proven result for its player to move (1, 0.5, 0), None while unknown."""
        return self.root.result

    def root_value(self) -> float:
        """The root's mean result for its player to move: one less its mover's ``q``."""
        return 1.0 - self.root.q

    def child_value(self, action: Action) -> float:
        """The mean result of the root's child ``action`` for its mover (0 if never tried)."""
        child = self.root.child(action)
        return child.q if child is not None else 0.0

    def kept_value(self, action: Action) -> float | None:
        """The mean result for its mover of the move ``action`` the search played last (its
        subtree kept as the root), or None when it was not searched (a GTP engine resigns by it)."""
        node = self.root
        if node is None or node.action != action or not node.visits:
            return None
        return node.value / node.visits

    def best_action(self, root: Node | None = None) -> Action:
        """The move to play: the tree policy's own choice where it has one (Gumbel's), else
        ``best_child``: a proven win, else the most visited move not proven lost; a move
        never tried before one proven lost."""
        root = root or self.root
        if not root.children:
            return root.untried[-1]
        chosen = self.tree_policy.root_choice(root)
        if chosen is not None:
            return chosen.action
        best = best_child(root)
        if best.proven == 0.0 and root.untried:
            return root.untried[-1]
        return best.action

    def advance(self, action: Action, state: State | None = None) -> None:
        """Keep the subtree under ``action`` as the new root (statistics and all); a root
        that knows its ID extends it by ``action``. An action never entered by the search
        starts a fresh root (IllegalMoveError if it is not legal); ``state``: the position
        after it, where the caller has it already."""
        root = self.root
        if root is None:
            return
        child = root.child(action)
        if child is None:
            child = Node(self.game, self.game.next_state(root.state, action) if state is None else state, action,
                         root.player)
        self._set_root(child, child.action)

    def reset(self) -> None:
        self.root = None
        self.root_id = None

    # ---- the four phases ------------------------------------------------------------
    def select(self, root: Node) -> list[Node]:
        """The path from the root to a leaf, the tree policy choosing at every expanded
        node; each node on it counts the visit now (the virtual loss of a batch). A
        proven node is a leaf: its result is known (``untried`` is None there)."""
        select_child, rng = self.tree_policy.select_child, self.rng
        node = root
        path = [node]
        while node.untried is not None:
            child = select_child(node, rng)
            if type(child) is not Node:
                if node.untried:
                    child = self.add_child(node, child)
                else:  # every move tried and proven lost: the one that loses last
                    child = best_child(node)
            node.visits += 1
            node = child
            path.append(node)
        node.visits += 1
        return path

    def add_child(self, node: Node, i: int) -> Node:
        """A child for ``node.untried[i]`` (``NEW``: the last); its state is computed now."""
        untried, priors = node.untried, node.priors
        last = len(untried) - 1
        if i < 0:
            i += len(untried)
        if i != last:  # swap to the end and pop: no shifting of the list
            untried[i], untried[last] = untried[last], untried[i]
            if priors is not None:
                priors[i], priors[last] = priors[last], priors[i]
        action = untried.pop()
        prior = priors.pop() if priors is not None else 1.0 / (len(node.children) + last + 1)
        child = Node(self.game, self.game.next_state(node.state, action), action, node.player, prior)
        node.children.append(child)
        return child

    @staticmethod
    def leaves_to_judge(paths: list[list[Node]]) -> tuple[list[Node], dict[int, float]]:
        """The paths' leaves the evaluator must judge (a leaf reached twice in one batch
        once, a proven leaf (a final one too) never), and the results known already: each
        proven leaf's for player 1, by ``id``."""
        value_p1: dict[int, float] = {}
        leaves = []
        for path in paths:
            leaf = path[-1]
            if leaf.proven is not None:
                value_p1[id(leaf)] = proven_for_player1(leaf)
            elif id(leaf) not in value_p1:
                value_p1[id(leaf)] = -1.0  # judged by ``judge``
                leaves.append(leaf)
        return leaves, value_p1

    @staticmethod
    def judge(leaves: Sequence[Node], values: Sequence[float], value_p1: dict[int, float]) -> None:
        """The evaluator's ``values`` (for the player to move at each leaf) as results for player 1."""
        for leaf, value in zip(leaves, values):
            value_p1[id(leaf)] = value if leaf.player == 1 else 1.0 - value

    @staticmethod
    def judge_proven(leaves: Sequence[Node], value_p1: dict[int, float]) -> None:
        """The exact results of the leaves that ``forced_actions`` proved (a move wins at once)."""
        for leaf in leaves:
            if leaf.proven is not None:
                value_p1[id(leaf)] = proven_for_player1(leaf)

    def forced_actions(self, nodes: Sequence[Node]) -> dict[int, list[Action]]:
        """``forced_for`` of each of ``nodes`` that has forced moves, by ``id``."""
        forced = {}
        for node in nodes:
            actions = self.forced_for(node)
            if actions:
                forced[id(node)] = actions
        return forced

    def forced_for(self, node: Node) -> list[Action] | None:
        """The game's forcing moves at a new node (``Game.forcing_actions``): where the
        opponent threatens to win, the moves that stop it and do not leave them another
        win at once; these alone are searched there. A node is proven here when a move
        wins at once (the winning child made: a proven root plays it), or when every
        stopping move leaves the opponent a win at once (a double threat: lost in 2).
        Where nobody can win at once: proven won by the game's threat search
        (``Game.forced_win``), else where the opponent threatens a forced win only its
        defences are searched (``Game.threat_defences``). None: no forced moves (or the
        node proven). Asked when a leaf is first met, before it is judged."""
        game = self.game
        forcing = game.forcing_actions(node.state)
        if forcing is None:
            # (a root the thorough search has seen holds no win its fours could find)
            line = game.forced_win(node.state) if self.forced_wins and node is not self.threats_searched else None
            if line:  # the game's threat search proves it: won in len(line) + 2 plies
                self._prove_by(node, line[0], won=True, plies=len(line) + 2)
                return None
            defences = game.threat_defences(node.state) if self.defences else None
            return list(defences) if defences else None
        if forcing.wins:
            self._prove_by(node, forcing.actions[0], won=True)
            return None
        alive = []
        for action in forcing.actions:
            after = game.next_state(node.state, action)
            answer = None if game.is_final(after) else game.forcing_actions(after)
            if answer is None or not answer.wins:
                alive.append(action)
        if alive:
            return alive
        self._prove_by(node, forcing.actions[0], won=False)  # whatever stops one threat, the opponent wins with another
        return None

    def search_root_threats(self, root: Node) -> None:
        """Once a root (new or kept): the game's thorough threat search
        (``Game.forced_win(state, thorough=True)``, deeper than at every new node: Gomoku's
        victories by threes); a win found proves the root, which then plays its first move."""
        self.threats_searched = root
        game = self.game
        if game.forcing_actions(root.state) is None and (line := game.forced_win(root.state, thorough=True)):
            root.children = []  # a kept root's statistics give way to the proof
            self._prove_by(root, line[0], won=True, plies=len(line) + 2)

    def _prove_by(self, node: Node, action: Action, won: bool, plies: int = 1) -> None:
        """``node`` proven by the child after ``action`` (made here): its player to move
        wins with it (``won``) in ``plies`` (1: at once; more: by the game's threat search,
        ``Game.forced_win``), or after it the opponent wins at once (lost in 2). The node
        is a leaf for good."""
        game = self.game
        child = Node(game, game.next_state(node.state, action), action, node.player)
        if not won:
            self._prove_by(child, game.forcing_actions(child.state).actions[0], won=True)
        node.children.append(child)
        child.visits, child.value = 1, float(won)
        node.proven, node.depth = (0.0, plies) if won else (1.0, 2)
        node.untried = node.priors = None

    def expand(self, leaves: Sequence[Node], priors: np.ndarray | None,
               forced: dict[int, list[Action]] | None = None) -> None:
        """Each leaf learns the moves a search considers (the forced ones where ``forced``
        has them, else ``Game.search_array``), ordered by the evaluator's priors (over
        every action) into lists, the highest last (ties: the later move last); without
        priors in the game's order."""
        forced = forced or {}
        search_array = self.game.search_array
        if priors is None:
            for leaf in leaves:
                actions = forced.get(id(leaf))
                leaf.untried = list(actions) if actions is not None else search_array(leaf.state).tolist()
            return
        priors = np.asarray(priors, dtype=np.float64)  # one conversion for the batch
        for leaf, leaf_priors in zip(leaves, priors):
            actions = forced.get(id(leaf))
            actions = search_array(leaf.state) if actions is None else np.fromiter(actions, np.intp, len(actions))
            chosen = leaf_priors.take(actions)
            order = chosen.argsort(kind="stable")
            leaf.untried = actions.take(order).tolist()
            leaf.priors = chosen.take(order).tolist()

    @staticmethod
    def prove(paths: list[list[Node]]) -> None:
        """Proofs back up each path that ends in a proven leaf (MCTS-Solver, Winands,
        Bjornsson and Saito 2008): a node with a move that is a proven win for its player
        to move is proven (lost for the player who moved into it); a node whose moves are
        all tried and all proven is proven with the best of them. A node proven stays
        proven, and its ancestors learn of it here; the first node not proven stops it."""
        for path in paths:
            if path[-1].proven is None:
                continue
            for i in range(len(path) - 2, -1, -1):
                node, child = path[i], path[i + 1]
                if node.proven is not None:
                    break
                if child.proven == 1.0:  # the player to move here wins with this move
                    node.proven, node.depth = 0.0, child.depth + 1
                elif node.untried is not None and not node.untried and all(
                        ch.proven is not None for ch in node.children):
                    best = max(ch.proven for ch in node.children)
                    ends = [ch.depth for ch in node.children if ch.proven == best]
                    node.proven, node.depth = 1.0 - best, 1 + (max(ends) if best == 0.0 else min(ends))
                else:
                    break
                if i:  # a leaf from now on: its result is exact (the root stops the search instead)
                    node.untried = node.priors = None

    @staticmethod
    def backpropagate(paths: list[list[Node]], value_p1: dict[int, float]) -> None:
        """Add each path's result to every node on it, for the player who moved into the
        node (the visits were counted by ``select``)."""
        for path in paths:
            v = value_p1[id(path[-1])]
            w = 1.0 - v
            for node in path:
                node.value += v if node.mover == 1 else w

    # ---- root noise -------------------------------------------------------------------
    def add_root_noise(self, root: Node) -> None:
        """Fresh noise mixed into the root's clean priors (kept aside, so a root searched
        twice is noised twice, each time from its own priors)."""
        children, untried = root.children, root.untried
        actions = [ch.action for ch in children] + untried
        if self._clean_priors is not None and self._clean_priors[0] is root:  # noised before: its own priors
            clean = dict(zip(*self._clean_priors[1:]))
            priors = [clean[a] for a in actions]
        else:
            priors = [ch.prior for ch in children] + (
                root.priors if root.priors is not None else [1.0 / len(actions)] * len(untried))
            self._clean_priors = (root, actions, priors)
        noisy = self.tree_policy.noisy_priors(np.array(priors), self.np_rng)
        for ch, p in zip(children, noisy.tolist()):
            ch.prior = p
        if untried:
            rest = noisy[len(children):]
            order = rest.argsort(kind="stable")
            root.untried = np.fromiter(untried, np.intp, len(untried)).take(order).tolist()
            root.priors = rest.take(order).tolist()

    # ---- tree reuse -------------------------------------------------------------------
    def _root_for(self, state: State) -> Node:
        """The kept node for ``state`` if the tree has it (root, child or grandchild);
        else a fresh root, whose ID is unknown."""
        root = self.root
        if root is not None:
            if root.state == state:
                return root
            for child in root.children:
                if child.state == state:
                    return self._set_root(child, child.action)
                for grandchild in child.children:
                    if grandchild.state == state:
                        return self._set_root(grandchild, child.action, grandchild.action)
        self.root_id = None
        return self._fresh_root(state)

    def _fresh_root(self, state: State) -> Node:
        player = self.game.current_player(state) if not self.game.is_final(state) else 1
        self.root = Node(self.game, state, None, opponent(player))
        return self.root

    def _set_root(self, node: Node, *actions: Action) -> Node:
        """``node``, reached from the root by ``actions``, becomes the root (and its ID the
        root's ID extended by them)."""
        self.root = node
        if self.root_id is not None:
            self.root_id += actions
        return node

    # ---- search addressed by history (IDs) -----------------------------------------------
    # An ID is a tuple of actions from the start of the game; the search's starting player
    # made the first. Nodes keep only their own action: a node's ID is the root's ID plus
    # the actions from the root down to it, found when asked.
    def _root_for_id(self, moves: Sequence[Action], starting_player: int) -> Node:
        """The node with this ID: followed down the kept tree when the ID extends the root's
        (no position rebuilt, no state compared); else the position rebuilt from the ID,
        looked for by state as ``search`` does (the root's ID may be unknown, or the ID
        reach a kept position by other moves)."""
        moves = as_id(moves)
        known = self.root_id
        if known is not None and starting_player == self.starting_player and moves[:len(known)] == known:
            node = self.root
            for action in moves[len(known):]:
                node = node.child(action)
                if node is None:
                    break
            else:
                self.root, self.root_id = node, moves
                return node
        node = self._root_for(self.game.state_after(moves, starting_player))
        self.root_id, self.starting_player = moves, starting_player
        return node

    def actions_to(self, node: Node | Sequence[Node]) -> tuple[Action, ...]:
        """The actions from the root to ``node``: read off a path from the root (as ``select``
        returns), or found by walking the tree (every node it holds, at worst)."""
        if not isinstance(node, Node):
            path = list(node)
            if not path or path[0] is not self.root:
                raise ValueError("a path starts at the search's root")
            return tuple(n.action for n in path[1:])
        if self.root is None:
            raise ValueError("the node is not in the search tree: there is none")
        actions: list[Action] = []
        stack = [(self.root, 0)]  # depth-first, iterative: no recursion limit on deep trees
        while stack:
            current, depth = stack.pop()
            del actions[max(depth - 1, 0):]
            if depth:
                actions.append(current.action)
            if current is node:
                return tuple(actions)
            stack.extend((child, depth + 1) for child in current.children)
        raise ValueError(f"{node!r} is not in the search tree under the root")

    def id_of(self, node: Node | Sequence[Node]) -> tuple[Action, ...]:
        """The ID of a node (or of a path's last node): the root's ID and the actions down
        to it. ValueError when the root's ID is unknown (a search started from a state that
        the kept tree did not hold: ``search_from`` names the root by its ID)."""
        if self.root_id is None:
            raise ValueError("the root's ID is unknown: the search started from a state; use search_from(moves)")
        return self.root_id + self.actions_to(node)

    def state_of(self, node_or_id: Node | Sequence[Node] | Sequence[Action],
                 starting_player: int | None = None) -> State:
        """The position rebuilt from an ID (``Game.state_after``): a node's or a path's (see
        ``id_of``), or a sequence of actions. ``starting_player`` defaults to that of the
        search's ID (1 before any search from an ID)."""
        if isinstance(node_or_id, Node) or (len(node_or_id) and isinstance(node_or_id[0], Node)):
            node_or_id = self.id_of(node_or_id)
        if starting_player is None:
            starting_player = self.starting_player
        return self.game.state_after(as_id(node_or_id), starting_player)


def answer_requests(steps: SearchSteps, evaluator: LeafEvaluator, with_priors: bool) -> int:
    """Run one search's ``steps`` to the end, each request answered by ``evaluator``; the search games run."""
    try:
        states = next(steps)
        while True:
            states = steps.send(evaluator.evaluate(states, with_priors))
    except StopIteration as stop:
        return stop.value


def search_together(searches: Sequence[tuple[MCTS, State]], search_games: int | Sequence[int]) -> list[Node]:
    """Several searches in lock-step (the games of a self-play group): each MCTS searches
    its own state with its own tree, seed and root noise for ``search_games`` search
    games (one number for all, or one each: playout cap randomization), as ``MCTS.search``
    would, but in rounds: every search still running selects
    its batch of leaves, the leaves of all of them are judged together
    (``evaluators.evaluate_together``: one network call when their evaluators share a
    network), and each gets its own answers back. The roots, in order.

    A search whose root was new asks one extra round (the root's priors); searches that
    finish drop out of the later rounds."""
    budgets = [search_games] * len(searches) if isinstance(search_games, numbers.Integral) else list(search_games)
    if len(budgets) != len(searches):
        raise ValueError(f"{len(budgets)} search budgets for {len(searches)} searches")
    for budget in budgets:
        problem = budget_problem(budget, None)
        if problem:
            raise ValueError(problem)
    if not searches:
        return []
    from hexzero.mctsfw.search.array_search import ArrayMCTS, search_arrays_together

    if all(isinstance(search, ArrayMCTS) for search, _ in searches):  # one tree for the group (``share_tree``)
        if len({id(search.tree) for search, _ in searches}) != 1:
            raise ValueError("array searches in lock-step share one tree (mctsfw.search.array_search.share_tree)")
        return search_arrays_together(searches, budgets)
    with_priors = {mcts.tree_policy.uses_priors for mcts, _ in searches}
    if len(with_priors) > 1:
        raise ValueError("searches in lock-step must all read priors or all not: one answer serves them")
    with_priors = with_priors.pop()
    roots, running = [], []
    with paused_gc():
        for (mcts, state), budget in zip(searches, budgets):
            root = mcts._root_for(state)
            if root.final:
                raise ValueError("the game is over: nothing to search")
            roots.append(root)
            steps = mcts.steps(root, budget, None)
            try:
                running.append((mcts, steps, next(steps)))
            except StopIteration as stop:  # nothing to judge at all (every leaf final)
                mcts.last_search_games = stop.value
        while running:
            answers = evaluate_together([mcts.evaluator for mcts, _, _ in running],
                                        [states for _, _, states in running], with_priors)
            still = []
            for (mcts, steps, _), answer in zip(running, answers):
                try:
                    still.append((mcts, steps, steps.send(answer)))
                except StopIteration as stop:
                    mcts.last_search_games = stop.value
            running = still
    return roots


def as_id(moves: Sequence[Action]) -> tuple[Action, ...]:
    """``moves`` as an ID: a tuple of ints (IllegalMoveError for anything but whole numbers)."""
    try:
        return tuple(operator.index(action) for action in moves)
    except TypeError:
        raise IllegalMoveError(f"an ID is a sequence of action numbers, not {moves!r}") from None
