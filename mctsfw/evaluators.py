"""Leaf evaluators: how the search judges a leaf (the "evaluate" phase of ``mctsfw.search``).

An evaluator takes a batch of leaf states (none final) and gives the win probability of
the player to move in each, and, when the tree policy reads priors, a probability for
each action. The four of the core:

- ``RandomRollouts``: uniformly random playouts (``Game.playout``); uniform priors.
- ``NetRollouts``: playouts by a policy network, epsilon-greedy, the whole batch in
  lock-step (``Game.playout_batch``, one network call per move); priors from the same
  network's policy, computed only when the tree policy reads them (PUCT), so UCT never
  pays for them.
- ``NetValue``: a policy-and-value network: priors from its policy head, values from
  its value head, one network call per batch.
- ``MixedEvaluator``: ``weight * value + (1 - weight) * rollout`` of two evaluators (the
  lambda of AlphaGo); priors from the first.

Searches in lock-step (the games of a self-play group, ``mctsfw.search.object_search.search_together``)
have their leaves judged together (``evaluate_together``): an evaluator class says how
to answer several searches at once (``LeafEvaluator.evaluate_many``); ``NetValue`` makes
one network call for all the searches that share its network, ``MixedEvaluator`` shares
the value part and leaves each search its own (seeded) rollouts.

Networks are asked for their declared role (``mctsfw.roles``), never sniffed; a net
that cannot serve is refused when the evaluator is built, with the reason.
"""

from __future__ import annotations

import math
import numbers
import random
from typing import Any, Sequence

import numpy as np

from hexzero.mctsfw.game import Action, Game, State, turned_at_random
from hexzero.mctsfw.roles import POLICY, POLICY_VALUE, policy_scores, require_role
from hexzero.mctsfw.sampling import masked_policy, sample_actions
from hexzero.mctsfw.schema import Setting

#: leaves per call that network evaluators gather by default
NET_BATCH = 32
#: network rollouts (``NetRollouts.batch_for``): a search of a known budget judges its
#: leaves in batches of up to this many, keeping at least ``ROUNDS_AT_LEAST`` rounds
ROLLOUT_BATCH_MOST = 128
ROUNDS_AT_LEAST = 64


class LeafEvaluator:
    """Judges leaves for the search. Subclass per kind of judgement."""

    name = ""
    #: True: ``evaluate`` gives priors from a network when asked; False: it gives None
    #: (uniform priors, declared)
    informed_priors = False
    #: leaves the search gathers per ``evaluate`` call unless told otherwise
    batch_size = 1
    #: whether it can say the moves of its playouts: with ``record_playouts`` set (by a
    #: search whose tree policy reads them), ``evaluate`` answers ``(values, priors,
    #: played)``, ``played[i]`` the moves each player made in the playout from state i
    records_playouts = False
    record_playouts = False
    #: whether its judgement of a leaf draws random numbers (playouts do, a value head need
    #: not): a search with one plays another game each time (``Actor.deterministic``)
    draws_at_random = False

    def __init__(self, game: Game):
        self.game = game

    def batch_for(self, search_games: float) -> int:
        """Leaves to gather per call in a search of ``search_games`` (``math.inf`` for a
        time-limited one) whose batch was not set: ``batch_size``."""
        return self.batch_size

    def evaluate(self, states: Sequence[State], with_priors: bool) -> tuple[Sequence[float], np.ndarray | None]:
        """(the win probability of the player to move in each state, priors ``(B,
        num_actions)`` when ``with_priors`` and informed, else None for uniform ones)."""
        raise NotImplementedError

    @classmethod
    def evaluate_many(cls, evaluators: Sequence["LeafEvaluator"], batches: Sequence[Sequence[State]],
                      with_priors: bool) -> list[tuple[Sequence[float], np.ndarray | None]]:
        """Each evaluator's answer for its own batch (evaluators of this class, one per
        search in lock-step). By default one ``evaluate`` each; an evaluator whose work is
        a network call answers them with one call where it can."""
        return [evaluator.evaluate(states, with_priors) for evaluator, states in zip(evaluators, batches)]


