"""The replay buffer: (encoded state, visit distribution[, value target]) from actual games."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mctsfw.checkpoints import atomic_path


def game_result(winner: int | None, player: int) -> float:
    """The value target of a case: 1 for a win of ``player``, 0.5 for a draw, 0 for a loss."""
    return 0.5 if winner is None else float(winner == player)


class ReplayBuffer:
    """A bounded ring buffer: when full, the newest case replaces the oldest.

    ``input_shape`` is an int for flat encodings or a tuple for planes; buffers made
    ``with_values`` also keep a value target per case (self-play).
    """

    def __init__(self, capacity: int, input_shape: int | tuple[int, ...], num_actions: int, with_values: bool = False):
        self.capacity = int(capacity)
        shape = (input_shape,) if isinstance(input_shape, (int, np.integer)) else tuple(input_shape)
        self.x = np.zeros((self.capacity, *shape), dtype=np.float32)
        self.y = np.zeros((self.capacity, num_actions), dtype=np.float32)
        self.z = np.zeros(self.capacity, dtype=np.float32) if with_values else None
        self.size = 0
        self.next = 0  # where the next case goes

    def __len__(self) -> int:
        return self.size

    def add(self, x: np.ndarray, distribution: np.ndarray, value: float | None = None) -> None:
        self.x[self.next] = x
        self.y[self.next] = distribution
        if self.z is not None:
            self.z[self.next] = value
        self.next = (self.next + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """A minibatch ``(x, distributions, values)`` of up to ``count`` distinct cases,
        chosen uniformly; ``values`` is None for a buffer kept without them."""
        chosen = rng.choice(self.size, size=min(count, self.size), replace=False)
        return self.x[chosen], self.y[chosen], None if self.z is None else self.z[chosen]

    def cases(self, average_positions: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Every case (x, distribution, value); with ``average_positions`` each position that
        occurs more than once becomes one case with the mean of its targets."""
        x, y = self.x[: self.size], self.y[: self.size]
        z = None if self.z is None else self.z[: self.size]
        if not average_positions or not self.size:
            return x, y, z
        _, first, group = np.unique(x.reshape(self.size, -1), axis=0, return_index=True, return_inverse=True)
        group = group.reshape(-1)
        counts = np.bincount(group).astype(np.float32)
        y_mean = np.zeros((len(first), y.shape[1]), dtype=np.float32)
        np.add.at(y_mean, group, y)
        y_mean /= counts[:, None]
        z_mean = None
        if z is not None:
            z_mean = (np.bincount(group, weights=z) / counts).astype(np.float32)
        return x[first], y_mean, z_mean

    def save(self, path: str | Path) -> None:
        arrays = {"x": self.x[: self.size], "y": self.y[: self.size], "next": self.next, "capacity": self.capacity}
        if self.z is not None:
            arrays["z"] = self.z[: self.size]
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, **arrays)

    @classmethod
    def load(cls, path: str | Path) -> "ReplayBuffer":
        with np.load(path) as data:
            x, y = data["x"], data["y"]
            buffer = cls(int(data["capacity"]), x.shape[1:], y.shape[1], with_values="z" in data)
            buffer.x[: len(x)] = x
            buffer.y[: len(y)] = y
            if buffer.z is not None:
                buffer.z[: len(x)] = data["z"]
            buffer.size = len(x)
            buffer.next = int(data["next"])
        return buffer
