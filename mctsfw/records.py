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

from hexzero.mctsfw.files import read_text
from hexzero.mctsfw.game import Action, Game, State


def action_dtype(num_actions: int) -> np.dtype:
    """The smallest unsigned integer type that holds every action number (and the count)."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if num_actions <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


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

    Build one with :meth:`from_targets`. In a replay buffer (:class:`GameStore`) a
    Connect Four position whose 7 moves were visited fewer than 255 times each takes
    1 + 1 + 4 + 7 * (1 + 1) = 20 bytes; its two encoded cases (flat input, dense
    distribution, value) took 2 * (86 + 7 + 1) * 4 = 752.
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
        (``MCTS.targets``; the nonzero ones are kept; all zero: a position without target,
        which training skips) and each position's value target."""
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
        """The positions: one per move."""
        return len(self.moves)

    def targeted(self) -> np.ndarray:
        """The positions with a policy target, in order: every one, except those a search
        too small to learn from played (playout cap randomization: no visits recorded)."""
        return np.flatnonzero(np.diff(self.policy_offsets.astype(np.int64)))

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


#: a visit count of at least this is kept in ``GameStore.large_visits``; its byte says 255
LARGE_VISITS = 255


class GameStore:
    """Many recorded games in a few flat arrays, oldest first: what the replay buffer keeps
    in memory and writes to its file (an npz of these arrays, no pickles). A game costs
    26 bytes of bookkeeping; a position its move, its value (4 bytes), its number of
    visited moves and, for each of them, the action and a byte for the visit count (a
    count of 255 or more takes 4 bytes more). Actions take a byte up to 255 of them.

    - ``starting_players``, ``winners`` (0: a draw), ``game_offsets`` (games + 1): per game
    - ``moves``, ``values``, ``policy_sizes`` (visited moves): per position, game after game
    - ``policy_game_offsets`` (games + 1), ``policy_actions``, ``policy_visits`` (uint8,
      255 for a large count), ``large_game_offsets`` (games + 1), ``large_visits`` (the
      large counts, in order): the visits
    """

    FIELDS = ("starting_players", "winners", "game_offsets", "moves", "values", "policy_sizes",
              "policy_game_offsets", "policy_actions", "policy_visits", "large_game_offsets", "large_visits")

    def __init__(self, num_actions: int):
        self.num_actions = int(num_actions)
        small = action_dtype(num_actions)
        self.starting_players = np.zeros(0, np.uint8)
        self.winners = np.zeros(0, np.uint8)
        self.game_offsets = np.zeros(1, np.int64)
        self.moves = np.zeros(0, small)
        self.values = np.zeros(0, np.float32)
        self.policy_sizes = np.zeros(0, small)
        self.policy_game_offsets = np.zeros(1, np.int64)
        self.policy_actions = np.zeros(0, small)
        self.policy_visits = np.zeros(0, np.uint8)
        self.large_game_offsets = np.zeros(1, np.int64)
        self.large_visits = np.zeros(0, np.uint32)

    def __len__(self) -> int:
        return len(self.starting_players)

    def positions(self) -> int:
        return int(self.game_offsets[-1] - self.game_offsets[0])

    def length(self, game: int) -> int:
        return int(self.game_offsets[game + 1] - self.game_offsets[game])

    def targeted(self, game: int) -> np.ndarray:
        """The positions of game ``game`` with a policy target (``RecordedGame.targeted``)."""
        return np.flatnonzero(self.policy_sizes[self.game_offsets[game]:self.game_offsets[game + 1]])

    def targeted_positions(self) -> int:
        """The positions with a policy target, in every game."""
        return int(np.count_nonzero(self.policy_sizes))

    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in self.FIELDS)

    def append(self, record: RecordedGame) -> None:
        small = self.moves.dtype
        visits = record.policy_visits.astype(np.int64)
        large = visits >= LARGE_VISITS
        self.starting_players = np.append(self.starting_players, np.uint8(record.starting_player))
        self.winners = np.append(self.winners, np.uint8(record.winner or 0))
        self.game_offsets = np.append(self.game_offsets, self.game_offsets[-1] + len(record))
        self.moves = np.concatenate([self.moves, record.moves.astype(small)])
        self.values = np.concatenate([self.values, record.values.astype(np.float32)])
        self.policy_sizes = np.concatenate([self.policy_sizes, np.diff(record.policy_offsets.astype(np.int64)).astype(small)])
        self.policy_game_offsets = np.append(self.policy_game_offsets, self.policy_game_offsets[-1] + len(visits))
        self.policy_actions = np.concatenate([self.policy_actions, record.policy_actions.astype(small)])
        self.policy_visits = np.concatenate([self.policy_visits, np.minimum(visits, LARGE_VISITS).astype(np.uint8)])
        self.large_game_offsets = np.append(self.large_game_offsets, self.large_game_offsets[-1] + int(large.sum()))
        self.large_visits = np.concatenate([self.large_visits, visits[large].astype(np.uint32)])

    def drop_oldest(self, count: int = 1) -> None:
        """Forget the ``count`` oldest games (their arrays are copied out, so memory is freed)."""
        if count <= 0:
            return
        a, p, w = self.game_offsets[count], self.policy_game_offsets[count], self.large_game_offsets[count]
        self.starting_players, self.winners = self.starting_players[count:].copy(), self.winners[count:].copy()
        self.game_offsets = self.game_offsets[count:] - a
        self.policy_game_offsets = self.policy_game_offsets[count:] - p
        self.moves, self.values = self.moves[a:].copy(), self.values[a:].copy()
        self.policy_sizes = self.policy_sizes[a:].copy()
        self.policy_actions, self.policy_visits = self.policy_actions[p:].copy(), self.policy_visits[p:].copy()
        self.large_game_offsets = self.large_game_offsets[count:] - w
        self.large_visits = self.large_visits[w:].copy()

    def record(self, game: int) -> RecordedGame:
        """Game number ``game`` (0 = the oldest kept) as a RecordedGame (its arrays are views)."""
        a, b = int(self.game_offsets[game]), int(self.game_offsets[game + 1])
        p, q = int(self.policy_game_offsets[game]), int(self.policy_game_offsets[game + 1])
        offsets = np.concatenate([[0], np.cumsum(self.policy_sizes[a:b], dtype=np.int64)])
        visits = self.policy_visits[p:q].astype(np.uint32)
        visits[visits == LARGE_VISITS] = self.large_visits[self.large_game_offsets[game]:self.large_game_offsets[game + 1]]
        return RecordedGame(int(self.starting_players[game]), self.moves[a:b], int(self.winners[game]) or None,
                            self.policy_actions[p:q], visits, offsets, self.values[a:b])

    def records(self) -> list[RecordedGame]:
        return [self.record(i) for i in range(len(self))]

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.FIELDS}

    @classmethod
    def from_arrays(cls, arrays: Any, num_actions: int) -> "GameStore":
        """The store whose :meth:`arrays` these are (``arrays``: a mapping such as an open npz file)."""
        store = cls(num_actions)
        for name in cls.FIELDS:
            setattr(store, name, np.asarray(arrays[name]).astype(getattr(store, name).dtype))
        return store


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
    return [json.loads(line) for line in read_text(path, "records").splitlines() if line.strip()]