def evaluate_together(evaluators: Sequence[LeafEvaluator], batches: Sequence[Sequence[State]],
                      with_priors: bool) -> list[tuple[Sequence[float], np.ndarray | None]]:
    """The answers of several searches' evaluators to their batches of leaf states, in
    order: the evaluators of each class answer together (``evaluate_many``). A single
    evaluator answers as in a search of its own."""
    if len(evaluators) == 1:
        return [evaluators[0].evaluate(batches[0], with_priors)]
    answers: list = [None] * len(evaluators)
    by_class: dict[type, list[int]] = {}
    for i, evaluator in enumerate(evaluators):
        by_class.setdefault(type(evaluator), []).append(i)
    for cls, indices in by_class.items():
        for i, answer in zip(indices, cls.evaluate_many([evaluators[i] for i in indices], [batches[i] for i in indices],
                                                        with_priors)):
            answers[i] = answer
    return answers


def result_for(winner: int | None, player: int) -> float:
    """1 if ``player`` won, 0 if they lost, 0.5 for a draw."""
    return 0.5 if winner is None else float(winner == player)


#: how random rollouts move: uniformly at random, or tactically (``tactical_moves``)
PLAYOUTS = ("random", "tactical")


def tactical_moves(game: Game, rng: random.Random):
    """A ``choose`` for ``Game.playout`` that takes a win at once and stops the opponent's
    (``Game.forcing_actions``), else moves uniformly at random: "tactical playouts"."""
    legal, forcing, choice = game.legal_actions, game.forcing_actions, rng.choice

    def choose(state: State) -> Action:
        forced = forcing(state)
        return choice(forced.actions if forced is not None else legal(state))

    return choose


class RandomRollouts(LeafEvaluator):
    """Random playouts to the end (one per leaf); uniform priors. ``playouts="tactical"``:
    each move takes a win at once or stops the opponent's where the game declares its
    threats (slower per playout, and closer to what a player would do)."""

    name = "random_rollouts"
    draws_at_random = True

    def __init__(self, game: Game, seed: int | None = None, playouts: str = "random"):
        super().__init__(game)
        if playouts not in PLAYOUTS:
            raise ValueError(f"playouts is one of {', '.join(PLAYOUTS)}, not {playouts!r}")
        self.rng = random.Random(seed)
        self.playouts = playouts
        self.choose = tactical_moves(game, self.rng) if playouts == "tactical" else None

    records_playouts = True

    def evaluate(self, states: Sequence[State], with_priors: bool = False) -> tuple:
        player, rng, choose = self.game.current_player, self.rng, self.choose
        if self.record_playouts:
            results = [self.game.playout_played(state, rng, choose) for state in states]
            values = [result_for(winner, player(state)) for (winner, _), state in zip(results, states)]
            return values, None, [played for _, played in results]
        playout = self.game.playout
        values = []
        for state in states:
            winner = playout(state, rng, choose)
            values.append(0.5 if winner is None else float(winner == player(state)))
        return values, None


