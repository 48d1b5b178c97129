"""The object tree: a ``Node`` a position the search has reached, and what reads a tree of them.

A node holds its position, the statistics of the move that led to it, its children and
the moves it considers without a child yet (``untried``, the most promising last, with
their ``priors``): one form from expansion on. ``best_child`` picks the move to play,
``target_counts`` the training target, ``SearchProgress`` what a person watching reads;
the array search (``mctsfw.search.array_search``) answers the same questions from its
arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hexzero.mctsfw.game import Action, Game, State

#: the moves of no playout (a proven leaf's), for ``TreePolicy.observe``
NOTHING_PLAYED: tuple = ((), ())


class Node:
    """A state in the search tree with the statistics of the move that led to it.

    ``untried`` is None until the node is expanded (and for ever at a final or proven
    node), then the list of the moves the search considers there without a child yet,
    the most promising last; ``priors`` the list of their priors alongside, or None for
    uniform ones. One form from expansion on: what a tree policy reads.

    ``proven`` is the node's exact result for ``mover`` once known (1 a win, 0.5 a draw, 0
    a loss; a final state is proven from the start), else None; ``depth`` is then the
    moves to the end with best play (the winner hurrying, the loser holding out).
    ``stats`` is the tree policy's own record of the node's moves (RAVE: all-moves-as-first
    counts), None until it keeps one.
    """

    __slots__ = ("state", "action", "mover", "player", "winner", "prior", "visits", "value", "children", "untried",
                 "priors", "proven", "depth", "stats")

    def __init__(self, game: Game, state: State, action: Action | None, mover: int, prior: float = 1.0):
        self.state = state
        self.action = action  # the move that led here (None at a fresh root)
        self.mover = mover  # the player who made that move: ``value`` is from their side
        self.prior = prior  # the evaluator's probability of that move
        self.visits = 0
        self.value = 0.0  # sum of results for ``mover``: 1 win, 0.5 draw, 0 loss
        self.children: list[Node] = []
        self.untried: list[Action] | None = None
        self.priors: list[float] | None = None
        self.depth = 0
        self.stats = None
        if game.is_final(state):
            self.player = 0  # nobody moves: a final state
            self.winner = game.winner(state)
            self.proven = 0.5 if self.winner is None else float(self.winner == mover)
        else:
            self.player = game.current_player(state)
            self.winner = None
            self.proven = None

    @property
    def final(self) -> bool:
        return self.player == 0

    @property
    def q(self) -> float:
        """Mean result for the player who moved into this node."""
        return self.value / self.visits if self.visits else 0.0

    @property
    def result(self) -> float | None:
        """The proven result for the player to move here (1 a win, 0.5 a draw, 0 a
        loss), None while unknown."""
        return None if self.proven is None else 1.0 - self.proven

    def child(self, action: Action) -> "Node | None":
        for ch in self.children:
            if ch.action == action:
                return ch
        return None

    def untried_prior(self, i: int) -> float:
        """The prior of ``untried[i]`` (uniform over the legal actions without ``priors``)."""
        if self.priors is None:
            return 1.0 / (len(self.children) + len(self.untried))
        return self.priors[i]

    def __repr__(self) -> str:
        return f"Node(action={self.action}, visits={self.visits}, q={self.q:.3f})"



def best_child(node: "Node") -> "Node":
    """The child to play: a proven win if there is one (the fastest); else the most visited
    of those not proven lost (ties broken by mean value); when every child is proven lost,
    the one that loses last."""
    children = node.children
    wins = [ch for ch in children if ch.proven == 1.0]
    if wins:
        return min(wins, key=lambda ch: ch.depth)
    alive = [ch for ch in children if ch.proven != 0.0]
    if alive:
        most = max([ch.visits for ch in alive])
        ahead = [ch for ch in alive if ch.visits == most]
        return ahead[0] if len(ahead) == 1 else max(ahead, key=lambda ch: ch.q)
    return max(children, key=lambda ch: ch.depth)


def proven_for_player1(node: Node) -> float:
    """A proven node's exact result for player 1."""
    return node.proven if node.mover == 1 else 1.0 - node.proven


#: a tree policy's own training target is kept as whole-number weights in these parts of one
#: (``MCTS.targets``: the replay records store integer visit counts)
TARGET_SCALE = 10_000


def target_counts(root: Node, num_actions: int) -> np.ndarray:
    """The visits of each of the root's moves, corrected by what is proven: 1 for the
    fastest proven win and 0 elsewhere if there is one, and 0 for a move proven lost while
    another is not (``visit_distribution`` and the training records read these)."""
    counts = np.zeros(num_actions, dtype=np.int64)
    best = best_child(root) if root.children else None
    if best is not None and best.proven == 1.0:
        counts[best.action] = 1
        return counts
    for ch in root.children:
        if ch.proven != 0.0 or best is None or best.proven == 0.0:
            counts[ch.action] = ch.visits
    return counts


@dataclass(frozen=True)
class SearchProgress:
    """What a search has found so far, for a person watching it think."""

    simulations: int  # search games of this search so far
    seconds: float  # since this search started
    visits: dict[Action, int]  # the root's children: action -> visits (kept subtrees included)
    win_estimate: float  # the expected result for the player to move at the root (1 a win, 0 a loss)
    best_action: Action | None  # the move to play so far (a proven win, else the most visited)
    proven: float | None = None  # the root's proven result for the player to move (1, 0.5, 0), None if unknown
    depth: int = 0  # moves to the end with best play, when proven

    def share(self, action: Action) -> float:
        """The share of the root's visits that went to ``action``."""
        total = sum(self.visits.values())
        return self.visits.get(action, 0) / total if total else 0.0

    def verdict(self) -> str | None:
        """"wins in N", "loses in N" or "draws" (N moves of the game, both players') once the
        root is proven, else None."""
        if self.proven is None:
            return None
        if self.proven == 0.5:
            return "draws"
        return f"{'wins' if self.proven == 1.0 else 'loses'} in {self.depth}"

    def outlook(self) -> str:
        """For people: the verdict once proven ("wins in 3"), else "win estimate 61%"."""
        verdict = self.verdict()
        return f"proven: {verdict}" if verdict else f"win estimate {self.win_estimate:.0%}"

    @classmethod
    def of(cls, root: "Node", simulations: int, seconds: float, choice: "Node | None" = None) -> "SearchProgress":
        """``choice``: the child the tree policy plays (``TreePolicy.root_choice``), if its own."""
        visits = {ch.action: ch.visits for ch in root.children if ch.visits}
        best = choice.action if choice is not None else best_child(root).action if root.children else None
        proven = root.result
        estimate = proven if proven is not None else 1.0 - root.q if root.visits else 0.5
        return cls(simulations, seconds, visits, estimate, best, proven, root.depth)
