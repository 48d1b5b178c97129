"""Where the workers that play a run's games (self-play, imitation) run: processes on
this machine, or tasks on a Ray cluster.

The trainer stays one process. For each generation it hands a backend the network the
games are played with and the generation's lock-step groups; the backend plays the
groups on its workers and gives back each group's results **in group order**, so the
trainer commits the games in game order whatever finished first. Every game draws its
random numbers from (run seed, game number), so a run is the same game for game on
either backend with any number of workers.

A worker that dies (killed, out of memory, its machine gone) loses only the groups it
had not returned: they are played again on a fresh worker, and since nothing of a group
reaches the trainer before the whole group has come back, no game is lost or counted
twice. A group that loses its worker ``MAX_REPLAYS`` times stops the run with a
one-line error (a game that kills every worker is a bug, not bad luck).

Ray (``pip install -e ".[ray]"``): with ``ray_address = ""`` a local Ray is started with
``workers`` CPUs (0: every core) and shut down with the run; with ``"auto"`` or
``"HOST:PORT"`` the run joins the cluster that ``ray start --head`` began and keeps at most
``workers`` tasks running at once (0: as many as its machines' CPUs take). The network travels through Ray's object store, because a file
on the head machine is not visible to the others; the workers need the same hexzero
installed (and run from the same directory when it is a checkout).

Processes we start die with us: a Ctrl-C or an error shuts the local Ray down, and a
small guard process ends the local Ray's processes should this process be killed
outright (``kill -9``), which Ray's own clean-up does not cover for all of them.
"""

from __future__ import annotations

import hashlib
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Callable, Iterator

import hexzero
from hexzero.mctsfw.interrupts import sigterm_kept
from hexzero.mctsfw.netserver import NetServer, NetServerError, ServedNetFile
from hexzero.mctsfw.workers import WorkerPool, sigint_ignored, stderr_fd_to

#: times one group of games may lose its worker before the run gives up
MAX_REPLAYS = 3

#: fault injection for the tests: "N:FILE" makes the worker about to play game N exit at
#: once, the first time only (it creates FILE, and does nothing while FILE exists)
WORKER_DIES_AT = "HEXZERO_WORKER_DIES_AT"

RAY_MISSING = 'Ray is not installed: pip install -e ".[ray]" (or pip install "ray>=2.9")'


class BackendError(RuntimeError):
    """A backend that cannot start or cannot go on, in one line for the user."""


def ray_problem() -> str | None:
    """Why ``backend = "ray"`` cannot work here (Ray missing), or None."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return RAY_MISSING
    return None


def die_if_asked(numbers: list[int]) -> None:
    """End this worker process now if ``WORKER_DIES_AT`` names one of ``numbers`` for the
    first time: how the tests show that a dead worker's games are replayed."""
    spec = os.environ.get(WORKER_DIES_AT)
    if not spec:
        return
    number, _, marker = spec.partition(":")
    if int(number) in numbers and marker and not os.path.exists(marker):
        Path(marker).touch()
        os._exit(3)


def describe(numbers: list[int]) -> str:
    return f"game {numbers[0]}" if len(numbers) == 1 else f"games {numbers[0]}-{numbers[-1]}"


def net_bytes(net) -> bytes:
    """The network as the bytes of its saved file (a net is saved to a path only)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "net.keras"
        net.save(path)
        return path.read_bytes()


# ---- how a worker gets the network -----------------------------------------------------------------
class NetFile:
    """The network as a file every worker can read (workers on this machine)."""

    def __init__(self, path: Path, key: str):
        self.path, self.key = str(path), key

    def load(self, net_class, game):
        return net_class.load(self.path, game)


class NetObject:
    """The network as bytes in Ray's object store, fetched only by a worker that does
    not hold this version yet (the reference is wrapped in a list so that Ray passes
    the reference, not the bytes, to every task)."""

    def __init__(self, ref, key: str):
        self.refs, self.key = [ref], key

    def load(self, net_class, game):
        import ray

        data = ray.get(self.refs[0])
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "net.keras"
            path.write_bytes(data)
            return net_class.load(path, game)


class NodeServer:
    """A Ray actor on one node that holds that node's network server
    (``mctsfw.netserver.NetServer``, its child: it dies with the actor)."""

    def __init__(self, start: Callable[[], NetServer]):
        self.server = start()

    def load(self, data: bytes, key: str) -> str:
        """Serve the network saved as ``data`` (version ``key``); the server's address."""
        with tempfile.TemporaryDirectory() as folder:  # read once by the server, then gone
            path = Path(folder) / "net.keras"
            path.write_bytes(data)
            self.server.load(str(path), key)
        return self.server.address

    def stats(self) -> dict[str, float]:
        return self.server.stats()


