"""PUCT: the tree policy of AlphaGo Zero and AlphaZero, guided by a policy's priors."""

from __future__ import annotations

import math

import numpy as np

import mctsfw
from mctsfw.mcts import Node, TreePolicy
from mctsfw.schema import Parameters, Setting


class PUCT(TreePolicy):
    """Pick the child maximising ``Q + c_puct * P * sqrt(N_parent) / (1 + N_child)``.

    P is the child's prior from the leaf evaluator; an unvisited child's Q is the
    parent's value for the player to move there. Dirichlet noise (``dirichlet_alpha``,
    ``dirichlet_epsilon``) is mixed into the root's priors once per search, so self-play
    tries moves the network does not yet like; ``dirichlet_epsilon = 0`` turns it off
    (for playing, not training). ``value_weight`` (lambda) is read by the engine: leaf
    value = lambda * value head + (1 - lambda) * playout result.
    """

    name = "puct"
    description = "PUCT with evaluator priors and values, Dirichlet root noise (needs a policy-and-value net)"
    needs_evaluator = True

    parameters = Parameters(
        Setting("c_puct", 1.5, "weight of the prior against the mean value", low=0),
        Setting("dirichlet_alpha", 0.3, "root noise Dir(alpha) in self-play (smaller alpha: spikier noise; "
                "~10 / legal moves)", low=0),
        Setting("dirichlet_epsilon", 0.25, "share of noise in the root's priors; players use 0 (no noise)",
                low=0, high=1),
        Setting("value_weight", 1.0, "lambda: leaf value = lambda * value head + (1 - lambda) * random playout",
                low=0, high=1),
    )

    def __init__(self, c_puct: float = parameters.default("c_puct"),
                 dirichlet_alpha: float = parameters.default("dirichlet_alpha"),
                 dirichlet_epsilon: float = parameters.default("dirichlet_epsilon"),
                 value_weight: float = parameters.default("value_weight")):
        self.c_puct = float(c_puct)
        self.dirichlet_alpha = float(dirichlet_alpha)
        self.dirichlet_epsilon = float(dirichlet_epsilon)
        self.value_weight = float(value_weight)

    @classmethod
    def param_problems(cls, params: dict) -> list[str]:
        problems = super().param_problems(params)
        alpha, epsilon = params.get("dirichlet_alpha", 1), params.get("dirichlet_epsilon", 0)
        if not problems and alpha == 0 and epsilon > 0:
            problems.append("dirichlet_alpha: must be > 0 when dirichlet_epsilon > 0")
        return problems

    def select_child(self, node: Node) -> Node:
        scale = self.c_puct * math.sqrt(node.visits)
        first_play = 1.0 - node.value / node.visits if node.visits else 0.5  # the parent's value for the mover
        best, best_score = None, -math.inf
        for child in node.children:
            n = child.visits
            q = child.value / n if n else first_play
            score = q + scale * child.prior / (1 + n)
            if score > best_score:
                best, best_score = child, score
        return best

    def prepare_root(self, root: Node, rng: np.random.Generator) -> None:
        if self.dirichlet_epsilon <= 0 or len(root.children) < 2:
            return
        noise = rng.dirichlet([self.dirichlet_alpha] * len(root.children))
        eps = self.dirichlet_epsilon
        for child, n in zip(root.children, noise):
            child.prior = (1 - eps) * child.prior + eps * float(n)


@mctsfw.hookimpl
def mctsfw_register_tree_policies():
    return [PUCT]
