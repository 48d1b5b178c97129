"""The replay buffer: recent games kept as move sequences with their targets, rebuilt into
training cases (encoded state, visit distribution, value target) when they are wanted.

A stored position costs its move and its sparse targets (``mctsfw.records``), not its
encoding: the boards, the network's input (flat or planes, with whatever history the
net's ``encode_batch`` reads) and the board's symmetric copies are rebuilt from the moves
each time the trainers ask for cases (``cases`` for a self-play generation's epochs,
``sample`` for an on-policy minibatch).

The cases come in the order a ring buffer of encoded cases of the same capacity held
them (the oldest slots overwritten first), so a run trains on the same cases, in the same
order, as when the buffer kept encodings; the buffer file holds the games instead of their
encodings (an older run's ``replay.npz`` of encoded cases does not load).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from hexzero.mctsfw.checkpoints import atomic_path
from hexzero.mctsfw.game import Game, State
from hexzero.mctsfw.records import GameStore, RecordedGame
from hexzero.mctsfw.runs import RunDir, RunDirError

#: ``encode(states) -> batch``: the network's input for a list of states (``net.encode_batch``)
Encoder = Callable[[Sequence[State]], np.ndarray]

#: what a buffer file says it holds
FORMAT = "hexzero-replay-records-1"


class ReplayFileError(RunDirError):
    """A replay buffer file this version cannot read (one written by an older hexzero)."""


def game_result(winner: int | None, player: int) -> float:
    """The value target of a case: 1 for a win of ``player``, 0.5 for a draw, 0 for a loss."""
    return 0.5 if winner is None else float(winner == player)


def source_buffer_path(source: str | Path) -> Path:
    """The replay file a source names: a run directory's last committed buffer, or the file itself."""
    path = Path(source)
    if path.is_dir():
        latest = RunDir(path).latest()
        if latest is None or not (latest[1] / "replay.npz").is_file():
            raise RunDirError(f"{path}: a run directory with no committed replay buffer (resume/*/replay.npz)")
        return latest[1] / "replay.npz"
    if not path.is_file():
        raise RunDirError(f"{path}: no such run directory or replay file")
    return path


def replay_file_summary(path: str | Path) -> tuple[int, int]:
    """(the number of actions of the game, the positions with targets) of the games a
    replay file holds, read without building a buffer."""
    try:
        with np.load(path) as data:
            if "format" in data and str(data["format"]) == FORMAT:
                actions = int(data["num_actions"])
                return actions, GameStore.from_arrays(data, actions).targeted_positions() - int(data["first"])
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        pass
    raise ReplayFileError(f"{path}: not a replay buffer file of this hexzero (a replay.npz of its runs)")


