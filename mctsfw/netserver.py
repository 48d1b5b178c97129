"""One network server per machine: the self-play workers' positions judged in large batches.

Each self-play worker plays its lock-step group of games as before, but where it would
call its own copy of the network it sends the encoded positions of a round to the one
process that owns the network (on the GPU where Keras has one) and waits for the
answers. The server gathers the requests of every worker into one batch, up to
``batch`` positions, and judges it with one call: at once when every busy worker is
waiting, else when ``wait_ms`` have passed since the first request of the batch (or the
batch is full). A worker is busy from its first request of a group until it says the
group is over (``ServedNet.idle``), so a worker between groups holds nobody up.

The wire: a Unix-domain socket (``multiprocessing.connection``), one connection per
worker process, raw float32 bytes both ways (a header of two int32: the board size, -1
for the game's own, and the rows) and no pickling in the hot path. A worker encodes its
positions itself (``encode_states`` of the net class, no weights needed: the workers
never load Keras). Each generation's network reaches the server alone (``load``), as the
file the trainer writes; workers learn of it by its key and only renew their handle.

The server process dies with the process that started it (``mctsfw.workers.exit_with_parent``)
and ignores Ctrl-C, which is the trainer's to handle. A worker whose server is gone stops
its group with ``NetServerError``, one line.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import secrets
import signal
import struct
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Client, Connection, Listener, wait
from typing import Any, Callable, Sequence

import numpy as np

from hexzero.mctsfw.workers import exit_with_parent, sigint_ignored

#: (board size, rows) before a request's float32 positions; rows 0: the worker's group is over
HEADER = struct.Struct("<ii")
#: the main game's size tag (a game without sizes, or the run's own size)
MAIN = -1
#: seconds the trainer waits for the server to start (Keras's import included) or load a network
START_SECONDS = 300.0


class NetServerError(RuntimeError):
    """The network server cannot start, load a network or answer, in one line."""


# ---- the trainer's handle ---------------------------------------------------------------------------
class NetServer:
    """Starts the server process, hands it each generation's network (``load``), stops it
    (``close``). ``setup(*setup_args)`` runs in the server and returns (the net class, the
    main game, the network's views of the board sizes a run plays: an object whose
    ``game_and_net(size, net)`` gives the game of ``size`` and ``net``'s view of it, the
    main game's for a size it does not know, as ``mctsfw.selfplay.SizedViews``)."""

    def __init__(self, setup: Callable[..., tuple[type, Any, Any]], setup_args: tuple, batch: int,
                 wait_ms: float):
        self.address = server_address()
        context = multiprocessing.get_context("spawn")
        self._control, child = context.Pipe()
        with sigint_ignored():
            self.process = context.Process(
                target=_serve, name="hexzero-netserver", daemon=True,
                args=(os.getpid(), child, self.address, setup, setup_args, batch, wait_ms / 1000.0))
            self.process.start()
        child.close()
        self._answer("start")

    def _answer(self, what: str) -> Any:
        if not self._control.poll(START_SECONDS):
            raise NetServerError(f"the network server did not {what} within {START_SECONDS:.0f} s")
        try:
            kind, detail = self._control.recv()
        except (EOFError, OSError):
            raise NetServerError(f"the network server stopped before it could {what} "
                                 f"(exit code {self.process.exitcode})") from None
        if kind == "error":
            raise NetServerError(detail)
        return detail

    def load(self, path: str, key: str) -> None:
        """Judge with the network saved at ``path`` from now on (``key``: its version)."""
        self._control.send(("load", str(path), key))
        self._answer("load the network")

    def stats(self) -> dict[str, float]:
        """Calls, positions judged and seconds spent judging, since the start."""
        self._control.send(("stats",))
        return self._answer("say what it did")

    def close(self) -> None:
        if self.process.is_alive():
            try:
                self._control.send(("stop",))
            except OSError:
                pass
            self.process.join(timeout=10)
            if self.process.is_alive():
                self.process.terminate()
                self.process.join(timeout=5)
        self._control.close()


def server_address() -> str:
    """A new Unix-domain socket address: in Linux's abstract namespace (no file, so nothing
    is left behind whatever ends the server), elsewhere a file in the temporary folder."""
    name = f"hexzero-netserver-{os.getpid()}-{secrets.token_hex(6)}"
    if sys.platform.startswith("linux"):
        return "\0" + name
    return os.path.join(tempfile.gettempdir(), name)


# ---- the server process ---------------------------------------------------------------------------
class _Judge:
    """The network and its views of the other board sizes (``sized``, made once per network
    and size)."""

    def __init__(self, net_class: type, game: Any, sized: Any):
        self.net_class, self.game, self.sized = net_class, game, sized
        self.net, self.key = None, None
        self.calls, self.positions, self.seconds = 0, 0, 0.0

    def load(self, path: str, key: str) -> None:
        self.net, self.key = self.net_class.load(path, self.game), key

    def view(self, size: int):
        return self.sized.game_and_net(size, self.net)[1]

    def __call__(self, requests: list[tuple[Connection, int, int, bytes]]) -> None:
        """Judge every request (grouped by board size, one call per size) and answer each."""
        start = time.perf_counter()
        by_size: dict[int, list] = {}
        for request in requests:
            by_size.setdefault(request[1], []).append(request)
        for size, group in by_size.items():
            net = self.view(size)
            x = np.concatenate([np.frombuffer(data, np.float32, offset=HEADER.size) for _, _, _, data in group])
            x = x.reshape(-1, *net.input_shape)
            probs, values = net.evaluate(x)
            answer = np.empty((len(x), probs.shape[1] + 1), np.float32)
            answer[:, :-1], answer[:, -1] = probs, values
            row = 0
            for connection, _, rows, _ in group:
                _send(connection, answer[row:row + rows])
                row += rows
            self.calls += 1
            self.positions += len(x)
        self.seconds += time.perf_counter() - start


def _send(connection: Connection, block: np.ndarray | bytes) -> None:
    try:
        connection.send_bytes(block if isinstance(block, bytes) else memoryview(np.ascontiguousarray(block)).cast("B"))
    except OSError:  # the worker is gone; its connection is dropped when the server next reads it
        pass


def _serve(parent: int, control: Connection, address: str, setup: Callable, setup_args: tuple, batch: int,
           wait_seconds: float) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the trainer's to handle
    exit_with_parent(parent)
    try:
        judge = _Judge(*setup(*setup_args))
        listener = Listener(address, family="AF_UNIX")
    except Exception as error:  # noqa: BLE001 - said to the trainer in one line
        control.send(("error", f"the network server could not start: {error}"))
        return
    arrivals: queue.SimpleQueue = queue.SimpleQueue()
    wake_read, wake_write = os.pipe()

    def accept() -> None:
        while True:
            try:
                arrivals.put(listener.accept())
            except OSError:
                return
            os.write(wake_write, b"+")

    threading.Thread(target=accept, name="accept", daemon=True).start()
    control.send(("ready", None))
    workers: list[Connection] = []
    busy: set[int] = set()  # the workers inside a group (id of their connection)
    pending: list[tuple[Connection, int, int, bytes]] = []
    rows = 0
    first = 0.0  # when the oldest pending request came
    while True:
        timeout = None if not pending else max(0.0, first + wait_seconds - time.perf_counter())
        for ready in wait([control, wake_read, *workers], timeout):
            if ready == wake_read:
                os.read(wake_read, 4096)
                while not arrivals.empty():
                    workers.append(arrivals.get())
            elif ready is control:
                try:
                    message = control.recv()
                except (EOFError, OSError):
                    return
                if message[0] == "stop":
                    listener.close()
                    return
                if pending:  # whatever was asked before is judged by the network it was asked of
                    judge(pending)
                    pending, rows = [], 0
                if message[0] == "stats":
                    control.send(("stats", {"calls": judge.calls, "positions": judge.positions,
                                            "seconds": judge.seconds}))
                    continue
                try:
                    judge.load(message[1], message[2])
                except Exception as error:  # noqa: BLE001 - said to the trainer in one line
                    control.send(("error", f"the network server could not load {message[1]}: {error}"))
                    continue
                control.send(("loaded", message[2]))
            else:
                try:
                    data = ready.recv_bytes()
                except (EOFError, OSError):
                    workers.remove(ready)
                    busy.discard(id(ready))
                    pending = [request for request in pending if request[0] is not ready]
                    rows = sum(request[2] for request in pending)
                    continue
                size, count = HEADER.unpack_from(data)
                if count == 0:
                    busy.discard(id(ready))
                    continue
                if judge.net is None:
                    _send(ready, b"no network loaded yet")
                    continue
                busy.add(id(ready))
                if not pending:
                    first = time.perf_counter()
                pending.append((ready, size, count, data))
                rows += count
        if pending and (rows >= batch or len(pending) >= len(busy)
                        or time.perf_counter() >= first + wait_seconds):
            try:
                judge(pending)
            except Exception as error:  # noqa: BLE001 - each waiting worker is told, in one line
                for connection, *_ in pending:
                    _send(connection, f"the network server could not judge: {error}".encode())
            pending, rows = [], 0


# ---- the workers' side ----------------------------------------------------------------------------
_connections: dict[str, Connection] = {}


def _connection(address: str) -> Connection:
    if address not in _connections:
        try:
            _connections[address] = Client(address, family="AF_UNIX")
        except OSError as error:
            raise NetServerError(f"no network server answers at {address.lstrip(chr(0))} "
                                 f"({error.strerror or error})") from None
    return _connections[address]


class ServedNet:
    """A worker's stand-in for the network that the server at ``address`` owns: the
    ``net_class``'s encoding of ``game`` (no weights), and ``evaluate`` by the server."""

    def __init__(self, net_class: type, game: Any, address: str, size: int = MAIN):
        self.net_class, self.game, self.address, self.size = net_class, game, address, size
        self.name, self.roles, self.input_kind = net_class.name, net_class.roles, net_class.input_kind
        self.input_shape = net_class.encoding_shape(game)
        self.num_actions = game.num_actions

    def __repr__(self) -> str:
        return f"ServedNet({self.name} at {self.address.lstrip(chr(0))})"

    def encode_batch(self, states: Sequence[Any]) -> np.ndarray:
        return self.net_class.encode_states(self.game, states)

    def evaluate(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.ascontiguousarray(x, dtype=np.float32)
        if x.ndim == len(self.input_shape):
            x = x[None]
        connection = _connection(self.address)
        try:
            message = bytearray(HEADER.size + x.nbytes)  # the header and the planes, copied once
            HEADER.pack_into(message, 0, self.size, len(x))
            np.frombuffer(message, np.float32, offset=HEADER.size).reshape(x.shape)[...] = x
            connection.send_bytes(message)
            data = connection.recv_bytes()
        except (EOFError, OSError):
            _connections.pop(self.address, None)
            raise NetServerError("the network server stopped answering") from None
        width = self.num_actions + 1
        if len(data) != 4 * len(x) * width:
            raise NetServerError(data.decode(errors="replace"))
        answer = np.frombuffer(data, np.float32).reshape(len(x), width)
        return answer[:, :-1], answer[:, -1]

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.evaluate(x)[0]

    def for_game(self, game: Any) -> "ServedNet":
        return ServedNet(self.net_class, game, self.address, getattr(game, "size", MAIN))

    def idle(self) -> None:
        """Tell the server this worker's group is over: it waits for this worker no longer."""
        connection = _connections.get(self.address)
        if connection is not None:
            try:
                connection.send_bytes(HEADER.pack(self.size, 0))
            except OSError:
                _connections.pop(self.address, None)


class ServedNetFile:
    """The handle a backend gives its workers with a server: ``load`` makes the worker's
    ``ServedNet`` (no file is read: the server holds the network of version ``key``)."""

    def __init__(self, address: str, key: str):
        self.address, self.key = address, key

    def load(self, net_class: type, game: Any) -> ServedNet:
        return ServedNet(net_class, game, self.address)


def server_problem(net_class: type) -> str | None:
    """Why ``net_class`` cannot be served (its workers must encode without its weights), or None."""
    if not callable(getattr(net_class, "encode_states", None)):
        return f"the {net_class.name} net has no encode_states (a worker encodes positions without the weights)"
    return None
