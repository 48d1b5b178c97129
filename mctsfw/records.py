"""Games stored as move sequences (their "ID") and, for training, their per-move targets.

A position is never stored as a board or an encoding: it is the game's moves up to it,
and ``Game.state_after`` (or stepping ``next_state`` along the game) rebuilds it. So a
learning game costs a few bytes a move, whatever the board and the network's planes:

- :class:`RecordedGame`: a game played for training: who opened, the moves, the winner,
  and for every position (the one before each move) the search's visit distribution,
  kept sparse (the visited actions and their visit counts), and the value target. The
  replay buffer (``mctsfw.replay``) keeps these and rebuilds encodings, symmetries and
  targets when it produces training data.
- game lines: one played game as a JSON object (``cli.py play --record FILE`` writes one
  line a game; runs' ``metrics.jsonl`` lines carry the same ``"moves"`` list)::

      {"game": "hex", "params": {"size": 5}, "starting_player": 1,
       "moves": [12, 7, 13], "winner": 2}

  ``winner`` is 1, 2 or null (a draw, or a game cut short); ``moves`` are action numbers
  (``Game.action_to_text`` names them); ``mctsfw.make_game(game, **params)`` and
  ``state_after(moves, starting_player)`` give the final position back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from mctsfw.game import Action, Game, State


def action_dtype(num_actions: int) -> np.dtype:
    """The smallest unsigned integer type that holds every action number (and the count)."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if num_actions <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


def visit_counts(root, num_actions: int) -> np.ndarray:
    """The visits of each action at a search's root (the counts behind
    ``MCTS.visit_distribution``; the root's children are the nodes tree policies read)."""
    counts = np.zeros(num_actions, dtype=np.int64)
    for child in root.children:
        counts[child.action] = child.visits
    return counts


def shares(counts: np.ndarray) -> np.ndarray:
    """Visit counts as a float32 probability vector, exactly as ``MCTS.visit_distribution``
    computes it (float32 counts over their float32 sum), so a rebuilt target is bit for bit
    the one the search gave."""
    counts = np.asarray(counts, dtype=np.float32)
    total = counts.sum()
    return counts / total if total else counts


class RecordedGame:
    """One training game: ``starting_player``, ``moves``, ``winner`` (None: a draw), and per
    position i (the one before ``moves[i]``) its visit counts, sparse (``policy_actions``
    and ``policy_visits`` from ``policy_offsets[i]`` to ``policy_offsets[i + 1]``), and the
    value target ``values[i]`` for the player to move there.

    Build one with :meth:`from_targets`. The integer arrays use the smallest type that
    holds them, so a Connect Four position whose 7 moves were visited takes
    1 + 7 * (1 + 2) + 4 bytes (and an offset); its encoded cases took 2 * (85 + 7 + 1) * 4.
    """

    __slots__ = ("starting_player", "moves", "winner", "policy_actions", "policy_visits", "policy_offsets", "values")
    ARRAYS = ("moves", "policy_actions", "policy_visits", "policy_offsets", "values")

    def __init__(self, starting_player: int, moves: np.ndarray, winner: int | None, policy_actions: np.ndarray,
                 policy_visits: np.ndarray, policy_offsets: np.ndarray, values: np.ndarray):
        if not (len(values) == len(policy_offsets) - 1 == len(moves)):
            raise ValueError(f"a recorded game needs one target per move: {len(moves)} moves, "
                             f"{len(policy_offsets) - 1} visit counts, {len(values)} values")
        self.starting_player, self.winner = int(starting_player), None if winner is None else int(winner)
        self.moves, self.values = moves, values
        self.policy_actions, self.policy_visits, self.policy_offsets = policy_actions, policy_visits, policy_offsets

    @classmethod
    def from_targets(cls, num_actions: int, starting_player: int, moves: Sequence[Action],
                     counts: Sequence[np.ndarray], values: Sequence[float], winner: int | None) -> "RecordedGame":
        """A game from its moves, each position's visit counts over all actions
        (:func:`visit_counts`; the nonzero ones are kept) and each position's value target."""
        dtype = action_dtype(num_actions)
        actions, visits, offsets = [], [], [0]
        for position in counts:
            position = np.asarray(position)
            nonzero = np.flatnonzero(position)
            actions.append(nonzero.astype(dtype))
            visits.append(position[nonzero])
            offsets.append(offsets[-1] + len(nonzero))
        visits = np.concatenate(visits) if visits else np.zeros(0, np.int64)
        return cls(
            starting_player, np.asarray(moves, dtype=dtype), winner,
            np.concatenate(actions) if actions else np.zeros(0, dtype),
            visits.astype(np.min_scalar_type(int(visits.max()) if len(visits) else 0)),
            np.asarray(offsets, dtype=np.min_scalar_type(offsets[-1])), np.asarray(values, dtype=np.float32),
        )

    def __len__(self) -> int:
        """The positions with targets: one per move."""
        return len(self.moves)

    def counts(self, position: int, num_actions: int) -> np.ndarray:
        """The visit counts of ``position`` over all actions."""
        dense = np.zeros(num_actions, dtype=np.int64)
        start, end = self.policy_offsets[position], self.policy_offsets[position + 1]
        dense[self.policy_actions[start:end]] = self.policy_visits[start:end]
        return dense

    def distribution(self, position: int, num_actions: int) -> np.ndarray:
        """The visit distribution of ``position``: what ``MCTS.visit_distribution`` gave."""
        return shares(self.counts(position, num_actions))

    def states(self, game: Game, upto: int | None = None) -> Iterator[State]:
        """The positions 0, 1, ... ``upto - 1`` (all of them by default), replayed along the moves."""
        state = game.initial_state(self.starting_player)
        for action in self.moves[: len(self) if upto is None else upto]:
            yield state
            state = game.next_state(state, int(action))

    def final_state(self, game: Game) -> State:
        return game.state_after([int(a) for a in self.moves], self.starting_player)

    def nbytes(self) -> int:
        """The bytes of its arrays, and one each for who opened and who won."""
        return sum(getattr(self, name).nbytes for name in self.ARRAYS) + 2

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecordedGame):
            return NotImplemented
        return (self.starting_player, self.winner) == (other.starting_player, other.winner) and all(
            np.array_equal(getattr(self, name), getattr(other, name)) for name in self.ARRAYS)

    def __repr__(self) -> str:
        return f"RecordedGame(starting_player={self.starting_player}, moves={self.moves.tolist()}, winner={self.winner})"