class ServedOnNodes:
    """The handle Ray tasks get with servers: the server of the node a task runs on
    (``addresses``: node id to address), or, on a node that joined after the generation
    began and has none, the network itself (``shared``, loaded by the task)."""

    def __init__(self, addresses: dict[str, str], shared: NetObject):
        self.addresses, self.shared, self.key = addresses, shared, shared.key

    def load(self, net_class, game):
        import ray

        address = self.addresses.get(ray.get_runtime_context().get_node_id())
        if address is None:
            return self.shared.load(net_class, game)
        return ServedNetFile(address, self.key).load(net_class, game)


# ---- the replay book-keeping both backends share -------------------------------------------------------
class Replays:
    """Counts the times each group lost its worker, says so in one line, and stops the
    run when a group has lost too many."""

    def __init__(self, groups: list[list[int]]):
        self.groups = groups
        self.counts = [0] * len(groups)

    def lost(self, index: int, why: str) -> None:
        self.counts[index] += 1
        numbers = self.groups[index]
        if self.counts[index] > MAX_REPLAYS:
            raise BackendError(f"{describe(numbers)}: the worker playing it died {self.counts[index]} times "
                               f"(last: {why}); giving up")
        again = "it" if len(numbers) == 1 else "them"
        print(f"a worker died playing {describe(numbers)} ({why}); playing {again} again", file=sys.stderr,
              flush=True)


class ProcessBackend:
    """Worker processes on this machine (``mctsfw.workers.WorkerPool``); a pool broken by
    a dead worker is replaced and the groups it had not returned are submitted again.
    With ``server`` (a function of no arguments that starts a ``mctsfw.netserver.NetServer``)
    the workers' positions are judged by that one server, started on first use."""

    def __init__(self, workers: int, initializer: Callable[..., None] | None = None, initargs: tuple = (),
                 server: Callable[[], NetServer] | None = None):
        self.workers, self.initializer, self.initargs = workers, initializer, initargs
        self._pool: WorkerPool | None = None
        self._start_server, self.server = server, None

    def _new_pool(self) -> WorkerPool:
        return WorkerPool(self.workers, initializer=self.initializer, initargs=self.initargs)

    @contextmanager
    def shared_net(self, net, directory: Path) -> Iterator[NetFile | ServedNetFile]:
        path = Path(directory) / "workers_net.keras"  # the network the workers play with
        data = net_bytes(net)
        path.write_bytes(data)
        key = hashlib.sha256(data).hexdigest()
        try:
            if self._start_server is None:
                yield NetFile(path, key)
                return
            if self.server is None:
                self.server = self._start_server()
            self.server.load(path, key)
            yield ServedNetFile(self.server.address, key)
        finally:
            path.unlink(missing_ok=True)

    def play(self, fn: Callable[..., Any], groups: list[list[int]],
             args: Callable[[list[int]], tuple]) -> Iterator[tuple[Any, bool]]:
        """``fn(*args(numbers))`` for each group, yielded in group order with whether the
        next group's results are already in."""
        if self._pool is None:
            self._pool = self._new_pool()
        replays = Replays(groups)
        futures: list[Future] = [self._submit(fn, args(numbers)) for numbers in groups]
        for i in range(len(groups)):
            while True:
                try:
                    result = futures[i].result()
                    break
                except BrokenProcessPool as error:
                    # every unfinished future of a broken pool fails: which group killed its
                    # worker is unknown, so each group that had not come back counts a loss
                    lost = [j for j in range(i, len(groups)) if not _succeeded(futures[j])]
                    for j in lost:
                        replays.lost(j, type(error).__name__)
                    self._replace_pool()
                    for j in lost:
                        futures[j] = self._submit(fn, args(groups[j]))
            yield result, i + 1 < len(groups) and _succeeded(futures[i + 1])

    def _replace_pool(self) -> None:
        self._pool.close(abort=True)
        self._pool = self._new_pool()

    def _submit(self, fn: Callable[..., Any], args: tuple) -> Future:
        """Submit to the pool, replacing it first if a worker died while it was idle (between
        generations): a broken pool refuses every submission."""
        try:
            return self._pool.submit(fn, *args)
        except BrokenProcessPool:
            self._replace_pool()
            return self._pool.submit(fn, *args)

    def close(self, abort: bool = False) -> None:
        if self._pool is not None:
            self._pool.close(abort=abort)
            self._pool = None
        if self.server is not None:
            self.server.close()
            self.server = None


def _succeeded(future: Future) -> bool:
    return future.done() and not future.cancelled() and future.exception() is None


