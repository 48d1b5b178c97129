"""The one way hexzero turns a distribution over actions into a move.

Search results (visit distributions), raw networks (their policies) and training all
pick moves here, so temperature means the same thing everywhere:

- temperature 0: the most probable action (the first of equals);
- temperature T > 0: an action drawn with probability ~ p ** (1 / T), computed in log
  space, so a tiny T gives the most probable action instead of NaNs;
- anything else (negative, NaN, infinite) is refused by ``temperature_problem``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hexzero.mctsfw.game import Action
from hexzero.mctsfw.jit import njit


def temperature_problem(value: Any) -> str | None:
    """None for a usable temperature (a finite number >= 0), else the reason."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        return f"temperature must be a number, not {value!r}"
    if not math.isfinite(value) or value < 0:
        return f"temperature must be a finite number >= 0 (0 = the most probable move), not {value!r}"
    return None


def check_temperature(value: Any) -> float:
    """``value`` as a float, or ValueError saying why it is no temperature."""
    problem = temperature_problem(value)
    if problem:
        raise ValueError(problem)
    return float(value)


def masked_policy(probs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Illegal actions zeroed, the rest renormalised (uniform over legal ones if all were ~0)."""
    p = probs * mask
    total = p.sum(axis=-1, keepdims=True)
    if (total <= 1e-12).any():  # (rare: a whole batch pays for the uniform rows only then)
        p = np.where(total > 1e-12, p, mask)
        total = p.sum(axis=-1, keepdims=True)
    return p / np.maximum(total, 1e-12)


def tempered(distribution: np.ndarray, temperature: float) -> np.ndarray:
    """Unnormalised weights ~ distribution ** (1 / temperature), the largest 1; zeros stay 0."""
    p = np.asarray(distribution, dtype=np.float64)
    out = np.empty_like(p)
    _tempered(p, float(temperature), out)
    return out


@njit(cache=True)
def _tempered(p, temperature, out):
    """``tempered`` into ``out``: at temperature 1 the weights over the largest, else in
    log space; all zero: every action alike."""
    top = -np.inf
    if temperature == 1.0:
        for i in range(p.shape[0]):
            top = max(top, p[i])
        for i in range(p.shape[0]):
            out[i] = p[i] / top if top > 0 else 1.0
        return
    for i in range(p.shape[0]):
        out[i] = np.log(p[i]) if p[i] > 0 else -np.inf
        top = max(top, out[i])
    for i in range(p.shape[0]):
        out[i] = np.exp((out[i] - top) / temperature) if np.isfinite(top) else 1.0


@njit(cache=True)
def _drawn(p, temperature, u):
    """The index ``sample_action`` draws with the uniform ``u``: the first whose running
    sum of tempered weights passes ``u`` times their total (never a zero-weight one; the
    last where the top end's rounding passes them all)."""
    weights = np.empty_like(p)
    _tempered(p, temperature, weights)
    for i in range(1, weights.shape[0]):
        weights[i] += weights[i - 1]
    target = u * weights[-1]
    for i in range(weights.shape[0]):
        if weights[i] > target:
            return i
    return weights.shape[0] - 1


def sample_action(distribution: np.ndarray, temperature: float, rng: np.random.Generator) -> Action:
    """An action from ``distribution`` (non-negative weights over all actions; zero-weight
    actions are never drawn): the most probable at temperature 0, else drawn with
    probability ~ weight ** (1 / temperature). One ``rng.random()`` a draw; the rest
    compiled (``_drawn``), where numpy's calls on a small array cost more than the work."""
    temperature = check_temperature(temperature)
    if temperature == 0:
        return int(np.argmax(distribution))
    return int(_drawn(np.asarray(distribution, dtype=np.float64), temperature, rng.random()))


def sample_actions(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of a batch of distributions ``(B, A)`` (temperature 1), vectorised."""
    cumulative = probs.cumsum(axis=1)
    draws = rng.random((len(probs), 1)) * cumulative[:, -1:]
    return np.minimum((cumulative <= draws).sum(axis=1), probs.shape[1] - 1)
