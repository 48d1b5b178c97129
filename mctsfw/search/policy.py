"""What a tree policy is (``TreePolicy``: UCT, PUCT, RAVE, Gumbel are plugins of this
contract) and which tree policies and evaluators can search together."""

from __future__ import annotations

import random
from typing import Sequence

import numpy as np

from hexzero.mctsfw.evaluators import LeafEvaluator
from hexzero.mctsfw.game import Action
from hexzero.mctsfw.schema import Parameters
from hexzero.mctsfw.search.nodes import Node

#: ``TreePolicy.select_child``'s answer for the untried move of highest prior (the last)
NEW = -1


class TreePolicy:
    """Chooses where a descent goes at an expanded node. Subclass per policy."""

    name = ""
    description = ""
    #: whether ``select_child`` reads priors (the search then asks the evaluator for them,
    #: and root noise is possible)
    uses_priors = False
    #: whether it is useless with uniform priors: refused with an evaluator that gives none
    needs_informed_priors = False
    #: the name of its exploration constant among its parameters (``c`` of ``MCTSActor``)
    exploration_param = ""
    #: whether it learns from the moves of the playouts (``observe``): the search then asks
    #: an evaluator that can say them (``LeafEvaluator.records_playouts``) to do so
    reads_playouts = False
    #: whether its ``root_choice`` is the move self-play plays (its root noise is the
    #: exploration: Gumbel), instead of a move drawn from the target with temperature
    chooses_moves = False
    #: whether it draws random numbers outside root noise (UCT tries untried moves in a
    #: random order): a search with it plays another game each time (``Actor.deterministic``)
    draws_at_random = False
    #: the parameters of its root noise, which self-play alone adds (a player never does):
    #: not part of the search a network plays with (``cli.py model`` leaves them out)
    root_noise_params: tuple[str, ...] = ()

    #: the constructor's parameters (the ``[tree_policies.<name>]`` table), each declared once
    parameters: Parameters = Parameters()

    @classmethod
    def param_problems(cls, params: dict) -> list[str]:
        """Unknown names and values the declared ``parameters`` refuse, as 'key: reason' lines."""
        return cls.parameters.problems(cls.name, params)

    def select_child(self, node: Node, rng: random.Random) -> "Node | int":
        """Where a descent goes at the expanded ``node``: a child, or the index in
        ``node.untried`` of the move that gets a child now (``NEW``: the last, the most
        promising, as ``untried`` is ordered by prior). ``rng``: the search's generator. The
        answer is all a policy gives: it keeps nothing of a descent between calls."""
        raise NotImplementedError

    def noisy_priors(self, priors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The root's priors with exploration noise mixed in (``root_noise``)."""
        raise NotImplementedError(f"the {self.name} tree policy reads no priors: root noise would change nothing")

    def observe(self, path: list[Node], value_p1: float, played: tuple[Sequence[Action], Sequence[Action]]) -> None:
        """After backpropagation, for a policy that ``reads_playouts``: a search game's path
        from the root, its result for player 1 and the moves each player made in its
        playout (``played[0]`` player 1's; empty lists after a proven leaf)."""

    def begin(self, root: Node, budget: float, value: float | None, noise: bool, rng: np.random.Generator) -> None:
        """At the start of every search, the root ready (expanded, noised): ``budget`` search
        games (``math.inf`` with a time limit alone), the evaluator's value of a new root
        for its player to move (None for a kept one), whether the search adds root noise
        (self-play) and the search's generator. A policy that plans the root's search
        (Gumbel's sequential halving) plans it here."""

    def root_choice(self, root: Node) -> Node | None:
        """The child to play after a search of ``root``, for a policy with its own rule
        (Gumbel); None: the most visited (``best_child``)."""
        return None

    def root_target(self, root: Node, num_actions: int) -> np.ndarray | None:
        """The policy-training target of a searched ``root`` over all actions, for a policy
        with its own (Gumbel's improved policy); None: the visits (``target_counts``)."""
        return None


def search_problem(tree_policy: TreePolicy, evaluator: LeafEvaluator, root_noise: bool) -> str | None:
    """None if this tree policy, evaluator and root noise can search together, else why not."""
    if not isinstance(tree_policy, TreePolicy):
        return f"a tree policy must be a TreePolicy, not {type(tree_policy).__name__}"
    if not isinstance(evaluator, LeafEvaluator):
        return f"a leaf evaluator must be a LeafEvaluator (mctsfw.evaluators), not {type(evaluator).__name__}"
    return pairing_problem(tree_policy, evaluator, root_noise)


def pairing_problem(tree_policy: TreePolicy | type[TreePolicy], evaluator: LeafEvaluator | type[LeafEvaluator],
                    root_noise: bool = False) -> str | None:
    """None if what this tree policy and this evaluator declare lets them search together,
    else why not. Either may be a class, so a config is checked before anything is built."""
    if tree_policy.needs_informed_priors and not evaluator.informed_priors:
        return (f"the {tree_policy.name} tree policy needs priors from a network; the {evaluator.name} evaluator "
                "gives uniform ones")
    if root_noise and not tree_policy.uses_priors:
        return f"root noise perturbs priors, which the {tree_policy.name} tree policy does not read"
    if tree_policy.reads_playouts and not evaluator.records_playouts:
        return (f"the {tree_policy.name} tree policy learns from the moves of playouts; the {evaluator.name} "
                "evaluator does not say them (random rollouts do)")
    return None