class RayBackend:
    """Ray tasks, one per group (one CPU each): a local Ray started here, or a cluster
    joined at ``address``. Ray keeps its worker processes between tasks, so a worker
    builds the game and loads each generation's network once."""

    def __init__(self, address: str, workers: int, server: Callable[[], NetServer] | None = None):
        problem = ray_problem()
        if problem:
            raise BackendError(problem)
        import ray

        self._ray = ray
        self.workers = workers  # tasks in flight at once (0: as many as the cluster takes)
        self._start_server = server
        self._servers: dict[str, Any] = {}  # node id: the actor that holds that node's network server
        self._owned = not ray.is_initialized()  # a Ray the caller started is theirs to shut down
        self._guard: subprocess.Popen | None = None
        self._running: list = []
        self._remote = {}
        if self._owned:
            if address and address != "auto":
                cluster_problem(address)
            options: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
            if address:
                options["address"] = address
            else:
                options.update(num_cpus=workers or os.cpu_count() or 1, object_store_memory=256 * 2**20)
            try:
                # a local Ray's processes start with Ctrl-C ignored: a terminal's Ctrl-C reaches the
                # whole process group, and a raylet or GCS killed by it left ray.shutdown() waiting;
                # and SIGTERM stays the command's to handle (ray.init sets a handler that exits at once)
                with sigint_ignored() if not address else nullcontext(), sigterm_kept():
                    ray.init(**options)
            except (ConnectionError, RuntimeError, ValueError) as error:
                where = f"the Ray cluster at {address}" if address else "a local Ray"
                hint = ("; a cluster that authenticates (Ray >= 2.59) wants RAY_AUTH_MODE=token and its "
                        "RAY_AUTH_TOKEN here too" if address else "")
                raise BackendError(f"selfplay.ray_address = {address!r}: could not start or join {where}: "
                                   f"{str(error).splitlines()[0] if str(error) else type(error).__name__}{hint}") from None
            if not address:
                self._guard = start_guard(os.getpid(), descendants(os.getpid()))

    @contextmanager
    def shared_net(self, net, directory: Path) -> Iterator[NetObject | ServedOnNodes]:
        data = net_bytes(net)
        ref = self._ray.put(data)
        shared = NetObject(ref, hashlib.sha256(data).hexdigest())
        try:
            if self._start_server is None:
                yield shared
                return
            self._start_node_servers()
            addresses = self._ray.get([server.load.remote(ref, shared.key) for server in self._servers.values()])
            yield ServedOnNodes(dict(zip(self._servers, addresses)), shared)
        finally:
            del ref, shared

    def _start_node_servers(self) -> None:
        """A network server on every live node that has none yet (an actor placed there,
        with the node's GPU where it has one)."""
        ray = self._ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        remote = ray.remote(NodeServer)
        for node in ray.nodes():
            if node.get("Alive") and node["NodeID"] not in self._servers:
                gpus = 1 if node.get("Resources", {}).get("GPU", 0) >= 1 else 0
                self._servers[node["NodeID"]] = remote.options(
                    num_cpus=0, num_gpus=gpus, max_restarts=0,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
                ).remote(self._start_server)

    def play(self, fn: Callable[..., Any], groups: list[list[int]],
             args: Callable[[list[int]], tuple]) -> Iterator[tuple[Any, bool]]:
        """As ``ProcessBackend.play``; a group whose worker or machine died is submitted again."""
        ray = self._ray
        if fn not in self._remote:
            # retries are ours (Replays): Ray's own would replay silently and without a limit we set
            self._remote[fn] = ray.remote(fn).options(num_cpus=1, max_retries=0)
        remote = self._remote[fn]
        lost_errors = tuple(getattr(ray.exceptions, name) for name in (
            "WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "OutOfMemoryError", "ObjectLostError",
            "OwnerDiedError") if hasattr(ray.exceptions, name))
        replays = Replays(groups)
        cap = self.workers or len(groups)  # on a cluster too: no more tasks at once than workers
        refs: list = []
        self._running = refs
        results: dict[int, Any] = {}
        finished: set[int] = set()

        def in_flight() -> list[int]:
            return [j for j in range(len(refs)) if j not in finished]

        def top_up() -> None:  # groups are submitted in order, so the first unfinished one always runs
            while len(refs) < len(groups) and len(in_flight()) < cap:
                refs.append(remote.remote(*args(groups[len(refs)])))

        top_up()
        for i in range(len(groups)):
            while i not in results:
                ready, _ = ray.wait([refs[j] for j in in_flight()], num_returns=1)
                for ref in ready:
                    j = refs.index(ref)
                    try:
                        results[j] = ray.get(ref)
                        finished.add(j)
                    except lost_errors as error:
                        replays.lost(j, type(error).__name__)
                        refs[j] = remote.remote(*args(groups[j]))
                    except ray.exceptions.RayTaskError as error:  # a task's own error: its one line, not Ray's traceback
                        if isinstance(error.cause, NetServerError):
                            raise NetServerError(str(error.cause)) from None
                        raise
                top_up()
            next_ready = i + 1 < len(groups) and (i + 1 in results or (
                i + 1 < len(refs) and bool(ray.wait([refs[i + 1]], timeout=0)[0])))
            yield results.pop(i), next_ready
        self._running = []

    def close(self, abort: bool = False) -> None:
        ray = self._ray
        with ray_logs_muted():
            # a Ray we started is shut down, and its tasks with it; only in one the caller
            # keeps are the tasks in flight cancelled. (A cancel that meets a task just
            # finishing can fail a check in Ray's C++ core worker, which then ends this
            # process at once with status 1: seen in CI on a SIGTERM, the user's one line unsaid.)
            if abort and not self._owned:
                for ref in self._running:
                    try:
                        ray.cancel(ref, force=True)
                    except Exception:  # noqa: BLE001 - a finished or lost task cannot be cancelled; nothing to do
                        pass
            self._running = []
            for server in self._servers.values():  # on a cluster the caller keeps, not left behind
                try:
                    ray.kill(server)
                except Exception:  # noqa: BLE001 - an actor already gone cannot be killed; nothing to do
                    pass
            self._servers = {}
            if self._owned and ray.is_initialized():
                ray.shutdown()
        if self._guard is not None:
            self._guard.kill()  # Ray is down: nothing left to guard
            self._guard.wait()
            self._guard = None


