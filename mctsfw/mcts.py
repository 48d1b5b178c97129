"""The generic MCTS engine. It knows no game: it talks to one through ``mctsfw.Game``.

One search game is four named phases, run iteratively (no recursion):

1. ``select``:   from the root, let the tree policy pick children down to a node that
                 still has untried actions (or is final);
2. ``expand``:   add one child for an untried action;
3. ``evaluate``: play the new node's state to the end with the default policy
                 (``Game.playout``) and take the winner;
4. ``backpropagate``: add the result to every node on the path, each from the point
                 of view of the player who moved into that node, so the result is right
                 for two players whoever started.

The subtree under the actual move is kept for the next move (``advance``).

With a leaf *evaluator* (AlphaZero style, e.g. a policy-and-value network behind PUCT)
the phases change: a leaf is expanded whole, every child getting the evaluator's prior,
and its value comes from the evaluator instead of a playout (or a mix of both,
``value_weight``). Leaves are evaluated in batches under virtual loss.

With a network default policy (one with ``choose_batch``), search games run in batches:
``batch_size`` leaves are selected one after another, each path taking a *virtual loss*
(its visits counted before its result is known, which steers the next descents
elsewhere), then all their playouts run in lock-step through ``Game.playout_batch`` so
the network sees a batch of positions a call instead of one.
"""

from __future__ import annotations

import math
import random
import time
from typing import Callable, Protocol, Sequence

import numpy as np

from mctsfw.game import Action, Game, State, opponent
from mctsfw.schema import Parameters


class Node:
    """A state in the search tree with the statistics of the move that led to it."""

    __slots__ = (
        "state", "action", "mover", "player", "children", "untried", "visits", "value", "prior", "winner", "final",
        "noised",
    )

    def __init__(self, game: Game | None, state: State | None, action: Action | None, mover: int):
        self.action = action  # the move that led here (None at a fresh root)
        self.mover = mover  # the player who made that move: ``value`` is from their side
        self.visits = 0
        self.value = 0.0  # sum of results for ``mover``: 1 win, 0.5 draw, 0 loss
        self.prior = 1.0  # the evaluator's probability of the move that led here
        self.noised = False  # root noise added (once per search)
        self.children: list[Node] = []
        self.state = None
        if state is not None:
            self.realize(game, state)

    def realize(self, game: Game, state: State) -> None:
        """Give a node made without its state (a child known only by its move and prior,
        as whole-leaf expansion makes them) its state, once search first enters it."""
        self.state = state
        self.final = game.is_final(state)
        if self.final:
            self.player = 0
            self.winner = game.winner(state)
            self.untried: list[Action] = []
        else:
            self.player = game.current_player(state)
            self.winner = None
            self.untried = list(game.legal_actions(state))

    @property
    def q(self) -> float:
        """Mean result for the player who moved into this node."""
        return self.value / self.visits if self.visits else 0.0

    def child(self, action: Action) -> "Node | None":
        for ch in self.children:
            if ch.action == action:
                return ch
        return None

    def __repr__(self) -> str:
        return f"Node(action={self.action}, visits={self.visits}, q={self.q:.3f})"


class TreePolicy:
    """Chooses which child to descend into at a fully expanded node. Subclass per policy."""

    name = ""
    description = ""

    #: the constructor's parameters (the ``[tree_policies.<name>]`` table), each declared once
    parameters: Parameters = Parameters()

    @classmethod
    def param_problems(cls, params: dict) -> list[str]:
        """Unknown names and values the declared ``parameters`` refuse, as 'key: reason' lines."""
        return cls.parameters.problems(cls.name, params)

    def select_child(self, node: Node) -> Node:
        raise NotImplementedError

    def prepare_root(self, root: Node, rng: np.random.Generator) -> None:
        """Called once per search on an expanded root (PUCT adds Dirichlet noise here)."""


class Evaluator(Protocol):
    """Judges leaves for evaluator-driven search (a policy-and-value network, say)."""

    def evaluate(self, states: Sequence[State]) -> tuple[np.ndarray, np.ndarray]:
        """(priors (B, num_actions) over legal actions, values (B,) in [0, 1]: the win
        probability of the player to move in each state)."""
        ...


#: a default policy: state -> action (None stands for uniformly random moves); it may
#: also offer ``choose_batch(x, legal_mask) -> actions`` for batched playouts
DefaultPolicy = Callable[[State], Action]

