"""A policy-and-value network as the leaf evaluator of AlphaZero-style search."""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from mctsfw.game import Game, State
from mctsfw.rollout import masked_policy


class PolicyValueNet(Protocol):
    def encode_batch(self, states: Sequence[State]) -> np.ndarray: ...

    def evaluate(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(probabilities over all actions (B, A), win probability of the player to move (B,))"""
        ...


class NetLeafEvaluator:
    """Priors (the policy head, illegal moves zeroed and renormalised) and values (the
    value head) for a batch of leaf states, in one network call."""

    def __init__(self, game: Game, net: PolicyValueNet):
        self.game = game
        self.net = net
        self.calls = 0
        self.states_evaluated = 0

    def evaluate(self, states: Sequence[State]) -> tuple[np.ndarray, np.ndarray]:
        probs, values = self.net.evaluate(self.net.encode_batch(states))
        masks = np.stack([self.game.legal_mask(state) for state in states])
        self.calls += 1
        self.states_evaluated += len(states)
        return masked_policy(probs, masks), values