class NetRolloutPolicy:
    """Epsilon-greedy moves of a flat-input policy network for playouts: a random legal
    move with probability epsilon, else the network's most probable legal move (or a
    sample from its policy with ``sample=True``). The same network moves for both
    players: every encoded state says who is to move.

    The most probable legal move is the legal move of highest score
    (``mctsfw.roles.policy_scores``: the logits where the net offers them), so greedy
    moves never pay for a softmax."""

    def __init__(self, game: Game, net: Any, epsilon: float = 0.0, sample: bool = False, seed: int | None = None):
        require_role(net, POLICY, "network rollouts")
        if net.input_kind != "flat":
            raise ValueError(f"network rollouts feed a network the flat encoding; the {net.name} net reads planes")
        self.game = game
        self.net = net
        self.scores = policy_scores(net)
        self.epsilon = float(epsilon)
        self.sample = bool(sample)
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)

    def __call__(self, state: State) -> Action:
        """One move (``choose`` for ``Game.playout``)."""
        if self.rng.random() < self.epsilon:
            return self.rng.choice(self.game.legal_actions(state))
        return int(self.net_moves(self.game.encode(state)[None, :], self.game.legal_mask(state)[None, :])[0])

    def choose_batch(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One move for each of a batch of encoded states ``x`` with legal masks ``mask``.
        Greedy, the network judges only the rows that do not explore (with epsilon 0.5, half
        the rows cost nothing); its moves and the random numbers drawn are the same as if it
        judged them all. Sampling draws its moves first, as it always has."""
        if self.epsilon <= 0:
            return self.net_moves(x, mask)
        if self.sample:
            actions = self.net_moves(x, mask)
            explore = self.np_rng.random(len(x)) < self.epsilon
        else:
            explore = self.np_rng.random(len(x)) < self.epsilon
            actions = np.zeros(len(x), dtype=np.int64)
            if not explore.all():
                actions[~explore] = self.net_moves(x[~explore], mask[~explore])
        if explore.any():
            noise = self.np_rng.random(mask[explore].shape) * mask[explore]
            actions[explore] = noise.argmax(axis=1)  # a uniformly random legal move
        return actions

    def net_moves(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The network's move for each row (no exploration)."""
        if self.sample:
            return self.pick(self.net.forward(x), mask)
        return best_legal(self.scores(x), mask)

    def pick(self, probs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """A move for each row: drawn from the legal part of ``probs`` with ``sample``, else
        the most probable legal one."""
        if not self.sample:
            return best_legal(probs, mask)
        return sample_actions(masked_policy(probs, mask), self.np_rng)


#: below any score a network gives (logits are far smaller), above float32's lowest
ILLEGAL_SCORE = np.float32(-1e30)


def best_legal(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The index of the highest score among the legal moves (``mask`` 1) of each row."""
    penalised = mask - 1.0  # 0 for a legal move, -1 for an illegal one
    penalised *= -ILLEGAL_SCORE
    penalised += scores
    return penalised.argmax(axis=1)


class NetRollouts(LeafEvaluator):
    """Playouts by a policy network (``NetRolloutPolicy``), batched in lock-step; priors
    from the network's policy when the tree policy reads them."""

    name = "net_rollouts"
    informed_priors = True
    draws_at_random = True
    batch_size = NET_BATCH

    def __init__(self, game: Game, net: Any, epsilon: float = 0.0, sample: bool = False, seed: int | None = None):
        super().__init__(game)
        self.policy = NetRolloutPolicy(game, net, epsilon=epsilon, sample=sample, seed=seed)
        self.net = net
        self.rng = random.Random(seed)

    def batch_for(self, search_games: float) -> int:
        """``NET_BATCH`` leaves a call, more in a bigger search: a 64th of its budget, up to
        ``ROLLOUT_BATCH_MOST`` (10,000 search games: 128). A lock-step playout costs a
        network call per move whatever the batch, so bigger batches run more search games
        a second (on 5x5 Hex with the shipped ANET, 0.39 of random rollouts' rate at 32,
        0.55 at 128), while the search keeps at least 64 rounds of selection, the leaves
        in flight (under virtual loss) at most 1/64 of it. A time-limited search, whose
        budget is not known, keeps ``NET_BATCH``."""
        if not math.isfinite(search_games):
            return self.batch_size
        return int(min(ROLLOUT_BATCH_MOST, max(self.batch_size, search_games // ROUNDS_AT_LEAST)))

    def evaluate(self, states: Sequence[State], with_priors: bool = False) -> tuple[list[float], np.ndarray | None]:
        game = self.game
        winners = game.playout_batch(states, self.rng, self.policy)
        values = [result_for(w, game.current_player(s)) for w, s in zip(winners, states)]
        if not with_priors:
            return values, None
        x = np.stack([game.encode(state) for state in states])
        masks = game.legal_masks(states)
        return values, masked_policy(self.net.forward(x), masks)


class NetValue(LeafEvaluator):
    """A policy-and-value network: priors from the policy head (illegal moves zeroed,
    renormalised), values from the value head, one call per batch of leaves."""

    name = "net_value"
    informed_priors = True
    batch_size = NET_BATCH

    def __init__(self, game: Game, net: Any, random_symmetry: bool = False, seed: Any = None,
                 mean_symmetry: bool = False):
        super().__init__(game)
        require_role(net, POLICY_VALUE, "value-head leaf evaluation")
        problems = symmetry_problems({"random_symmetry": random_symmetry, "mean_symmetry": mean_symmetry})
        if problems:
            raise ValueError(problems[0])
        self.net = net
        self.calls = 0
        self.states_evaluated = 0
        #: KataGo's: each state judged in one of the board's symmetries, drawn at random
        self.random_symmetry = bool(random_symmetry)
        #: AlphaGo's: each state judged in every symmetry of the board, the mean taken
        self.mean_symmetry = bool(mean_symmetry)
        self.rng = np.random.default_rng(seed)

    @property
    def draws_at_random(self) -> bool:
        return self.random_symmetry

    def judge(self, states: Sequence[State]) -> tuple[np.ndarray, np.ndarray]:
        """(values, masked priors) of ``states`` by one network call; with ``random_symmetry``
        each state is turned by a symmetry of the board drawn at random (``game.symmetries``)
        and its priors turned back; with ``mean_symmetry`` every turn of each state is
        judged (in the same call) and the values and the priors turned back are averaged."""
        x = self.net.encode_batch(states)
        masks = self.game.legal_masks(states)
        if self.mean_symmetry:
            return self.judge_every_symmetry(x, masks)
        moved = None
        if self.random_symmetry:
            x, moved = turned_at_random(self.game, x, self.rng)
        probs, values = self.net.evaluate(x)
        if moved is not None:  # the prior of entry j is that of the action moved[j] came from
            back = np.empty_like(probs)
            np.put_along_axis(back, moved, probs, axis=1)
            probs = back
        return np.asarray(values, dtype=np.float64), masked_policy(probs, masks)

    def judge_every_symmetry(self, x: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        index = np.arange(self.game.num_actions)
        turns = [self.game.symmetries(encoded, index) for encoded in x]
        counts = np.array([len(t) for t in turns])
        probs, values = self.net.evaluate(np.stack([turned for t in turns for turned, _ in t]))
        back = np.empty_like(probs)  # the prior of entry j is that of the action moved[j] came from
        np.put_along_axis(back, np.stack([moved for t in turns for _, moved in t]), probs, axis=1)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        values = np.add.reduceat(np.asarray(values, dtype=np.float64).reshape(-1), starts) / counts
        priors = np.add.reduceat(back, starts, axis=0) / counts[:, None]
        return values, masked_policy(priors, masks)

    def evaluate(self, states: Sequence[State], with_priors: bool = True) -> tuple[np.ndarray, np.ndarray]:
        self.calls += 1
        self.states_evaluated += len(states)
        return self.judge(states)

    @classmethod
    def evaluate_many(cls, evaluators: Sequence["NetValue"], batches: Sequence[Sequence[State]],
                      with_priors: bool = True) -> list[tuple[np.ndarray, np.ndarray]]:
        """One network call for all the batches of evaluators that share a network (the
        point of lock-step self-play: a big net runs one compiled call for the leaves of
        every game), split back per evaluator. ``calls`` counts one for each evaluator
        object that took part in a call (so a NetValue shared by the searches counts the
        network calls), ``states_evaluated`` its own states."""
        answers: list = [None] * len(evaluators)
        by_net: dict[int, list[int]] = {}
        for i, evaluator in enumerate(evaluators):
            by_net.setdefault(id(evaluator.net), []).append(i)
        for indices in by_net.values():
            states = [state for i in indices for state in batches[i]]
            values, priors = evaluators[indices[0]].judge(states)
            start = 0
            for i in indices:
                end = start + len(batches[i])
                answers[i] = (values[start:end], priors[start:end])
                evaluators[i].states_evaluated += end - start
                start = end
            for evaluator in {id(evaluators[i]): evaluators[i] for i in indices}.values():
                evaluator.calls += 1
        return answers


class MixedEvaluator(LeafEvaluator):
    """``weight * value + (1 - weight) * rollout``: the value of one evaluator (a value
    head) mixed with another's (rollouts); priors from the first."""

    name = "mixed"

    def __init__(self, value: LeafEvaluator, rollout: LeafEvaluator, weight: float):
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or not 0 <= weight <= 1:
            raise ValueError(f"the value weight (lambda) must be a number from 0 to 1, not {weight!r}")
        super().__init__(value.game)
        self.value, self.rollout, self.weight = value, rollout, float(weight)
        self.informed_priors = value.informed_priors
        self.batch_size = max(value.batch_size, rollout.batch_size)

    def batch_for(self, search_games: float) -> int:
        return max(self.value.batch_for(search_games), self.rollout.batch_for(search_games))

    @property
    def draws_at_random(self) -> bool:
        return self.value.draws_at_random or self.rollout.draws_at_random

    def evaluate(self, states: Sequence[State], with_priors: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        values, priors = self.value.evaluate(states, with_priors)
        played, _ = self.rollout.evaluate(states, False)
        w = self.weight
        return w * np.asarray(values, dtype=np.float64) + (1.0 - w) * np.asarray(played, dtype=np.float64), priors

    @classmethod
    def evaluate_many(cls, evaluators: Sequence["MixedEvaluator"], batches: Sequence[Sequence[State]],
                      with_priors: bool = False) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """The value parts answer together (one network call where they share a net); each
        search's rollouts stay its own, drawn from its own seeded generator."""
        valued = evaluate_together([e.value for e in evaluators], batches, with_priors)
        answers = []
        for evaluator, states, (values, priors) in zip(evaluators, batches, valued):
            played, _ = evaluator.rollout.evaluate(states, False)
            w = evaluator.weight
            answers.append((w * np.asarray(values, dtype=np.float64) + (1.0 - w) * np.asarray(played, dtype=np.float64),
                            priors))
        return answers


#: lambda, declared by each tree policy that searches with a value head (PUCT, Gumbel) and
#: read by whoever builds its evaluator (``value_evaluator``)
VALUE_WEIGHT = Setting("value_weight", 1.0, "lambda: leaf value = lambda * value head + (1 - lambda) * random playout",
                       low=0, high=1)
#: KataGo's random symmetry at inference, declared with lambda by the same tree policies
RANDOM_SYMMETRY = Setting("random_symmetry", False, "KataGo: the network judges each position turned by one of the "
                          "board's symmetries drawn at random (its priors turned back), so that no one orientation's "
                          "quirks steer the search")
#: AlphaGo's mean over the symmetries at inference, declared beside it
MEAN_SYMMETRY = Setting("mean_symmetry", False, "AlphaGo: the network judges each position in every symmetry of the "
                        "board and the search takes the mean of its values and priors: steadier judgements for as many "
                        "times the network's work as the board has symmetries (Connect Four 2, Hex 4, Gomoku and Go 8)")


def symmetry_problems(params: dict) -> list[str]:
    """A tree policy's ``random_symmetry`` and ``mean_symmetry`` together: refused."""
    if params.get("random_symmetry") and params.get("mean_symmetry"):
        return ["random_symmetry and mean_symmetry: choose one (one symmetry drawn at random, or the mean of them all)"]
    return []


def value_evaluator(game: Game, net: Any, value_weight: float = 1.0, seed: int | None = None,
                    value: NetValue | None = None, random_symmetry: bool = False,
                    playouts: str = "random", mean_symmetry: bool = False) -> LeafEvaluator:
    """The evaluator of a policy-and-value net: its value head, mixed with random
    rollouts (``playouts``: "random" or "tactical", as ``RandomRollouts``) when
    ``value_weight`` (lambda) < 1. ``value``: a ``NetValue`` of ``net`` shared with other
    searches (lock-step games), so that its ``calls`` count the network calls of them all."""
    if value is None:
        value = NetValue(game, net, random_symmetry, seed, mean_symmetry=mean_symmetry)
    elif value.net is not net:
        raise ValueError("a shared NetValue must judge with the same network")
    if value_weight == 1:
        return value
    return MixedEvaluator(value, RandomRollouts(game, seed=seed, playouts=playouts), value_weight)