@contextmanager
def ray_logs_muted() -> Iterator[None]:
    """The process's stderr (file descriptor 2) goes to the null device meanwhile. Ray's C++
    core worker in this process writes there as Ray is torn down, for instance "Check
    failed: Tried to complete task that was not pending" when a cancel meets a task that is
    just finishing (seen once in CI on a SIGTERM). That is Ray's own business, not a line
    for the user's terminal. Python's errors still reach the user: they are raised, and
    the caller prints them after this block."""
    with open(os.devnull, "wb") as null, stderr_fd_to(null.fileno()):
        yield


def cluster_problem(address: str, timeout: float = 5.0) -> None:
    """Refuse a ``HOST:PORT`` that answers nobody, at once: Ray itself would retry for minutes."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise BackendError(f"selfplay.ray_address = {address!r}: not HOST:PORT (nor \"auto\", nor \"\" for a local Ray)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as error:
        raise BackendError(f"selfplay.ray_address = {address!r}: no Ray cluster answers there ({error.strerror or error}); "
                           f"start one with `ray start --head --port={port}` on {host}") from None


def make_backend(backend: str, workers: int, ray_address: str, initializer: Callable[..., None] | None = None,
                 initargs: tuple = (), server: Callable[[], NetServer] | None = None):
    """The backend ``[selfplay] backend`` names (``workers`` 0: one per core), with the
    network server ``server`` starts (None: a network in every worker)."""
    if backend == "ray":
        return RayBackend(ray_address, workers, server)
    return ProcessBackend(workers or os.cpu_count() or 1, initializer, initargs, server)


# ---- the guard: a local Ray dies with this process even after kill -9 -----------------------------------
def _start_time(pid: int) -> str | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()[19]  # field 22: when the process started


def live_processes() -> list[tuple[int, int, int]]:
    """(pid, parent pid, process group) of every live process (a zombie, dead but not yet
    reaped, is not live), read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "stat").read_text()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2:].split()  # after "pid (name) ": state, parent, group, ...
            if fields[0] != "Z":
                found.append((int(entry.name), int(fields[1]), int(fields[2])))
    return found


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for child, parent, _ in live_processes():
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def start_guard(parent: int, pids: list[int]) -> subprocess.Popen | None:
    """A small process that kills ``pids`` (the local Ray's processes) once ``parent`` is
    gone, so that a ``kill -9`` of the trainer leaves none of them running (Ray's agents
    outlive a killed driver). Linux only (it reads /proc); elsewhere nothing is started."""
    if not Path("/proc/self/stat").exists() or not pids:
        return None
    marks = [f"{pid}={_start_time(pid)}" for pid in pids if _start_time(pid) is not None]
    home = Path(hexzero.__file__).resolve().parent.parent  # where `import hexzero` finds it: checkout or site-packages
    return subprocess.Popen([sys.executable, "-m", "hexzero.mctsfw.backends", "guard", str(parent), *marks],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, cwd=os.getcwd(),
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
                                str(home), os.environ.get("PYTHONPATH")]))})


def _guard(parent: int, marks: list[str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the trainer's to handle
    while os.getppid() == parent:
        time.sleep(0.25)
    for mark in marks:
        pid, _, started = mark.partition("=")
        if _start_time(int(pid)) == started:  # the same process, not a new one with its number
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass


if __name__ == "__main__" and len(sys.argv) >= 3 and sys.argv[1] == "guard":
    _guard(int(sys.argv[2]), sys.argv[3:])
