"""UCT (UCB1 applied to trees): the classic MCTS tree policy."""

from __future__ import annotations

import math

import mctsfw
from mctsfw.mcts import Node, TreePolicy
from mctsfw.schema import Parameters, Setting


class UCT(TreePolicy):
    """Pick the child maximising ``Q + c * sqrt(ln N_parent / N_child)``.

    Q is the child's mean result for the player to move at the parent, so both players
    maximise their own results; c (the exploration constant) trades exploration
    against exploitation: sqrt(2) is the textbook value for results in [0, 1].
    """

    name = "uct"
    description = "UCB1 applied to trees; exploration constant c"

    parameters = Parameters(
        Setting("c", 1.4, "exploration constant: sqrt(2) ~ 1.4 is the textbook value for results in [0, 1] "
                "(the shipped 5x5 networks were trained with 1.0, which their configs keep)", low=0),
    )

    def __init__(self, c: float = parameters.default("c")):
        self.c = float(c)

    def select_child(self, node: Node) -> Node:
        explore = self.c * math.sqrt(math.log(node.visits))
        sqrt = math.sqrt
        best, best_score = None, -1.0
        for child in node.children:
            n = child.visits
            score = child.value / n + explore / sqrt(n)
            if score > best_score:
                best, best_score = child, score
        return best


@mctsfw.hookimpl
def mctsfw_register_tree_policies():
    return [UCT]
