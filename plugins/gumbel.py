"""Gumbel AlphaZero's search (Danihelka, Guez, Schrittwieser and Silver, ICLR 2022;
``google-deepmind/mctx`` is the reference implementation), as a tree policy.

At the root, a search of n search games draws k moves without replacement by Gumbel
top-k, the largest ``g(a) + logit(a)`` (``g`` Gumbel noise in self-play, none for a
player), and shares the n search games among them by sequential halving: in rounds, every
move still in gets as many visits as the others, and after each round the better half by
``g(a) + logit(a) + sigma(q(a))`` stays. The move to play is the best of the last ones.

Below the root the move is chosen without noise from the improved policy
``pi'(a) = softmax(logit(a) + sigma(q(a)))``: the move that maximises
``pi'(a) - N(a) / (1 + sum_b N(b))``, so that the visits follow pi'. ``q`` is completed:
a move not visited is worth the mix of the node's own value and its visited moves' values
weighted by their priors; the node's values are rescaled to [0, 1] (the least to the
most), and ``sigma(q) = (c_visit + max_b N(b)) * c_scale * q``.

The root's pi' is the training target (``root_target``): it improves on the network's
policy even after a handful of search games, which visit counts do not.
"""

from __future__ import annotations

import functools
import math
import random

import numpy as np

from hexzero import mctsfw
from hexzero.mctsfw.evaluators import MEAN_SYMMETRY, RANDOM_SYMMETRY, VALUE_WEIGHT, symmetry_problems
from hexzero.mctsfw.search import NEW, Node, TreePolicy, best_child
from hexzero.mctsfw.search.arrays import TINY
from hexzero.mctsfw.schema import Parameters, Setting

#: the search games a search with a time limit alone plans its halving for (then the last
#: two moves share what is left)
TIME_LIMIT_PLAN = 200


def halving_visits(k: int, n: int) -> list[int]:
    """For each of ``n`` search games, the visits (of this search) a root move must have for
    the game to go to it: sequential halving of ``n`` among ``k`` moves. Every round gives
    each move still in ``n // (rounds * moves in)`` visits (at least one), then halves the
    moves (to no fewer than 2); ``rounds`` is ceil(log2 k)."""
    return list(_halving(k, n))