#: search games per batch when the default policy can choose moves in batches
DEFAULT_BATCH = 32


class MCTS:
    """Monte Carlo Tree Search over any ``Game`` with a pluggable tree and default policy."""

    def __init__(
        self,
        game: Game,
        tree_policy: TreePolicy,
        default_policy: DefaultPolicy | None = None,
        seed: int | None = None,
        batch_size: int | None = None,
        evaluator: Evaluator | None = None,
        value_weight: float | None = None,
    ):
        """``evaluator`` switches to evaluator-driven search; ``value_weight`` (lambda, by
        default the tree policy's) mixes its value with a playout's result:
        lambda * value + (1 - lambda) * playout."""
        self.game = game
        self.tree_policy = tree_policy
        self.default_policy = default_policy
        self.evaluator = evaluator
        self.value_weight = float(getattr(tree_policy, "value_weight", 1.0) if value_weight is None else value_weight)
        if batch_size is None:
            batch_size = DEFAULT_BATCH if evaluator is not None or hasattr(default_policy, "choose_batch") else 1
        self.batch_size = max(1, int(batch_size))
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.root: Node | None = None
        self.last_search_games = 0

    # ---- the public API -------------------------------------------------------------
    def search(self, state: State, search_games: int | None = None, time_limit: float | None = None) -> Node:
        """Run search games from ``state`` until either budget is spent; return the root.

        ``search_games`` counts search games of this call (a kept subtree adds its old
        visits on top); ``time_limit`` is in seconds. At least one must be given.
        """
        if not search_games and not time_limit:
            raise ValueError("give search_games > 0 or time_limit > 0")
        root = self._root_for(state)
        if root.final:
            raise ValueError("the game is over: nothing to search")
        if self.evaluator is not None:
            if not root.children:
                self.evaluate_leaves([[root]])
            if not root.noised:
                self.tree_policy.prepare_root(root, self.np_rng)
                root.noised = True
        deadline = time.perf_counter() + time_limit if time_limit else math.inf
        limit = search_games or math.inf
        done = 0
        while done < limit:
            if self.batch_size > 1 or self.evaluator is not None:
                count = int(min(self.batch_size, limit - done))
                self.search_batch(root, count)
                done += count
            else:
                self.search_game(root)
                done += 1
            if time_limit and time.perf_counter() >= deadline:
                break
        self.last_search_games = done
        return root

    def search_game(self, root: Node) -> None:
        path = self.select(root)
        leaf = path[-1]
        if leaf.untried:
            leaf = self.expand(leaf)
            path.append(leaf)
        winner = leaf.winner if leaf.final else self.evaluate(leaf)
        self.backpropagate(path, winner)

    def search_batch(self, root: Node, count: int) -> None:
        """``count`` search games whose leaves are judged together (virtual loss in between)."""
        paths = []
        for _ in range(count):
            path = self.select(root)
            leaf = path[-1]
            if leaf.untried and self.evaluator is None:
                path.append(self.expand(leaf))
            for node in path:
                node.visits += 1  # the virtual loss: a visit that has no result yet
            paths.append(path)
        if self.evaluator is not None:
            self.evaluate_leaves(paths, counted=True)
            return
        open_paths = [path for path in paths if not path[-1].final]
        winners = self.game.playout_batch([path[-1].state for path in open_paths], self.rng, self.default_policy)
        results = dict(zip(map(id, open_paths), winners))
        for path in paths:
            leaf = path[-1]
            winner = leaf.winner if leaf.final else results[id(path)]
            self.backpropagate(path, winner, visits=0)

    def evaluate_leaves(self, paths: list[list[Node]], counted: bool = False) -> None:
        """Evaluator mode: expand the paths' leaves whole with the evaluator's priors and
        back up its values (mixed with playouts when ``value_weight`` < 1). ``counted``:
        the paths' visits were already added (virtual loss)."""
        leaves: dict[int, Node] = {}
        for path in paths:
            leaf = path[-1]
            if not leaf.final and not leaf.children:
                leaves[id(leaf)] = leaf
        open_leaves = list(leaves.values())
        value_of: dict[int, float] = {}  # win probability of the player to move at the leaf
        if open_leaves:
            states = [leaf.state for leaf in open_leaves]
            priors, values = self.evaluator.evaluate(states)
            values = np.asarray(values, dtype=np.float64)
            if self.value_weight < 1.0:
                winners = self.game.playout_batch(states, self.rng, self.default_policy)
                played = np.array([0.5 if w is None else float(w == leaf.player) for w, leaf in zip(winners, open_leaves)])
                values = self.value_weight * values + (1.0 - self.value_weight) * played
            for leaf, prior, value in zip(open_leaves, priors, values):
                self.expand_all(leaf, prior)
                value_of[id(leaf)] = float(value)
        for path in paths:
            leaf = path[-1]
            if leaf.final:
                value_p1 = 0.5 if leaf.winner is None else float(leaf.winner == 1)
            else:
                value = value_of[id(leaf)]  # a leaf reached twice in one batch shares its value
                value_p1 = value if leaf.player == 1 else 1.0 - value
            self.backpropagate(path, value_p1=value_p1, visits=0 if counted else 1)

    def expand_all(self, node: Node, priors: np.ndarray) -> None:
        """Give ``node`` every child at once, each with its prior probability. A child's
        state is computed only when search first enters it (most are never entered)."""
        for action in node.untried:
            child = Node(None, None, action, node.player)
            child.prior = float(priors[action])
            node.children.append(child)
        node.untried = []

    def visit_distribution(self, root: Node | None = None) -> np.ndarray:
        """Visit counts of the root's children as a probability vector over all actions."""
        root = root or self.root
        counts = np.zeros(self.game.num_actions, dtype=np.float32)
        for ch in root.children:
            counts[ch.action] = ch.visits
        total = counts.sum()
        return counts / total if total else counts

    def best_action(self, root: Node | None = None) -> Action:
        """The most visited action at the root (ties broken by mean value)."""
        root = root or self.root
        return max(root.children, key=lambda ch: (ch.visits, ch.q)).action

    def advance(self, action: Action) -> None:
        """Keep the subtree under ``action`` as the new root (statistics and all)."""
        if self.root is None:
            return
        child = self.root.child(action)
        if child is not None and child.state is None:
            child.realize(self.game, self.game.next_state(self.root.state, action))
        self.root = child  # None when that move was never expanded: the next search starts anew

    def reset(self) -> None:
        self.root = None

    # ---- the four phases ------------------------------------------------------------
    def select(self, root: Node) -> list[Node]:
        node = root
        path = [node]
        select_child = self.tree_policy.select_child
        while not node.untried and node.children:
            parent, node = node, select_child(node)
            if node.state is None:
                node.realize(self.game, self.game.next_state(parent.state, node.action))
            path.append(node)
        return path

    def expand(self, node: Node) -> Node:
        # a random untried action, swapped to the end and popped (no shuffle of every new node)
        untried = node.untried
        i = self.rng.randrange(len(untried))
        untried[i], untried[-1] = untried[-1], untried[i]
        action = untried.pop()
        child = Node(self.game, self.game.next_state(node.state, action), action, node.player)
        node.children.append(child)
        return child

    def evaluate(self, node: Node) -> int | None:
        return self.game.playout(node.state, self.rng, self.default_policy)

    @staticmethod
    def backpropagate(
        path: list[Node], winner: int | None = None, visits: int = 1, value_p1: float | None = None
    ) -> None:
        """Add a result to every node on the path, for the player who moved into it: a
        ``winner`` (1, 2, None for a draw) or ``value_p1``, player 1's expected result."""
        if value_p1 is None:
            value_p1 = 0.5 if winner is None else float(winner == 1)
        for node in path:
            node.visits += visits
            node.value += value_p1 if node.mover == 1 else 1.0 - value_p1

    # ---- tree reuse -------------------------------------------------------------------
    def _root_for(self, state: State) -> Node:
        """The kept node for ``state`` if the tree has it (root, child or grandchild)."""
        root = self.root
        if root is not None:
            if root.state == state:
                return root
            for child in root.children:
                if child.state == state:
                    self.root = child
                    return child
                for grandchild in child.children:
                    if grandchild.state == state:
                        self.root = grandchild
                        return grandchild
        player = self.game.current_player(state) if not self.game.is_final(state) else 1
        self.root = Node(self.game, state, None, opponent(player))
        return self.root


def pick_action(distribution: np.ndarray, temperature: float, rng: np.random.Generator) -> Action:
    """An action drawn with probability proportional to distribution ** (1 / temperature);
    temperature 0 takes the most probable."""
    if temperature <= 0:
        return int(np.argmax(distribution))
    weights = np.power(distribution.astype(np.float64), 1.0 / temperature)
    return int(rng.choice(len(weights), p=weights / weights.sum()))