def pack_records(records: Sequence[RecordedGame], num_actions: int) -> dict[str, np.ndarray]:
    """Games as flat integer and float arrays with offsets (an npz file's content, no pickles)."""
    dtype = action_dtype(num_actions)
    lengths = np.array([len(r) for r in records], dtype=np.int64)
    policy_counts = np.array([len(r.policy_actions) for r in records], dtype=np.int64)
    visits = np.concatenate([r.policy_visits for r in records]) if records else np.zeros(0, np.uint8)
    return {
        "starting_players": np.array([r.starting_player for r in records], dtype=np.uint8),
        "winners": np.array([r.winner or 0 for r in records], dtype=np.uint8),  # 0: a draw
        "game_offsets": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        "moves": np.concatenate([r.moves for r in records]).astype(dtype) if records else np.zeros(0, dtype),
        "values": np.concatenate([r.values for r in records]).astype(np.float32) if records else np.zeros(0, np.float32),
        # the visited actions of each position; their running sum gives each game's policy_offsets back
        "policy_sizes": np.concatenate([np.diff(r.policy_offsets.astype(np.int64)) for r in records]).astype(dtype)
        if records else np.zeros(0, dtype),
        "policy_game_offsets": np.concatenate([[0], np.cumsum(policy_counts)]).astype(np.int64),
        "policy_actions": np.concatenate([r.policy_actions for r in records]).astype(dtype)
        if records else np.zeros(0, dtype),
        "policy_visits": visits.astype(np.min_scalar_type(int(visits.max()) if len(visits) else 0)),
    }


def unpack_records(arrays: Any, num_actions: int) -> list[RecordedGame]:
    """The games :func:`pack_records` packed (``arrays``: a mapping such as an open npz file)."""
    dtype = action_dtype(num_actions)
    game_offsets, policy_offsets = arrays["game_offsets"], arrays["policy_game_offsets"]
    moves, values, sizes = arrays["moves"].astype(dtype), arrays["values"], arrays["policy_sizes"]
    actions, visits = arrays["policy_actions"].astype(dtype), arrays["policy_visits"]
    records = []
    for i, (starter, winner) in enumerate(zip(arrays["starting_players"], arrays["winners"])):
        a, b = int(game_offsets[i]), int(game_offsets[i + 1])
        p, q = int(policy_offsets[i]), int(policy_offsets[i + 1])
        offsets = np.concatenate([[0], np.cumsum(sizes[a:b], dtype=np.int64)])
        game_visits = visits[p:q]
        records.append(RecordedGame(
            int(starter), moves[a:b].copy(), int(winner) or None, actions[p:q].copy(),
            game_visits.astype(np.min_scalar_type(int(game_visits.max()) if len(game_visits) else 0)),
            offsets.astype(np.min_scalar_type(int(offsets[-1]))), values[a:b].copy()))
    return records


# ---- played games as JSON lines -----------------------------------------------------------------
def game_line(game: Game, starting_player: int, moves: Sequence[Action], winner: int | None) -> dict[str, Any]:
    """One played game as a JSON-ready object: the game's name and parameters, who opened,
    the moves and the winner (None: a draw or an unfinished game)."""
    return {"game": game.name, "params": game.params(), "starting_player": int(starting_player),
            "moves": [int(a) for a in moves], "winner": None if winner is None else int(winner)}


def append_game_line(path: str | Path, line: dict[str, Any]) -> None:
    with Path(path).open("a") as f:
        f.write(json.dumps(line) + "\n")


def read_game_lines(path: str | Path) -> list[dict[str, Any]]:
    """The games of a JSON-lines file written with :func:`append_game_line` (``play --record``)."""
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
