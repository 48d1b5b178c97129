"""TensorBoard curves of a run: its metrics records as scalar event files in ``RUN_DIR/tb/``.

Every metrics line a learning run writes goes through ``RunDir.append_metrics``; that is
the one place that also turns it into scalars here (``scalars``: which keys become which
curves, against which step), so the curves are always the metrics, and nothing else
writes them. ``tensorboard --logdir runs`` shows every run under ``runs/``.

The x-axis of a curve is the record's own number: the episode (``train``), the game
number (a self-play game's length) or the generation (losses, learning rate, self-play
positions per second, resignation false positives, gating score and Elo difference).
A resumed run drops its metrics lines past the last committed step; it then rebuilds its
event file from the lines kept (``RunCurves.rebuild``), so the curves never hold a step
twice, whoever reads them, and a run made before the curves existed gets them on resume.

The events are written with TensorBoard's own record format and protocol buffers
(``tensorboard`` is a dependency), synchronously and without TensorFlow: no thread, no
GPU, nothing printed. ``read_scalars`` reads them back.
"""

from __future__ import annotations

import os
import socket
import struct
import time
from pathlib import Path
from typing import Any, Iterable

#: metrics key -> curve; a value that is None or not a number is left out
CURVES = {
    "loss": "loss/total",
    "policy_loss": "loss/policy",
    "value_loss": "loss/value",
    "accuracy": "train/accuracy",
    "learning_rate": "train/learning_rate",
    "epsilon": "train/epsilon",
    "cases": "train/cases",
    "buffer_size": "train/replay_buffer",
    "search_games_per_second": "search/games_per_second",
    "positions_per_second": "selfplay/positions_per_second",
    "mean_game_length": "selfplay/mean_game_length",
    "resigned_games": "resignation/resigned_games",
    "false_positives": "resignation/false_positives",
    "false_positive_rate": "resignation/false_positive_rate",
    "gating_score": "gating/score",
}
#: where the files go inside a run directory; TOPP's ratings go to a folder below it
TB_DIR = "tb"
EVENT_FILE_PREFIX = "events.out.tfevents."


def step_of(record: dict[str, Any]) -> int | None:
    """The x of a metrics record: its generation, game number or episode (None: no curve)."""
    kind = record.get("kind")
    key = {"generation": "generation", "game": "game"}.get(kind, "episode")
    value = record.get(key, record.get("step"))
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def scalars(record: dict[str, Any]) -> list[tuple[str, float]]:
    """The curves one metrics record adds to: (tag, value)."""
    found = []
    is_game = record.get("kind") == "game"
    for key, tag in CURVES.items():
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            found.append((tag, float(value)))
    moves = record.get("moves")  # the moves; in runs of older versions, their number
    length = len(moves) if isinstance(moves, list) else None
    if isinstance(moves, int) and not isinstance(moves, bool):
        length = moves
    if length is not None:
        found.append(("games/length", float(length)))
        seconds = record.get("seconds")
        if not is_game and isinstance(seconds, (int, float)) and seconds > 0:  # an episode: its game and training
            found.append(("games/positions_per_second", length / seconds))
    if isinstance(record.get("promoted"), bool):
        found.append(("gating/promoted", float(record["promoted"])))
    elo = record.get("gating_elo")
    if isinstance(elo, dict):
        found += [(f"gating/elo_difference{suffix}", float(elo[key]))
                  for key, suffix in (("elo", ""), ("low", "_low"), ("high", "_high")) if key in elo]
    return found


class EventFile:
    """A new TensorBoard event file in ``directory``; each ``add`` appends and closes it,
    so nothing is held open and a killed run loses at most the record being written."""

    def __init__(self, directory: str | Path):
        from tensorboard.compat.proto import event_pb2

        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        # TensorBoard reads the files of a folder in name order: the time keeps a new one last
        name = f"{EVENT_FILE_PREFIX}{time.time():.6f}.{socket.gethostname()}.{os.getpid()}.hexzero"
        self.path = self.directory / name
        self._write([event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2")])

    def add(self, points: Iterable[tuple[str, float, int]], wall_time: float | None = None) -> None:
        """Append scalars ``(tag, value, step)``."""
        from tensorboard.compat.proto import event_pb2, summary_pb2

        now = time.time() if wall_time is None else wall_time
        events = [event_pb2.Event(wall_time=now, step=int(step), summary=summary_pb2.Summary(
                  value=[summary_pb2.Summary.Value(tag=tag, simple_value=float(value))]))
                  for tag, value, step in points]
        if events:
            self._write(events)

    def _write(self, events) -> None:
        from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

        chunks = []
        for event in events:  # TFRecord framing: length, its checksum, the data, its checksum
            data = event.SerializeToString()
            header = struct.pack("<Q", len(data))
            chunks.append(header + struct.pack("<I", masked_crc32c(header)) + data
                          + struct.pack("<I", masked_crc32c(data)))
        with self.path.open("ab") as f:
            f.write(b"".join(chunks))


def remove_event_files(directory: str | Path) -> None:
    """Delete the event files directly in ``directory`` (not those of folders below it)."""
    directory = Path(directory)
    if directory.is_dir():
        for path in directory.glob(f"{EVENT_FILE_PREFIX}*"):
            path.unlink()


class RunCurves:
    """The curves of one run directory (``RunDir.curves``)."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self._file: EventFile | None = None

    def rebuild(self, records: Iterable[dict[str, Any]]) -> None:
        """Replace the curves by those of ``records`` (the metrics lines a run keeps)."""
        remove_event_files(self.directory)
        self._file = EventFile(self.directory)
        for record in records:
            self.add(record)

    def add(self, record: dict[str, Any]) -> None:
        """Add one metrics record's scalars."""
        step = step_of(record)
        if step is None:
            return
        if self._file is None:
            self._file = EventFile(self.directory)
        self._file.add((tag, value, step) for tag, value in scalars(record))


def read_scalars(directory: str | Path) -> dict[str, list[tuple[int, float]]]:
    """The scalars of the event files directly in ``directory``: tag -> [(step, value)]
    in the order written. The records' checksums are verified (a record cut short by a
    kill ends the file's reading), without TensorFlow."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    found: dict[str, list[tuple[int, float]]] = {}
    for path in sorted(Path(directory).glob(f"{EVENT_FILE_PREFIX}*")):
        data, pos = path.read_bytes(), 0
        while pos + 12 <= len(data):
            header = data[pos:pos + 8]
            (length,) = struct.unpack("<Q", header)
            end = pos + 12 + length + 4
            if end > len(data) or struct.unpack("<I", data[pos + 8:pos + 12])[0] != masked_crc32c(header):
                break
            body = data[pos + 12:pos + 12 + length]
            if struct.unpack("<I", data[end - 4:end])[0] != masked_crc32c(body):
                break
            event = event_pb2.Event.FromString(body)
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    found.setdefault(value.tag, []).append((int(event.step), float(value.simple_value)))
            pos = end
    return found
