"""PUCT: the tree policy of AlphaGo Zero and AlphaZero, guided by a policy's priors."""

from __future__ import annotations

import math

import numpy as np

import mctsfw
from mctsfw.mcts import Node, TreePolicy

PARAMS = {"c_puct": 1.5, "dirichlet_alpha": 0.3, "dirichlet_epsilon": 0.25, "value_weight": 1.0}


class PUCT(TreePolicy):
    """Pick the child maximising ``Q + c_puct * P * sqrt(N_parent) / (1 + N_child)``.

    P is the prior from the leaf evaluator: a network's policy, or uniform with an
    evaluator that has none (random rollouts, as OpenSpiel's MCTSBot does). An untried
    action's Q is the parent's value for the player to move there; all untried actions
    share it, so only the one of highest prior competes with the children, and the
    children of a node are made one at a time, best prior first.

    ``dirichlet_alpha`` and ``dirichlet_epsilon`` shape the root noise of a search
    built with ``root_noise=True`` (self-play): fresh Dirichlet noise at every search;
    a search without root noise (playing) ignores them. ``value_weight`` (lambda) is
    read by whoever builds the leaf evaluator for this policy (self-play, model actors):
    leaf value = lambda * value head + (1 - lambda) * random playout.
    """

    name = "puct"
    description = "PUCT with evaluator priors and values, Dirichlet root noise in self-play"
    uses_priors = True
    exploration_param = "c_puct"

    def __init__(self, c_puct: float = 1.5, dirichlet_alpha: float = 0.3, dirichlet_epsilon: float = 0.25,
                 value_weight: float = 1.0):
        self.c_puct = float(c_puct)
        self.dirichlet_alpha = float(dirichlet_alpha)
        self.dirichlet_epsilon = float(dirichlet_epsilon)
        self.value_weight = float(value_weight)

    @classmethod
    def param_problems(cls, params: dict) -> list[str]:
        problems = [f"{k}: unknown parameter of puct (known: {', '.join(PARAMS)})" for k in sorted(set(params) - set(PARAMS))]
        for key, low, high in (("c_puct", 0, None), ("dirichlet_alpha", 0, None), ("dirichlet_epsilon", 0, 1),
                               ("value_weight", 0, 1)):
            value = params.get(key, PARAMS[key])
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < low or (high is not None and value > high):
                problems.append(f"{key}: must be a number from {low}{f' to {high}' if high is not None else ' up'}, not {value!r}")
        if params.get("dirichlet_alpha", 1) == 0 and params.get("dirichlet_epsilon", 0) > 0:
            problems.append("dirichlet_alpha: must be > 0 when dirichlet_epsilon > 0")
        return problems

    def select_child(self, node: Node) -> Node | None:
        scale = self.c_puct * math.sqrt(node.visits)
        best, best_score = None, -math.inf
        if node.untried:  # the untried action of highest prior (the last) stands for them all
            first_play = 1.0 - node.value / node.visits if node.visits else 0.5  # the parent's value for the mover
            best_score = first_play + scale * node.untried_prior(len(node.untried) - 1)
        for child in node.children:
            n = child.visits
            score = child.value / n + scale * child.prior / (1 + n)
            if score > best_score:
                best, best_score = child, score
        return best

    def noisy_priors(self, priors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self.dirichlet_epsilon <= 0 or len(priors) < 2:
            return priors
        noise = rng.dirichlet([self.dirichlet_alpha] * len(priors))
        return (1 - self.dirichlet_epsilon) * priors + self.dirichlet_epsilon * noise


@mctsfw.hookimpl
def mctsfw_register_tree_policies():
    return [PUCT]
