"""The roles a network plays, declared by the net classes and asked for by the core.

A net class lists its roles in ``roles``; trainers, actors and leaf evaluators ask for
the role they need (``require_role``) instead of sniffing for methods, and config
validation asks the same question before anything is written.

- ``"policy"``: a policy over all actions. ``encode_batch(states) -> x``,
  ``forward(x) -> probs (B, num_actions)``, ``fit(x, pi, z=None, batch_size, epochs)``
  (returning the last epoch's ``loss`` and the optimizer's ``learning_rate``, and more),
  ``save(path)``, and the class methods ``load(path, game)`` and ``can_load(path)``;
  ``input_kind`` says whether it reads the flat encoding (``"flat"``) or planes.
  Optional: ``scores(x) -> (B, num_actions)``, numbers whose row-wise order is that of
  ``forward(x)`` (the logits, before the softmax): greedy network rollouts need only
  the most probable legal move, and the softmax costs a fifth of a small MLP's pass.
  The array may be a buffer the net reuses on its next call. Ask ``policy_scores(net)``
  for it; a net without ``scores`` is ordered by ``forward``. Optional too:
  ``set_learning_rate(rate)``, which a self-play run started from a saved network
  (``selfplay.init_net``) calls with the run's ``[nets.<net>] learning_rate``; a net
  without it trains on at the rate saved with it.
- ``"policy_value"``: a policy and a value. All of the above, plus
  ``evaluate(x) -> (probs (B, num_actions), values (B,))`` with the value the win
  probability of the player to move, in [0, 1]; ``fit`` needs the value targets ``z``.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from hexzero.mctsfw.game import State

POLICY = "policy"
POLICY_VALUE = "policy_value"

#: role -> what a net of that role can do, in words (for error messages)
ROLE_NAMES = {POLICY: "a policy network", POLICY_VALUE: "a policy-and-value network"}
#: input kind -> what it is, in words (for error messages)
INPUT_NAMES = {"flat": "the flat encoding (game.encode)", "planes": "planes (game.encode_planes)"}


@runtime_checkable
class PolicyNet(Protocol):
    name: str
    roles: Sequence[str]
    input_kind: str  # "flat" (game.encode) or "planes" (game.encode_planes)

    def encode_batch(self, states: Sequence[State]) -> np.ndarray: ...

    def forward(self, x: np.ndarray) -> np.ndarray: ...

    def fit(self, x: np.ndarray, pi: np.ndarray, z: np.ndarray | None = None, batch_size: int = 64,
            epochs: int = 1) -> dict[str, float]: ...

    def save(self, path: Any) -> Any: ...


@runtime_checkable
class PolicyValueNet(PolicyNet, Protocol):
    def evaluate(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


class RoleError(ValueError):
    """A network asked to play a role it does not declare."""


def roles_of(net: Any) -> tuple[str, ...]:
    """The roles a net (class or instance) declares."""
    return tuple(getattr(net, "roles", ()))


def has_role(net: Any, role: str) -> bool:
    return role in roles_of(net)


def role_problem(net: Any, role: str, purpose: str) -> str | None:
    """None if ``net`` declares ``role``, else one line saying why it cannot serve ``purpose``."""
    if role not in ROLE_NAMES:
        raise ValueError(f"unknown net role {role!r}; roles: {', '.join(ROLE_NAMES)}")
    if has_role(net, role):
        return None
    name = getattr(net, "name", None) or type(net).__name__
    declared = ", ".join(ROLE_NAMES.get(r, r) for r in roles_of(net)) or "no role"
    return f"{purpose} needs {ROLE_NAMES[role]}; the {name} net is {declared}"


def require_role(net: Any, role: str, purpose: str) -> None:
    """Raise ``RoleError`` unless ``net`` declares ``role``."""
    problem = role_problem(net, role, purpose)
    if problem:
        raise RoleError(problem)


def policy_scores(net: Any) -> Callable[[np.ndarray], np.ndarray]:
    """The cheapest function of a policy net whose row-wise order is that of its
    probabilities: ``net.scores`` (the optional method of the policy role) when the net
    offers it, else ``net.forward``."""
    scores = getattr(net, "scores", None)
    return scores if callable(scores) else net.forward


def input_problem(net: Any, kind: str, purpose: str) -> str | None:
    """None if ``net`` reads the ``kind`` of input (``"flat"`` or ``"planes"``), else one
    line saying why it cannot serve ``purpose`` (rollouts, for one, feed the flat encoding)."""
    declared = getattr(net, "input_kind", None)
    if declared == kind:
        return None
    name = getattr(net, "name", None) or type(net).__name__
    return f"{purpose} feeds the network {INPUT_NAMES.get(kind, kind)}; the {name} net reads {INPUT_NAMES.get(declared, declared)}"