def draw_cases(available: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` indices into ``available`` cases, drawn without replacement until every case
    has been drawn once, then again (shuffled passes, the last one cut short): the
    minibatches of a fixed number of training steps."""
    if available < 1:
        raise ValueError("no cases to draw from")
    passes = -(-count // available)
    return np.concatenate([np.zeros(0, dtype=np.int64), *(rng.permutation(available) for _ in range(passes))])[:count]


def auxiliary_targets(game: Game, final: State) -> tuple[np.ndarray, float]:
    """(each point's owner, the score) in a game's final position, for player 1: +1 a
    point of player 1's, -1 of player 2's (``Game.ownership``), and the area score less
    komi (``Game.score``); zeros for a game without territory."""
    owned = game.ownership(final)
    if owned is None:
        return np.zeros(0, np.float32), 0.0
    return np.asarray(owned, np.float32), float(game.score(final))


def equal_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, group): the index of each distinct row where it first occurs, in increasing
    order, and for each row the number of its distinct row in ``first``. The rows are told
    apart by a hash of their bytes, then checked equal to their group's first row (a
    collision, never seen, falls back to comparing whole rows): sorting a million rows of
    a 15x15 board's planes element by element took minutes, hashing them takes seconds."""
    keys = np.fromiter((hash(row.tobytes()) for row in rows), np.int64, len(rows))
    _, first, group = np.unique(keys, return_index=True, return_inverse=True)
    group = group.reshape(-1)
    for start in range(0, len(rows), 65536):
        if not np.array_equal(rows[first[group[start:start + 65536]]], rows[start:start + 65536]):
            _, first, group = np.unique(rows, axis=0, return_index=True, return_inverse=True)
            group = group.reshape(-1)
            break
    order = np.argsort(first)  # the distinct rows in the order they first occur
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[group]


class ReplayBuffer:
    """The newest games' positions, at most ``capacity`` cases: every position gives one
    case, or with ``augment`` one per symmetry of the board (``game.symmetries``).

    When a new game brings more positions than fit, the oldest go first: the oldest game
    loses its first positions, then the whole game goes. ``len(buffer)`` is the number of
    cases; ``encode`` turns states into the network's input (``net.encode_batch``).
    """

    def __init__(self, capacity: int, game: Game, encode: Encoder, augment: bool = False):
        self.capacity = int(capacity)
        self.game, self.encode, self.augment = game, encode, bool(augment)
        self.copies = self._symmetric_copies() if self.augment else 1
        self.max_positions = max(1, self.capacity // self.copies)
        self.games = GameStore(game.num_actions)  # the kept games, oldest first
        self.first = 0  # positions with targets of the oldest game already dropped
        self.positions = 0  # positions with targets kept (a position without one is not a case)
        self.added = 0  # positions with targets ever added (where the ring of cases would be)
        self._index: tuple[np.ndarray, np.ndarray] | None = None

    def _symmetric_copies(self) -> int:
        state = self.game.initial_state()
        x = self.encode([state])[0]
        mask = self.game.legal_mask(state)
        return len(self.game.symmetries(x, mask / mask.sum()))

    def __len__(self) -> int:
        return self.positions * self.copies

    @property
    def records(self) -> list[RecordedGame]:
        """The kept games, oldest first (the oldest may have lost its first ``first`` positions)."""
        return self.games.records()

    def add(self, record: RecordedGame) -> None:
        """Keep a finished game; drop the oldest positions that no longer fit."""
        self.games.append(record)
        targeted = len(record.targeted())
        self.positions += targeted
        self.added += targeted
        gone = 0  # whole games dropped
        while self.positions > self.max_positions:
            excess = self.positions - self.max_positions
            oldest = len(self.games.targeted(gone)) - self.first  # ``first``: its targeted positions dropped
            if excess >= oldest:
                gone += 1
                self.first = 0
                self.positions -= oldest
            else:
                self.first += excess
                self.positions -= excess
        self.games.drop_oldest(gone)
        self._index = None

    # ---- rebuilding cases ----------------------------------------------------------------------
    def index(self) -> tuple[np.ndarray, np.ndarray]:
        """(game, position) of every kept position, oldest first."""
        if self._index is None:
            games, positions = [], []
            for i in range(len(self.games)):
                kept = self.games.targeted(i)[self.first if i == 0 else 0:]
                games.append(np.full(len(kept), i, dtype=np.int64))
                positions.append(kept.astype(np.int64))
            empty = np.zeros(0, dtype=np.int64)
            self._index = (np.concatenate(games) if games else empty, np.concatenate(positions) if positions else empty)
        return self._index

    def _ring_shift(self) -> int:
        """How far the ring of cases has turned: slot s holds the (s - shift)-th oldest case."""
        if self.added < self.max_positions:
            return 0
        return (self.added % self.max_positions) * self.copies

    def _positions(self, wanted: np.ndarray, aux: bool = False) -> tuple[np.ndarray, ...]:
        """(x, distributions, values) of the kept positions numbered ``wanted`` (oldest = 0):
        each game is replayed once, up to the last position wanted from it. With ``aux``
        also each position's ownership and score targets (``auxiliary_targets``)."""
        games, positions = self.index()
        games, positions = games[wanted], positions[wanted]
        num_actions = self.game.num_actions
        states: list[State] = [None] * len(wanted)
        y = np.zeros((len(wanted), num_actions), np.float32)
        z = np.zeros(len(wanted), np.float32)
        owned = np.zeros((len(wanted), num_actions), np.float32) if aux else None
        score = np.zeros(len(wanted), np.float32) if aux else None
        for g in np.unique(games):
            at = np.flatnonzero(games == g)
            record = self.games.record(int(g))
            # with aux the whole game: its final position gives the auxiliary targets
            replayed = list(record.states(self.game, None if aux else int(positions[at].max()) + 1))
            if aux:
                final = self.game.next_state(replayed[-1], int(record.moves[-1]))
                final_owned, final_score = auxiliary_targets(self.game, final)
            for i in at:
                states[i] = replayed[positions[i]]
                y[i] = record.distribution(int(positions[i]), num_actions)
                z[i] = record.values[positions[i]]
                if aux:  # from the view of the player to move, as the value
                    sign = 1.0 if self.game.current_player(states[i]) == 1 else -1.0
                    owned[i, :len(final_owned)] = sign * final_owned
                    score[i] = sign * final_score
        x = self.encode(states) if states else np.zeros((0, *self.encode([self.game.initial_state()]).shape[1:]),
                                                        np.float32)
        return (x, y, z, owned, score) if aux else (x, y, z)

    def _cases_of(self, chronological: np.ndarray, aux: bool = False) -> tuple[np.ndarray, ...]:
        """The cases numbered ``chronological`` (oldest = 0; a position's symmetric copies in
        ``game.symmetries`` order), in that order; with ``aux`` also their ownership and
        score targets. A symmetry moves the points of every target alike (``game.symmetries``
        of the action numbers gives where each one goes)."""
        positions, copy = np.divmod(chronological, self.copies)
        wanted, back = np.unique(positions, return_inverse=True)
        found = self._positions(wanted, aux)
        if self.copies == 1 or not len(chronological):
            return tuple(part[back] for part in found)
        x, y = found[0], found[1]
        index = np.arange(self.game.num_actions)
        variants = []
        for xi in x:
            symmetric = self.game.symmetries(xi, index)
            if len(symmetric) != self.copies:
                raise ValueError(f"{self.game!r}.symmetries gave {len(symmetric)} cases, not {self.copies}")
            variants.append(symmetric)
        xs = np.stack([variants[b][c][0] for b, c in zip(back, copy)]).astype(np.float32, copy=False)
        moved = np.stack([variants[b][c][1] for b, c in zip(back, copy)])  # where each target entry comes from
        rows = back[:, None]
        cases = (xs, y[rows, moved], found[2][back])
        if aux:
            cases += (found[3][rows, moved], found[4][back])
        return cases

    def _slots_to_cases(self, slots: np.ndarray) -> np.ndarray:
        return (slots - self._ring_shift()) % max(len(self), 1)

    def sample(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A minibatch ``(x, distributions, values)`` of up to ``count`` distinct cases, chosen uniformly."""
        chosen = rng.choice(len(self), size=min(count, len(self)), replace=False)
        return self._cases_of(self._slots_to_cases(chosen))

    def cases(self, average_positions: bool = False, aux: bool = False) -> tuple[np.ndarray, ...]:
        """Every case (x, distribution, value); with ``average_positions`` each position that
        occurs more than once becomes one case, where it first occurs, with the mean of its
        targets. With ``aux`` also (ownership, score): the auxiliary targets of KataGo-style heads."""
        size = len(self)
        found = self._cases_of(self._slots_to_cases(np.arange(size)), aux)
        if not average_positions or not size:
            return found
        x = found[0]
        first, group = equal_rows(x.reshape(size, -1))
        counts = np.bincount(group).astype(np.float32)

        def mean(target: np.ndarray) -> np.ndarray:
            if target.ndim == 1:
                return (np.bincount(group, weights=target) / counts).astype(np.float32)
            total = np.zeros((len(first), target.shape[1]), dtype=np.float32)
            np.add.at(total, group, target)
            return total / counts[:, None]

        return (x[first], *(mean(target) for target in found[1:]))

    # ---- the buffer file ---------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """The games' flat arrays (``mctsfw.records.GameStore``) and the buffer's counters,
        in one npz file (no pickles)."""
        arrays = self.games.arrays()
        arrays.update(format=np.array(FORMAT), num_actions=self.game.num_actions, capacity=self.capacity,
                      augment=self.augment, first=self.first, added=self.added)
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, **arrays)

    @classmethod
    def load(cls, path: str | Path, game: Game, encode: Encoder) -> "ReplayBuffer":
        with np.load(path) as data:
            if "format" not in data or str(data["format"]) != FORMAT:
                raise ReplayFileError(f"{path} holds a replay buffer of an older hexzero (encoded cases, not games): "
                                      "this run cannot be resumed; start a new one with --run-dir NEW_DIR")
            if int(data["num_actions"]) != game.num_actions:
                raise ReplayFileError(f"{path} holds games of {int(data['num_actions'])} actions, not {game!r}'s "
                                      f"{game.num_actions}")
            buffer = cls(int(data["capacity"]), game, encode, augment=bool(data["augment"]))
            buffer.games = GameStore.from_arrays(data, game.num_actions)
            buffer.first, buffer.added = int(data["first"]), int(data["added"])
        buffer.positions = buffer.games.targeted_positions() - buffer.first
        return buffer
