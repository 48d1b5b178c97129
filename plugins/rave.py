"""RAVE: UCT blended with all-moves-as-first values (Gelly and Silver 2007; MoGo, MoHex).

A random playout says little about the one move that started it, but a good move for a
player tends to be good whenever that player makes it: so each node also keeps, for every
move, the mean result of the search games in which the player to move there made that
move at any later point, in the tree or in the playout (its AMAF value, many times
more data than the move's own visits). A move's value blends the two,
``(1 - beta) * Q + beta * Q_amaf`` with ``beta = sqrt(k / (3n + k))`` for a move of n
visits (the "hand-selected" schedule: AMAF leads while a move is young, its own mean once
it has some k visits), plus the usual exploration term ``c * sqrt(ln N / n)``. A move
not tried yet competes with its AMAF value alone (as if visited once), so the tree grows
first where the playouts say the moves are good; a move no playout has made is tried first.

The statistics travel through the search's extension points, not its loop: the random
rollouts report the moves of each playout (``Game.playout_played``; Hex returns the cells
each player filled), and ``observe`` records them in each node's ``stats``. In games where
a move can be made twice in a game (a Connect Four column) every making counts.
"""

from __future__ import annotations

import math
import random
from typing import Sequence

from hexzero import mctsfw
from hexzero.mctsfw.game import Action
from hexzero.mctsfw.search import Node, TreePolicy
from hexzero.mctsfw.schema import Parameters, Setting

#: what a move no playout has made is worth: tried before any other
UNSEEN = 1.0


class RAVE(TreePolicy):
    name = "rave"
    description = "UCT blended with all-moves-as-first (AMAF) values of the playouts; c, equivalence k"
    exploration_param = "c"
    reads_playouts = True

    parameters = Parameters(
        Setting("c", 0.0, "exploration constant on results in [0, 1]: RAVE needs none (as MoHex), the AMAF "
                "values spread the search (on 7x7 Hex c = 0 beat c = 0.4 16-4 at 0.2 s a move)", low=0),
        Setting("equivalence", 1000, "k of the schedule beta = sqrt(k / (3n + k)): a move's own mean and its "
                "AMAF mean weigh the same at n = k visits", low=1),
    )

    def __init__(self, c: float = parameters.default("c"), equivalence: int = parameters.default("equivalence")):
        self.c = float(c)
        self.equivalence = float(equivalence)

    def select_child(self, node: Node, rng: random.Random) -> Node | int:
        stats = node.stats or {}
        c, k = self.c, self.equivalence
        log_n = math.log(node.visits) if node.visits > 1 else 0.0
        best, best_score = None, -math.inf
        for child in node.children:
            if child.proven is not None and child.proven == 0.0:
                continue  # a move proven lost is never searched again
            n = child.visits
            q = child.value / n
            amaf = stats.get(child.action)
            if amaf is not None:
                beta = math.sqrt(k / (3 * n + k))
                q = (1.0 - beta) * q + beta * amaf[1] / amaf[0]
            score = q + c * math.sqrt(log_n / n)
            if score > best_score:
                best, best_score = child, score
        if node.untried:
            explore = c * math.sqrt(log_n)  # as if visited once
            top, top_i = -math.inf, 0
            for i, action in enumerate(node.untried):
                amaf = stats.get(action)
                value = UNSEEN if amaf is None else amaf[1] / amaf[0]
                if value > top:
                    top, top_i = value, i
            if top + explore > best_score:
                return top_i
        return best

    def observe(self, path: list[Node], value_p1: float, played: tuple[Sequence[Action], Sequence[Action]]) -> None:
        """Each node on the path learns, for every move its player to move made later in
        this search game (the tree's moves below it, then the playout's), the result."""
        later = (list(played[0]), list(played[1]))
        for i in range(len(path) - 1, -1, -1):
            node = path[i]
            if i + 1 < len(path):
                below = path[i + 1]
                later[below.mover - 1].append(below.action)
            if node.player == 0:
                continue  # a final position: nobody moves
            result = value_p1 if node.player == 1 else 1.0 - value_p1
            stats = node.stats
            if stats is None:
                stats = node.stats = {}
            for action in later[node.player - 1]:
                amaf = stats.get(action)
                if amaf is None:
                    stats[action] = [1, result]
                else:
                    amaf[0] += 1
                    amaf[1] += result


@mctsfw.hookimpl
def mctsfw_register_tree_policies():
    return [RAVE]
