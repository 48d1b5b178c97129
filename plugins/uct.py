"""UCT (UCB1 applied to trees): the classic MCTS tree policy."""

from __future__ import annotations

import math

import mctsfw
from mctsfw.mcts import Node, TreePolicy


class UCT(TreePolicy):
    """Pick the child maximising ``Q + c * sqrt(ln N_parent / N_child)``.

    Q is the child's mean result for the player to move at the parent, so both players
    maximise their own results; c (the exploration constant) trades exploration
    against exploitation: sqrt(2) is the textbook value for results in [0, 1].
    """

    name = "uct"
    description = "UCB1 applied to trees; exploration constant c"

    def __init__(self, c: float = 1.4):
        self.c = float(c)

    @classmethod
    def param_problems(cls, params: dict) -> list[str]:
        problems = [f"{k}: unknown parameter of uct (known: c)" for k in sorted(set(params) - {"c"})]
        c = params.get("c", 1.4)
        if isinstance(c, bool) or not isinstance(c, (int, float)) or c < 0:
            problems.append(f"c: must be a number >= 0, not {c!r}")
        return problems

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
