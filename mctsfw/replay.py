"""The replay buffer: (encoded state, visit distribution) pairs from actual games."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mctsfw.checkpoints import atomic_path


class ReplayBuffer:
    """A bounded ring buffer: when full, the newest case replaces the oldest."""

    def __init__(self, capacity: int, input_size: int, num_actions: int):
        self.capacity = int(capacity)
        self.x = np.zeros((self.capacity, input_size), dtype=np.float32)
        self.y = np.zeros((self.capacity, num_actions), dtype=np.float32)
        self.size = 0
        self.next = 0  # where the next case goes

    def __len__(self) -> int:
        return self.size

    def add(self, x: np.ndarray, distribution: np.ndarray) -> None:
        self.x[self.next] = x
        self.y[self.next] = distribution
        self.next = (self.next + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """A minibatch of up to ``count`` distinct cases, chosen uniformly."""
        chosen = rng.choice(self.size, size=min(count, self.size), replace=False)
        return self.x[chosen], self.y[chosen]

    def save(self, path: str | Path) -> None:
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, x=self.x[: self.size], y=self.y[: self.size], next=self.next, capacity=self.capacity)

    @classmethod
    def load(cls, path: str | Path) -> "ReplayBuffer":
        with np.load(path) as data:
            x, y = data["x"], data["y"]
            buffer = cls(int(data["capacity"]), x.shape[1], y.shape[1])
            buffer.x[: len(x)] = x
            buffer.y[: len(y)] = y
            buffer.size = len(x)
            buffer.next = int(data["next"])
        return buffer