@functools.lru_cache(maxsize=64)
def _halving(k: int, n: int) -> tuple[int, ...]:
    """``halving_visits``, worked out once for each (k, n) a process plans."""
    if k <= 1:
        return tuple(range(n))
    rounds = math.ceil(math.log2(k))
    sequence: list[int] = []
    width, visits = k, 0
    while len(sequence) < n:
        for _ in range(max(1, n // (rounds * width))):
            sequence.extend([visits] * width)
            visits += 1
        width = max(2, width // 2)
    return tuple(sequence[:n])


class Gumbel(TreePolicy):
    """Gumbel top-k and sequential halving at the root, the improved policy below it."""

    name = "gumbel"
    description = "Gumbel AlphaZero: Gumbel top-k and sequential halving at the root, improved-policy targets"
    uses_priors = True
    chooses_moves = True
    exploration_param = "c_scale"

    root_noise_params = ("gumbel_scale",)
    parameters = Parameters(
        Setting("max_considered", 16, "k: the root moves drawn by Gumbel top-k and halved among", low=1),
        Setting("c_visit", 50.0, "sigma(q) = (c_visit + max visits) * c_scale * q: the visits the values are "
                "worth before any", low=0),
        Setting("c_scale", 0.1, "the weight of the values against the logits in sigma(q)", low=0),
        Setting("gumbel_scale", 1.0, "the Gumbel noise's scale in self-play (searches with root noise); "
                "players draw none", low=0),
        VALUE_WEIGHT,
        RANDOM_SYMMETRY,
        MEAN_SYMMETRY,
    )

    def __init__(self, max_considered: int = parameters.default("max_considered"),
                 c_visit: float = parameters.default("c_visit"),
                 c_scale: float = parameters.default("c_scale"),
                 gumbel_scale: float = parameters.default("gumbel_scale"),
                 value_weight: float = parameters.default("value_weight"),
                 random_symmetry: bool = parameters.default("random_symmetry"),
                 mean_symmetry: bool = parameters.default("mean_symmetry")):
        self.max_considered = int(max_considered)
        self.c_visit = float(c_visit)
        self.c_scale = float(c_scale)
        self.gumbel_scale = float(gumbel_scale)
        self.value_weight = float(value_weight)
        self.random_symmetry = bool(random_symmetry)
        self.mean_symmetry = bool(mean_symmetry)

    @classmethod
    def param_problems(cls, params: dict) -> list[str]:
        return super().param_problems(params) or symmetry_problems(params)

    # ---- the improved policy -------------------------------------------------------------------
    def completion(self, node: Node) -> tuple[list[float], float, float, float, int]:
        """(each child's value for the player to move at ``node``, completed: its mean, or
        its proven result; the value of a move not visited: the node's own value mixed with
        its visited moves' by their priors; the least value; sigma's factor on a value less
        the least, rescaling the values to [0, 1]; the children's visits). Plain Python:
        numpy's fixed cost per call weighs more than a node's few moves."""
        own = self.own_value(node)
        total, most, known_p, known_pq, values = 0, 0, 0.0, 0.0, []
        for child in node.children:
            n = child.visits
            total += n
            most = max(most, n)
            q = child.proven if child.proven is not None else child.value / n if n else None
            if q is not None:
                known_p += child.prior
                known_pq += child.prior * q
            values.append(q)
        mixed = (own + total * known_pq / known_p) / (1.0 + total) if known_p > 0 else own
        values = [mixed if q is None else q for q in values]
        every = values + [mixed] if node.untried else values
        low, high = min(every), max(every)
        return values, mixed, low, (self.c_visit + most) * self.c_scale / max(high - low, 1e-8), total

    @staticmethod
    def moves(node: Node) -> tuple[list, list[Node | None], list[float]]:
        """Every searched move of ``node``: (actions, child or None, prior), children first."""
        untried = node.untried or []
        actions = [ch.action for ch in node.children] + list(untried)
        children: list[Node | None] = list(node.children) + [None] * len(untried)
        priors = [ch.prior for ch in node.children] + [node.untried_prior(i) for i in range(len(untried))]
        return actions, children, priors

    def log_weights(self, node: Node) -> tuple[list, list[Node | None], list[float]]:
        """Every searched move of ``node``: (actions, child or None, logit + sigma(q))."""
        values, mixed, low, scale, _ = self.completion(node)
        actions, children, priors = self.moves(node)
        values = values + [mixed] * (len(actions) - len(values))
        logs = [math.log(max(p, TINY)) + scale * (q - low) for p, q in zip(priors, values)]
        return actions, children, logs

    def improved(self, node: Node) -> tuple[list, list[Node | None], list[float]]:
        """(actions, child or None, pi') of every searched move of ``node``."""
        actions, children, logs = self.log_weights(node)
        top = max(logs)
        weights = [math.exp(x - top) for x in logs]
        norm = sum(weights)
        return actions, children, [w / norm for w in weights]

    # ---- the search ----------------------------------------------------------------------------
    def begin(self, root: Node, budget: float, value: float | None, noise: bool, rng: np.random.Generator) -> None:
        """Draw the root's Gumbel noise (in self-play), take the top k moves and plan the
        halving of ``budget`` among them; the plan lives in the root (``Node.stats``), so
        searches in lock-step that share this policy keep their own."""
        own = value if value is not None else self.own_value(root)
        actions, _, priors = self.moves(root)
        root.stats = self.plan(actions, priors, own, {ch.action: ch.visits for ch in root.children}, budget, noise,
                               rng)

    def plan(self, actions: list, priors: list[float], own: float, start: dict, budget: float, noise: bool,
             rng: np.random.Generator) -> "RootPlan":
        """The plan of a root whose moves are ``actions`` (children first) with ``priors``,
        its own value ``own`` and its children's visits so far (``start``): ``draw``'s."""
        gumbel, top, sequence = self.draw(priors, budget, noise, rng)
        return RootPlan(own, dict(zip(actions, gumbel.tolist())), [actions[i] for i in top], start, sequence)

    def draw(self, priors, budget: float, noise: bool, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray,
                                                                                          list[int]]:
        """A root's plan for its moves' ``priors`` (children first), as arrays in their
        order (the object search's ``plan`` and the array search's ``begin``): each move's
        Gumbel noise (in self-play; zeros for a player), the top k moves by g + logit (their
        indices) and the halving of ``budget`` among them (``halving_visits``)."""
        logits = np.log(np.maximum(priors, TINY))
        gumbel = (rng.gumbel(size=len(priors)) * self.gumbel_scale if noise and self.gumbel_scale > 0
                  else np.zeros(len(priors)))
        k = min(self.max_considered, len(priors))
        top = np.argsort(-(logits + gumbel), kind="stable")[:k]
        planned = int(budget) if math.isfinite(budget) else TIME_LIMIT_PLAN
        return gumbel, top, halving_visits(k, planned)

    @staticmethod
    def own_value(node: Node) -> float:
        """The node's own value for its player to move, as first judged (kept in ``stats``)."""
        if isinstance(node.stats, RootPlan):
            return node.stats.value
        if isinstance(node.stats, float):
            return node.stats
        return 1.0 - node.value / node.visits if node.visits else 0.5

    def _root_scores(self, root: Node) -> tuple[dict, dict]:
        """(g + logit + sigma(q) of each root move, each move's child or None), by action."""
        actions, children, logs = self.log_weights(root)
        gumbel = root.stats.gumbel
        return {a: x + gumbel.get(a, 0.0) for a, x in zip(actions, logs)}, dict(zip(actions, children))

    def _root_child(self, root: Node) -> Node | int:
        plan: RootPlan = root.stats
        scores, children = self._root_scores(root)
        alive = [a for a in plan.considered if children.get(a) is None or children[a].proven != 0.0] or plan.considered
        searched = {a: plan.searched(children.get(a), a) for a in alive}
        i, plan.played = plan.played, plan.played + 1
        if i < len(plan.sequence):
            want = plan.sequence[i]
        else:  # past the plan (a time limit): the moves left at its end share the rest
            if plan.last is None:
                most = max(searched.values())
                plan.last = [a for a in alive if searched[a] == most]
            alive = [a for a in plan.last if a in searched] or alive
            want = min(searched[a] for a in alive)
        candidates = [a for a in alive if searched[a] == want]
        if not candidates:  # (a move proven lost left the halving)
            least = min(searched.values())
            candidates = [a for a in alive if searched[a] == least]
        action = max(candidates, key=scores.__getitem__)
        child = children.get(action)
        return child if child is not None else root.untried.index(action)

    def select_child(self, node: Node, rng: random.Random) -> Node | int:
        """At the root, the halving's next move; elsewhere the move that maximises
        pi'(a) - N(a) / (1 + sum N). The untried moves share their value (``completion``),
        so the one of highest prior (the last) stands for them, and their sum of priors
        enters the softmax's normaliser at once."""
        if isinstance(node.stats, RootPlan):
            return self._root_child(node)
        if node.stats is None:  # first entered: its visits so far are its own judgement
            node.stats = self.own_value(node)
        children, untried = node.children, node.untried
        if untried:
            if node.priors is None:
                each = 1.0 / (len(children) + len(untried))
                untried_sum, untried_best = each * len(untried), each
            else:
                untried_sum, untried_best = sum(node.priors), node.priors[-1]
        values, mixed, low, scale, total = self.completion(node)
        logs = [math.log(max(child.prior, TINY)) + scale * (q - low) for child, q in zip(children, values)]
        if untried:
            untried_log = scale * (mixed - low)
            top = max(logs + [math.log(max(untried_sum, TINY)) + untried_log])
            norm = math.exp(math.log(max(untried_sum, TINY)) + untried_log - top)
        else:
            top, norm = max(logs), 0.0
        norm += sum(math.exp(x - top) for x in logs)
        share = 1.0 / (1 + total)
        best, best_score = None, -math.inf
        for child, x in zip(children, logs):
            score = math.exp(x - top) / norm - child.visits * share
            if score > best_score and child.proven != 0.0:  # a move proven lost is never searched again
                best, best_score = child, score
        if untried and math.exp(math.log(max(untried_best, TINY)) + untried_log - top) / norm > best_score:
            return NEW  # the untried move of highest prior
        return best

    def noisy_priors(self, priors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return priors  # the noise is Gumbel's, drawn in ``begin``

    # ---- what the search gives -----------------------------------------------------------------
    def root_choice(self, root: Node) -> Node | None:
        """The move to play: a proven win if there is one; else, of the moves that lasted
        longest in the halving (not proven lost), the best by g + logit + sigma(q)."""
        plan = root.stats
        if not isinstance(plan, RootPlan) or not root.children:
            return None
        best = best_child(root)
        if best.proven == 1.0:
            return best
        scores, children = self._root_scores(root)
        alive = [a for a in plan.considered if children.get(a) is not None and children[a].proven != 0.0]
        if not alive:
            return best
        searched = {a: plan.searched(children[a], a) for a in alive}
        most = max(searched.values())
        return children[max((a for a in alive if searched[a] == most), key=scores.__getitem__)]

    def root_target(self, root: Node, num_actions: int) -> np.ndarray | None:
        """pi' over all actions (a proven win: that move alone; moves proven lost: nothing,
        unless every move is)."""
        if not isinstance(root.stats, RootPlan) or not root.children:
            return None
        target = np.zeros(num_actions, dtype=np.float64)
        best = best_child(root)
        if best.proven == 1.0:
            target[best.action] = 1.0
            return target
        for action, child, p in zip(*self.improved(root)):
            if child is None or child.proven != 0.0 or best.proven == 0.0:
                target[action] = p
        return target / target.sum()


class RootPlan:
    """A searched root's plan (kept in its ``stats``): its own value, each move's Gumbel
    noise, the moves considered, each child's visits before this search, the halving's
    visits per search game (``halving_visits``), the search games played so far and, past
    the plan (a search with a time limit alone), the moves that were left at its end."""

    __slots__ = ("value", "gumbel", "considered", "start", "sequence", "played", "last")

    def __init__(self, value: float, gumbel: dict, considered: list, start: dict, sequence: list[int]):
        self.value, self.gumbel, self.considered, self.start, self.sequence = value, gumbel, considered, start, sequence
        self.played = 0
        self.last: list | None = None  # the moves left when the plan ran out

    def searched(self, child: Node | None, action) -> int:
        """The visits ``action`` had in this search (a kept subtree's older ones not counted)."""
        return (child.visits if child is not None else 0) - self.start.get(action, 0)


@mctsfw.hookimpl
def mctsfw_register_tree_policies():
    return [Gumbel]
