"""Default (rollout) policies driven by a policy network, for any game.

A policy network here is anything with ``forward(x) -> probabilities`` taking a batch
of encoded states ``(B, d)`` and returning ``(B, num_actions)`` (the ANET's numpy fast
path). The same network moves for both players, because every encoded state says who
is to move.
"""

from __future__ import annotations

import random
from typing import Protocol

import numpy as np

from mctsfw.game import Action, Game, State
from mctsfw.sampling import masked_policy


class PolicyNet(Protocol):
    def forward(self, x: np.ndarray) -> np.ndarray: ...

    # optional: ``scores(x)``, any values ordered like ``forward``'s (logits), for greedy moves


class NetRolloutPolicy:
    """Epsilon-greedy rollouts: a random legal move with probability epsilon, else the
    network's most probable legal move (or a sample from it with ``sample=True``)."""

    def __init__(self, game: Game, net: PolicyNet, epsilon: float = 0.1, sample: bool = False, seed: int | None = None):
        if getattr(net, "input_kind", "flat") != "flat":
            raise ValueError(f"rollouts feed a network the flat encoding; {type(net).__name__} reads planes")
        self.game = game
        self.net = net
        self.epsilon = float(epsilon)
        self.sample = sample
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)

    def __call__(self, state: State) -> Action:
        """One move (``choose`` for ``Game.playout``)."""
        if self.rng.random() < self.epsilon:
            return self.rng.choice(self.game.legal_actions(state))
        probs = self.net.forward(self.game.encode(state)[None, :])[0]
        return int(self.pick(probs[None, :], self.game.legal_mask(state)[None, :])[0])

    def choose_batch(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One move for each of a batch of encoded states ``x`` with legal masks ``mask``."""
        scores = getattr(self.net, "scores", None)
        if scores is not None and not self.sample:  # argmax needs no softmax
            actions = np.where(mask > 0, scores(x), -np.inf).argmax(axis=1)
        else:
            actions = self.pick(self.net.forward(x), mask)
        explore = self.np_rng.random(len(x)) < self.epsilon
        if explore.any():
            noise = self.np_rng.random(mask[explore].shape) * mask[explore]
            actions[explore] = noise.argmax(axis=1)  # a uniformly random legal move
        return actions

    def pick(self, probs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.sample:
            p = masked_policy(probs, mask)
            cumulative = p.cumsum(axis=1)
            draws = self.np_rng.random((len(p), 1)) * cumulative[:, -1:]
            return np.minimum((cumulative < draws).sum(axis=1), p.shape[1] - 1)
        return np.where(mask > 0, probs, -1.0).argmax(axis=1)
