"""PUCT: the tree policy of AlphaGo Zero and AlphaZero, guided by a policy's priors."""

from __future__ import annotations

import math
import random

import numpy as np

from hexzero import mctsfw
from hexzero.mctsfw.evaluators import MEAN_SYMMETRY, RANDOM_SYMMETRY, VALUE_WEIGHT, symmetry_problems
from hexzero.mctsfw.search import NEW, Node, TreePolicy
from hexzero.mctsfw.schema import Parameters, Setting


#: what an untried move is worth at first (``first_play``)
FIRST_PLAY = ("parent", "reduction", "loss", "win")


class PUCT(TreePolicy):
    """Pick the child maximising ``Q + c_puct * P * sqrt(N_parent) / (1 + N_child)``.

    P is the prior from the leaf evaluator: a network's policy, or uniform with an
    evaluator that has none (random rollouts, as OpenSpiel's MCTSBot does). An untried
    action's Q is its first-play value (``first_play``: by default the parent's value for
    the player to move there); all untried actions share it, so only the one of highest
    prior competes with the children, and the children of a node are made one at a time,
    best prior first.

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

    root_noise_params = ("dirichlet_alpha", "dirichlet_epsilon")
    parameters = Parameters(
        Setting("c_puct", 1.5, "weight of the prior against the mean value", low=0),
        Setting("dirichlet_alpha", 0.3, "root noise Dir(alpha) in self-play (smaller alpha: spikier noise; "
                "~10 / legal moves)", low=0),
        Setting("dirichlet_epsilon", 0.25, "share of noise in the root's priors in self-play (players never add noise)",
                low=0, high=1),
        VALUE_WEIGHT,
        RANDOM_SYMMETRY,
        MEAN_SYMMETRY,
        Setting("first_play", "parent", 'the value a move not tried yet is assumed to have (first-play urgency): '
                '"parent" (the parent\'s mean for its player), "reduction" (that less fpu_reduction, as Leela Zero '
                'and KataGo), "loss" or "win"', choices=FIRST_PLAY),
        Setting("fpu_reduction", 0.2, 'with first_play = "reduction": subtracted from the parent\'s mean', low=0,
                high=1),
    )

    def __init__(self, c_puct: float = parameters.default("c_puct"),
                 dirichlet_alpha: float = parameters.default("dirichlet_alpha"),
                 dirichlet_epsilon: float = parameters.default("dirichlet_epsilon"),
                 value_weight: float = parameters.default("value_weight"),
                 random_symmetry: bool = parameters.default("random_symmetry"),
                 mean_symmetry: bool = parameters.default("mean_symmetry"),
                 first_play: str = parameters.default("first_play"),
                 fpu_reduction: float = parameters.default("fpu_reduction")):
        self.c_puct = float(c_puct)
        self.first_play = first_play
        self.fpu_reduction = float(fpu_reduction)
        self.dirichlet_alpha = float(dirichlet_alpha)
        self.dirichlet_epsilon = float(dirichlet_epsilon)
        self.value_weight = float(value_weight)
        self.random_symmetry = bool(random_symmetry)
        self.mean_symmetry = bool(mean_symmetry)

    @classmethod
    def param_problems(cls, params: dict) -> list[str]:
        problems = super().param_problems(params) or symmetry_problems(params)
        alpha, epsilon = params.get("dirichlet_alpha", 1), params.get("dirichlet_epsilon", 0)
        if not problems and alpha == 0 and epsilon > 0:
            problems.append("dirichlet_alpha: must be > 0 when dirichlet_epsilon > 0")
        return problems

    def select_child(self, node: Node, rng: random.Random) -> Node | int:
        scale = self.c_puct * math.sqrt(node.visits)
        best, best_score = NEW, -math.inf
        if node.untried:  # the untried action of highest prior (the last) stands for them all
            best_score = self.first_play_value(node) + scale * node.untried_prior(len(node.untried) - 1)
        for child in node.children:
            n = child.visits
            score = child.value / n + scale * child.prior / (1 + n)
            if score > best_score and child.proven != 0.0:  # a move proven lost is never searched again
                best, best_score = child, score
        return best

    def first_play_value(self, node: Node) -> float:
        """What an untried move of ``node`` is assumed to be worth to its player (``first_play``)."""
        first_play = self.first_play
        if first_play == "parent" or first_play == "reduction":
            parent = 1.0 - node.value / node.visits if node.visits else 0.5  # the parent's value for the mover
            return parent if first_play == "parent" else max(parent - self.fpu_reduction, 0.0)
        return 0.0 if first_play == "loss" else 1.0

    def noise(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
        """Dir(alpha) over ``count`` moves as (weights, their sum): independent Gamma(alpha)
        draws, the law of ``rng.dirichlet`` and cheaper (for alpha < 0.1 it breaks sticks
        with beta draws, a third slower on 121 moves); the array search mixes them compiled
        (``arrays.mix_root_noise``), so both searches draw and mix alike."""
        gammas = rng.standard_gamma(self.dirichlet_alpha, count)
        total = float(gammas.sum())
        if total > 0:
            return gammas, total
        return rng.dirichlet(np.full(count, self.dirichlet_alpha)), 1.0  # (every draw under the smallest float)

    def noisy_priors(self, priors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self.dirichlet_epsilon <= 0 or len(priors) < 2:
            return priors
        weights, total = self.noise(len(priors), rng)
        return (1 - self.dirichlet_epsilon) * priors + self.dirichlet_epsilon * (weights / total)


@mctsfw.hookimpl
def mctsfw_register_tree_policies():
    return [PUCT]
