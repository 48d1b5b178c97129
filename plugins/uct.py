"""UCT (UCB1 applied to trees): the classic MCTS tree policy."""

from __future__ import annotations

import math
import random

from hexzero import mctsfw
from hexzero.mctsfw.search import Node, TreePolicy
from hexzero.mctsfw.schema import Parameters, Setting

#: 1 / sqrt(n) by n, grown on demand: a list lookup is faster than a sqrt in the hot loop
INV_SQRT = [0.0] + [1.0 / math.sqrt(n) for n in range(1, 4096)]


def inv_sqrt_table(upto: int) -> list[float]:
    """``INV_SQRT``, long enough to be indexed by ``upto``."""
    if upto >= len(INV_SQRT):
        INV_SQRT.extend(1.0 / math.sqrt(n) for n in range(len(INV_SQRT), 2 * upto + 1))
    return INV_SQRT


class UCT(TreePolicy):
    """Try every action once, in random order; then pick the child maximising
    ``Q + c * sqrt(ln N_parent / N_child)``.

    Q is the child's mean result for the player to move at the parent, so both players
    maximise their own results; c (the exploration constant) trades exploration
    against exploitation: sqrt(2) is the textbook value for results in [0, 1]. Priors
    are not read: any leaf evaluator serves.
    """

    name = "uct"
    description = "UCB1 applied to trees; exploration constant c"
    exploration_param = "c"
    draws_at_random = True  # the untried moves in a random order

    parameters = Parameters(
        Setting("c", 1.4, "exploration constant: sqrt(2) ~ 1.4 is the textbook value for results in [0, 1] "
                "(the shipped 5x5 networks were trained with 1.0, which their configs keep)", low=0),
    )

    def __init__(self, c: float = parameters.default("c")):
        self.c = float(c)

    def select_child(self, node: Node, rng: random.Random) -> Node | int:
        if node.untried:  # an untried action first, uniformly at random (no shuffle of every new node's list)
            return int(rng.random() * len(node.untried))
        explore = self.c * math.sqrt(math.log(node.visits))
        inv_sqrt = inv_sqrt_table(node.visits)  # no child has more visits than its parent
        best, best_score = None, -1.0
        for child in node.children:
            n = child.visits
            score = child.value / n + explore * inv_sqrt[n]
            if score > best_score and child.proven != 0.0:  # a move proven lost is never searched again
                best, best_score = child, score
        return best


@mctsfw.hookimpl
def mctsfw_register_tree_policies():
    return [UCT]
