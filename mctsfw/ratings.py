"""Bradley-Terry ratings on the Elo scale, with confidence intervals, from game results.

Win rates depend on who played whom; a rating puts every player of a pool on one scale.
The Bradley-Terry model says player i scores against player j with probability

    P(i beats j) = 1 / (1 + 10 ** ((r_j - r_i) / 400))

(the Elo scale: 400 points more is 10 to 1 odds, 200 points about 76%). ``fit_ratings``
finds the ratings of maximum likelihood for the observed games, a draw counting as half a
win for each side. Ratings are relative: one player, the **anchor**, is fixed at 0 —
random play when it is in the pool (``RANDOM_LABEL``), else the player the caller names
(TOPP: the first, the untrained network).

**Confidence intervals** are 95% Wald intervals from the Fisher information at the
maximum: the inverse of the negative Hessian of the log-likelihood (over the players but
the anchor) is the covariance of the ratings; each rating is shown as r ± 1.96 standard
errors, relative to the anchor (whose own interval is 0 wide), and a difference
r_i - r_j has variance C_ii + C_jj - 2 C_ij. They shrink as 1/sqrt(games).

**Unbeaten players.** A player that won (or lost) every game has no finite maximum
(its rating runs off to infinity). As BayesElo does, each pair of players that met gets
``prior_draws`` virtual drawn games (default 1: half a point each way), which keeps every
rating finite and pulls ratings from few games towards their opponents' a little; with
hundreds of games a pair its effect is a few Elo. ``prior_draws=0`` gives the plain
maximum-likelihood estimate, and refuses results that have none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

#: the label of random play in a pool: the anchor (rating 0) when present
RANDOM_LABEL = "random"
#: virtual drawn games added to each pair that met (see the module's docstring)
PRIOR_DRAWS = 1.0
#: the two-sided 95% quantile of the normal distribution
Z95 = 1.959963984540054
#: Elo points per natural-log unit of odds
ELO_PER_NAT = 400.0 / math.log(10.0)
METHOD = ("Bradley-Terry maximum likelihood on the Elo scale (400 log10 odds), draws half a win each way, "
          "{prior} virtual draw(s) per pair that met; 95% Wald intervals from the Fisher information")


@dataclass
class Ratings:
    """The ratings of a pool: ``elo[i]`` of ``labels[i]``, relative to ``anchor`` (0),
    with their covariance (Elo squared) for intervals and differences."""

    labels: list[str]
    elo: np.ndarray
    covariance: np.ndarray
    anchor: str
    games: np.ndarray  # games[i][j]: real games between i and j
    prior_draws: float

    def index(self, label: str) -> int:
        return self.labels.index(label)

    def se(self, i: int) -> float:
        """The standard error of rating ``i`` (relative to the anchor)."""
        return math.sqrt(max(self.covariance[i, i], 0.0))

    def interval(self, i: int) -> tuple[float, float]:
        """The 95% interval of rating ``i``."""
        half = Z95 * self.se(i)
        return float(self.elo[i] - half), float(self.elo[i] + half)

    def difference(self, i: int, j: int) -> dict[str, float]:
        """Rating ``i`` less rating ``j``, with its standard error and 95% interval."""
        c = self.covariance
        se = math.sqrt(max(c[i, i] + c[j, j] - 2 * c[i, j], 0.0))
        d = float(self.elo[i] - self.elo[j])
        return {"elo": d, "se": se, "low": d - Z95 * se, "high": d + Z95 * se}

    @property
    def method(self) -> str:
        return METHOD.format(prior=f"{self.prior_draws:g}")

    def as_dict(self) -> dict[str, Any]:
        """For JSON: per label its rating, standard error, 95% interval and games played."""
        table = {}
        for i, label in enumerate(self.labels):
            low, high = self.interval(i)
            table[label] = {"elo": round(float(self.elo[i]), 1), "se": round(self.se(i), 1),
                            "low": round(low, 1), "high": round(high, 1), "games": int(self.games[i].sum())}
        return {"anchor": self.anchor, "method": self.method, "ratings": table}

    def table(self) -> str:
        """The ratings, best first, as a small text table."""
        width = max([6, *map(len, self.labels)])
        lines = [f"{'player':<{width}}  {'Elo':>7}  {'95% interval':>17}  {'games':>5}"]
        for i in sorted(range(len(self.labels)), key=lambda k: -self.elo[k]):
            low, high = self.interval(i)
            span = "(anchor)" if self.labels[i] == self.anchor else f"{low:+.0f} to {high:+.0f}"
            lines.append(f"{self.labels[i]:<{width}}  {self.elo[i]:>+7.0f}  {span:>17}  {int(self.games[i].sum()):>5}")
        return "\n".join(lines)


def fit_ratings(labels: Sequence[str], wins: Sequence[Sequence[float]], draws: Sequence[Sequence[float]] | None = None,
                anchor: str | None = None, prior_draws: float = PRIOR_DRAWS) -> Ratings:
    """Bradley-Terry ratings of ``labels`` from ``wins[i][j]`` (games i won against j) and
    ``draws[i][j]`` (games drawn between them; symmetric, None: no draws).

    ``anchor``: the player rated 0; None: random play (``RANDOM_LABEL``) when in the pool,
    else the first player. ``ValueError`` when the results do not rate everyone against
    everyone (a player or group that never met the others), or, with ``prior_draws=0``,
    when someone won or lost all its games (no finite maximum)."""
    labels = list(labels)
    k = len(labels)
    if k < 2:
        raise ValueError(f"ratings need at least 2 players, not {k}")
    if len(set(labels)) < k:
        raise ValueError("player labels must be unique")
    w = np.asarray(wins, dtype=float)
    d = np.zeros((k, k)) if draws is None else np.asarray(draws, dtype=float)
    if w.shape != (k, k) or d.shape != (k, k):
        raise ValueError(f"wins and draws must be {k} x {k} matrices")
    if (w < 0).any() or (d < 0).any() or not np.allclose(d, d.T):
        raise ValueError("wins must be >= 0, and draws >= 0 and symmetric")
    if prior_draws < 0:
        raise ValueError(f"prior_draws must be >= 0, not {prior_draws}")
    if anchor is None:
        anchor = RANDOM_LABEL if RANDOM_LABEL in labels else labels[0]
    if anchor not in labels:
        raise ValueError(f"the anchor {anchor!r} is not one of the players")
    np.fill_diagonal(w, 0)
    np.fill_diagonal(d, 0)
    games = w + w.T + d
    met = games > 0
    _check_connected(labels, met)
    # points scored and games played, each pair that met with its virtual draws
    scores = w + 0.5 * d + 0.5 * prior_draws * met
    n = games + prior_draws * met
    a = labels.index(anchor)
    free = [i for i in range(k) if i != a]
    theta = np.zeros(k)

    def log_likelihood(t: np.ndarray) -> float:
        diff = t[:, None] - t[None, :]
        return float(-(scores * np.logaddexp(0.0, -diff)).sum())

    current = log_likelihood(theta)
    for _ in range(200):
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        gradient = (scores - n * p).sum(axis=1)
        info = _information(n * p * (1 - p))  # the negative Hessian
        step = np.zeros(k)
        try:
            step[free] = np.linalg.solve(info[np.ix_(free, free)], gradient[free])
        except np.linalg.LinAlgError:  # no information left: odds so long that p (1 - p) is 0
            raise ValueError(_unbeaten(labels, w, d)) from None
        size = 1.0
        while True:  # Newton's step, halved until the likelihood does not fall (it is concave)
            candidate = theta + size * step
            value = log_likelihood(candidate)
            if value >= current - 1e-12 or size < 1e-6:
                break
            size /= 2
        theta, current = candidate, value
        if np.abs(theta).max() > 40:  # odds of e^40: a rating running off to infinity
            raise ValueError(_unbeaten(labels, w, d))
        if np.abs(size * step).max() < 1e-10:
            break
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    covariance = np.zeros((k, k))
    covariance[np.ix_(free, free)] = np.linalg.inv(_information(n * p * (1 - p))[np.ix_(free, free)])
    return Ratings(labels, theta * ELO_PER_NAT, covariance * ELO_PER_NAT**2, anchor, games, float(prior_draws))


def two_player_rating(wins: float, losses: float, draws: float = 0.0, prior_draws: float = PRIOR_DRAWS) -> dict[str, float]:
    """A's rating less B's, from A's wins, losses and draws against B: the difference with
    its standard error and 95% interval (``Ratings.difference``)."""
    ratings = fit_ratings(["A", "B"], [[0, wins], [losses, 0]], [[0, draws], [draws, 0]], anchor="B",
                          prior_draws=prior_draws)
    return ratings.difference(0, 1)


def format_difference(difference: dict[str, float]) -> str:
    """``+120 Elo (95% interval +40 to +210)``."""
    return f"{difference['elo']:+.0f} Elo (95% interval {difference['low']:+.0f} to {difference['high']:+.0f})"


def _information(weights: np.ndarray) -> np.ndarray:
    """The Fisher information of the log-odds from the pairwise weights n p (1 - p)."""
    info = -weights.copy()
    np.fill_diagonal(info, weights.sum(axis=1))
    return info


def _check_connected(labels: list[str], met: np.ndarray) -> None:
    seen, todo = {0}, [0]
    while todo:
        i = todo.pop()
        for j in np.flatnonzero(met[i]):
            if int(j) not in seen:
                seen.add(int(j))
                todo.append(int(j))
    if len(seen) < len(labels):
        apart = [labels[i] for i in range(len(labels)) if i not in seen]
        raise ValueError(f"the results do not connect {', '.join(apart)} with {labels[0]}: no games link them, "
                         "so their ratings cannot be compared")


def _unbeaten(labels: list[str], w: np.ndarray, d: np.ndarray) -> str:
    points = w + 0.5 * d
    extreme = [labels[i] for i in range(len(labels))
               if points[i].sum() == 0 or points[:, i].sum() == 0]
    who = ", ".join(extreme) or "some players"
    return (f"{who}: won or lost every game, so the maximum-likelihood rating is infinite; "
            "use prior_draws > 0 (virtual draws) to rate them")
