"""The board in the browser: ``cli.py serve`` plays a person against an agent on a web page.

One game per server: ``WebBoard`` holds it (the moves from the start, who opened, which
player the person is) and the agent, and answers the page's requests; ``make_server``
puts it behind the standard library's ``ThreadingHTTPServer`` (no web framework to
install, no front-end build: the page is one HTML document with plain JavaScript).

The board is drawn by the game's plugin through the ``mctsfw_board_svg`` hook; a click
sends the ``data-action`` number of the place clicked, and the rules judge it here: an
illegal move, a move out of turn or an unreadable request is answered 4xx with the
reason as ``{"error": ...}`` and changes nothing. A game no plugin draws is shown as its
``render`` text with a box for typed moves.

The agent thinks on a thread of its own, never on a request's: the page polls
``/api/state`` and sees the search grow (``Actor.watch``: visits as a heat map, the win
estimate, seconds). While it thinks, changes to the game (undo, new game, swap) are
refused with the reason rather than pulling the position from under the search; the
person may stop the search (the agent plays its best move so far) or resign.

Only the board's own page plays (``BoardRequestHandler._foreign``): a POST is JSON and, with
an ``Origin``, comes from the board's address; a ``Host`` naming another site is refused.
"""

from __future__ import annotations

import copy
import ipaddress
import json
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from hexzero import mctsfw
from hexzero.mctsfw.actors import Actor, ActorError, Resignation
from hexzero.mctsfw.game import Game, IllegalMoveError
from hexzero.mctsfw.search import SearchProgress
from hexzero.mctsfw.records import game_line
from hexzero.mctsfw.schema import Section, Setting
from hexzero.mctsfw.sgf import resigned_result, to_sgf

#: ``[serve]``: where ``cli.py serve`` listens
SERVE_SECTION = Section("serve", "the web board (cli.py serve)", [
    Setting("host", "127.0.0.1", "the address the web board listens on; anything but 127.0.0.1/localhost/::1 "
            "lets other machines play on it", resumable=True),
    Setting("port", 8000, "the web board's port (0: any free port, printed at the start)", low=0, high=65535,
            resumable=True),
])

#: the addresses that serve only this machine
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
#: the largest request body read (a move is a few bytes)
MAX_BODY = 10_000


class BoardError(Exception):
    """A request the board refuses: the HTTP status and the reason shown to the person."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def board_svg(game: Game, state, last_action: int | None = None, heat: dict[int, float] | None = None) -> str | None:
    """The game plugin's SVG picture of ``state`` (``mctsfw_board_svg``), None when no plugin draws it."""
    return mctsfw.default_registries().hook.mctsfw_board_svg(game=game, state=state, last_action=last_action,
                                                             heat=heat)


class WebBoard:
    """One game between a person and an agent, as the web page sees it.

    ``human`` is the player the person moves for (1 or 2), ``starting_player`` who opened.
    Every method that changes the game takes the lock, so the page's requests (served on
    threads of their own) and the agent's thread see one consistent game.
    """

    def __init__(self, game: Game, agent: Actor, human: int = 1, starting_player: int = 1):
        if human not in (1, 2) or starting_player not in (1, 2):
            raise ValueError("the person and the starting player are player 1 or 2")
        # the page's own copy of the game: the agent searches with the one it was made with, on
        # its own thread, while the page is drawn on others, and a game's caches serve one
        # thread at a time (two threads in Go's legal-move cache lost a search its move)
        self.game = copy.deepcopy(game)
        self.agent = agent
        self.human = human
        self.starting_player = starting_player
        self.moves: list[int] = []
        self.movers: list[int] = []  # who played each move
        self.move_texts: list[str] = []  # each move as people write it
        self._state = game.initial_state(starting_player)
        self.resigned: int | None = None
        self.thinking = False
        self.progress: SearchProgress | None = None
        self.last_search: dict | None = None  # the agent's last finished search, summed up
        self.agent_error: str | None = None
        self.notice: str | None = None  # what the agent did besides moving (it took the swap)
        self.swap_taken = False  # a game after the swap looks like an opening: the swap is not offered twice
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self.agent.watch(self._watched)
        self.agent.reset()
        self._agent_moves_if_its_turn()

    # ---- the position --------------------------------------------------------------------
    def state(self):
        """The position after ``moves`` (kept, not replayed: the page asks several times a second)."""
        return self._state

    def _push(self, action: int) -> None:
        state = self._state
        after = self.game.next_state(state, action)  # an illegal move raises before anything changes
        self.movers.append(self.game.current_player(state))
        self.move_texts.append(self.game.action_to_text(action, state))
        self.moves.append(int(action))
        self._state = after

    def over(self) -> bool:
        return self.resigned is not None or self.game.is_final(self.state())

    def winner(self) -> int | None:
        return 3 - self.resigned if self.resigned is not None else self.game.winner(self.state())

    def swap_offered(self) -> bool:
        """Whether the pie rule may be used now (``Game.swap_offered``, and not taken yet)."""
        return (not self.swap_taken and not self.over()
                and self.game.swap_offered(self.starting_player, list(self.moves)))

    # ---- what the page shows -------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Everything the page draws, as JSON-ready values."""
        with self._lock:
            game, state = self.game, self.state()
            last = self.moves[-1] if self.moves else None
            progress = self.progress if self.thinking else None
            heat = None
            if progress is not None and progress.visits:
                total = sum(progress.visits.values())
                heat = {a: n / total for a, n in progress.visits.items()}
            over = self.over()
            to_move = None if over else game.current_player(state)
            return {
                "game": game.name,
                "title": repr(game),
                "svg": board_svg(game, state, last, heat),
                "text": game.render(state),
                "move_help": game.move_help,
                "moves": [{"action": a, "player": p, "text": t}
                          for a, p, t in zip(self.moves, self.movers, self.move_texts)],
                "human": self.human,
                "agent": {"player": 3 - self.human, "label": self.agent.label},
                "starting_player": self.starting_player,
                "to_move": to_move,
                "your_turn": to_move == self.human and not self.thinking,
                "thinking": self.thinking,
                "progress": _progress_json(game, state, progress) if progress else None,
                "last_search": self.last_search,
                "over": over,
                "winner": self.winner() if over else None,
                "result": self._result_text() if over else None,
                "swap_offered": self.swap_offered() and to_move == self.human and not self.thinking,
                "pass_action": game.pass_action if (not over and game.pass_action is not None
                                                    and game.pass_action in game.legal_actions(state)) else None,
                "agent_error": self.agent_error,
                "notice": self.notice,
                "record": "sgf" if game.sgf_game is not None else "json",
            }

    def _result_text(self) -> str:
        winner = self.winner()
        if self.resigned is not None:
            who = "you" if self.resigned == self.human else "the agent"
            return f"player {self.resigned} ({who}) resigned: player {winner} wins"
        if winner is None:
            return "a draw"
        return f"player {winner} wins: " + ("you win" if winner == self.human else "the agent wins")

    # ---- the person's requests -----------------------------------------------------------
    def play(self, action: Any = None, text: Any = None) -> None:
        """The person's move: an action number (a click) or typed text (``game.parse_action``)."""
        with self._lock:
            self._check_idle("move")
            state = self.state()
            if self.over():
                raise BoardError(HTTPStatus.CONFLICT, "the game is over: start a new one")
            if self.game.current_player(state) != self.human:
                raise BoardError(HTTPStatus.CONFLICT, "it is the agent's turn")
            try:
                if text is not None:
                    if not isinstance(text, str):
                        raise BoardError(HTTPStatus.BAD_REQUEST, "a typed move is a string")
                    action = self.game.parse_action(text, state)
                else:
                    if isinstance(action, bool) or not isinstance(action, int):
                        raise BoardError(HTTPStatus.BAD_REQUEST, f"a move is an action number, not {action!r}")
                    if not 0 <= action < self.game.num_actions:
                        raise BoardError(HTTPStatus.BAD_REQUEST, f"action {action} is not one of this game's "
                                                                 f"(0 to {self.game.num_actions - 1})")
                    self.game.check_legal(state, action)
                    self.game.next_state(state, action)  # a game's own refusals (ko, suicide) with its reason
            except IllegalMoveError as error:
                raise BoardError(HTTPStatus.CONFLICT, f"illegal move: {error}") from None
            self._push(action)
            self.agent_error = None
            self._agent_moves_if_its_turn()

    def new_game(self, human: Any = None, starting_player: Any = None) -> None:
        """A new game; ``human`` and ``starting_player`` (1 or 2) change sides and who opens."""
        for name, value in (("human", human), ("starting_player", starting_player)):
            if value is not None and (value not in (1, 2) or isinstance(value, bool)):
                raise BoardError(HTTPStatus.BAD_REQUEST, f"{name} is player 1 or 2, not {value!r}")
        with self._lock:
            self._check_idle("start a new game")
            self.human = human or self.human
            self.starting_player = starting_player or self.starting_player
            self._restart([], self.starting_player)

    def undo(self) -> None:
        """Take back the person's last move and the agent's answer to it."""
        with self._lock:
            self._check_idle("undo")
            if self.human not in self.movers:
                raise BoardError(HTTPStatus.CONFLICT, "nothing to undo: you have not moved yet")
            keep = len(self.movers) - 1 - self.movers[::-1].index(self.human)  # the person's last move goes
            self._restart(self.moves[:keep], self.starting_player)

    def swap_sides(self) -> None:
        """The person takes the other player's side of this game; the agent takes theirs."""
        with self._lock:
            self._check_idle("swap sides")
            self.human = 3 - self.human
            self._restart(list(self.moves), self.starting_player)

    def pie(self) -> None:
        """The pie rule: the person, second to move, takes the opening stone
        (``Game.swapped``: Hex mirrors it to the person's side, and the opener moves next)."""
        with self._lock:
            self._check_idle("swap")
            if not self.swap_offered():
                raise BoardError(HTTPStatus.CONFLICT, "no swap here: the pie rule is offered only to the second "
                                                      "player, right after the first move, in a game that has it")
            if self.game.current_player(self.state()) != self.human:
                raise BoardError(HTTPStatus.CONFLICT, "the swap is the agent's to decide")
            starting, moves = self.game.swapped(self.starting_player, list(self.moves))
            self._restart(list(moves), starting, swap_taken=True)

    def resign(self) -> None:
        """The person resigns the game (also while the agent thinks: its search is stopped
        and its move not played)."""
        with self._lock:
            if self.over():
                raise BoardError(HTTPStatus.CONFLICT, "the game is over: start a new one")
            self.resigned = self.human
            if self.thinking:
                self.agent.interrupt()

    def stop(self) -> None:
        """The agent's search is asked to end now: it plays the best move found so far."""
        with self._lock:
            if not self.thinking:
                raise BoardError(HTTPStatus.CONFLICT, "the agent is not thinking")
            if not self.agent.interrupt():
                raise BoardError(HTTPStatus.CONFLICT, f"{self.agent.label} does not search: it cannot be stopped")
            self.notice = "the agent was asked to stop: it plays the best move it has found"

    def record(self) -> tuple[str, str, str]:
        """(file name, content type, text) of the game so far: SGF where the game has it,
        else the move list as JSON (``mctsfw.records.game_line``)."""
        with self._lock:
            players = {self.human: "person", 3 - self.human: self.agent.label}
            if self.game.sgf_game is not None:
                text = to_sgf(self.game, self.moves, self.starting_player, resigned_result(self.resigned),
                              players=players, DT=time.strftime("%Y-%m-%d"))
                return f"{self.game.name}-game.sgf", "application/x-go-sgf", text
            line = game_line(self.game, self.starting_player, self.moves, self.winner() if self.over() else None)
            line["players"] = {str(p): name for p, name in players.items()}
            return f"{self.game.name}-game.json", "application/json", json.dumps(line, indent=1) + "\n"

    def close(self) -> None:
        """Let the agent go (an outside engine is stopped)."""
        self.agent.watch(None)
        self.agent.close()

    def wait_for_agent(self, timeout: float = 60.0) -> bool:
        """Wait until the agent is not thinking (tests and scripts); False if it still is."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return not self.thinking

    # ---- the agent ---------------------------------------------------------------------------
    def _check_idle(self, what: str) -> None:
        if self.thinking:
            raise BoardError(HTTPStatus.CONFLICT, f"cannot {what} while the agent is thinking: wait for its move")

    def _restart(self, moves: list[int], starting_player: int, swap_taken: bool | None = None) -> None:
        """Set the game to ``moves`` from ``starting_player``'s start; the agent forgets its
        search tree and (an outside engine) learns the moves. A swap taken stays taken
        (``swap_taken`` None) while moves remain of the game after it."""
        self.game.state_after(moves, starting_player)  # an illegal sequence raises before anything changes
        self.moves, self.movers, self.move_texts = [], [], []
        self.starting_player, self._state = starting_player, self.game.initial_state(starting_player)
        for action in moves:
            self._push(action)
        self.resigned = None
        self.swap_taken = bool(moves) and (self.swap_taken if swap_taken is None else swap_taken)
        self.progress = self.last_search = self.agent_error = self.notice = None
        try:
            self.agent.reset()
            if moves:
                self.agent.opening_played(starting_player, list(moves))
        except ActorError as failure:  # an outside engine that died: the page says so and stays up
            self.agent_error = f"the agent failed: {failure}"
            return
        self._agent_moves_if_its_turn()

    def _agent_moves_if_its_turn(self) -> None:
        if self.over() or self.game.current_player(self.state()) == self.human:
            return
        self.thinking, self.progress = True, None
        self._thread = threading.Thread(target=self._think, args=(self.state(), len(self.moves), self.swap_offered()),
                                        name="web-board-agent", daemon=True)
        self._thread.start()

    def _watched(self, progress: SearchProgress) -> None:
        self.progress = progress

    def _think(self, state, ply: int, swap_offered: bool) -> None:
        """The agent's move, on its own thread; the lock is taken only to put it on the board.
        Offered the pie rule's swap, it first decides whether to take it (``Actor.consider_swap``)."""
        if swap_offered and self._agent_swaps(ply):
            return
        started = time.perf_counter()
        action, resigned, error = None, False, None
        try:
            action = self.agent.select_action(state)
        except Resignation:
            resigned = True
        except Exception as failure:  # an outside engine that died, a broken plugin: shown, the page goes on
            error = f"the agent failed: {type(failure).__name__}: {failure}" if not isinstance(failure, ActorError) \
                else f"the agent failed: {failure}"
        with self._lock:
            seconds = time.perf_counter() - started
            mover = self.game.current_player(state)
            if ply == len(self.moves) and self.resigned is None:  # still the position it thought about, the game on
                if resigned:
                    self.resigned = mover
                elif action is not None:
                    try:
                        self._push(action)
                    except IllegalMoveError as illegal:
                        error = f"the agent chose an illegal move: {illegal}"
                progress = self.progress
                self.last_search = {"seconds": round(seconds, 2)}
                if progress is not None:
                    self.last_search.update(_progress_json(self.game, state, progress))
                    self.last_search["seconds"] = round(seconds, 2)
                self.agent_error = error
            self.thinking = False


    def _agent_swaps(self, ply: int) -> bool:
        """Whether the agent took the swap it was offered (then the person, the opener, moves)."""
        moves = list(self.moves)
        try:
            swaps = bool(self.agent.consider_swap(self.starting_player, moves))
        except Exception as failure:
            swaps, self.agent_error = False, f"the agent failed to decide on the swap: {failure}"
        if not swaps:
            return False
        with self._lock:
            if ply == len(self.moves):
                starting, swapped = self.game.swapped(self.starting_player, moves)
                self._restart(list(swapped), starting, swap_taken=True)
                self.notice = "the agent took the swap (pie rule): your opening stone, mirrored, is now its"
            self.thinking = False
        return True


def _progress_json(game: Game, state, progress: SearchProgress) -> dict[str, Any]:
    best = progress.best_action
    return {
        "simulations": progress.simulations,
        "seconds": round(progress.seconds, 2),
        "win_estimate": round(progress.win_estimate, 3),
        "verdict": progress.verdict(),  # "wins in 3" once the root is proven, else null
        "best": None if best is None else game.action_to_text(best, state),
        "best_share": round(progress.share(best), 3) if best is not None else None,
    }


# ---- HTTP ----------------------------------------------------------------------------------------
def make_server(board: WebBoard, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """A server for ``board`` bound to ``host:port`` (port 0: a free one, ``server.server_port``)."""

    class Handler(BoardRequestHandler):
        pass

    Handler.board = board
    names = {*LOCAL_HOSTS, host.strip("[]").lower()}
    if host not in LOCAL_HOSTS:  # served to other machines: they may name this one
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    Handler.host_names = frozenset(names)
    server = BoardServer((host, port), Handler)
    return server


class BoardServer(ThreadingHTTPServer):
    """The standard library's threading server with room for many connections at once (its
    listen backlog is 5 by default: a burst of clients had connections reset), a thread a
    request that does not keep the program alive, and a client that hangs up mid-request
    costing nothing but its request: no traceback in the person's terminal."""

    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request, client_address) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):  # the client went away: nothing to say
            return
        print(f"web board: a request from {client_address[0]} failed: {type(error).__name__}: {error}",
              file=sys.stderr)


class BoardRequestHandler(BaseHTTPRequestHandler):
    """The page (``/``), the game as JSON (``/api/state``), the person's requests (POST
    ``/api/move``, ``/api/new``, ``/api/undo``, ``/api/swap-sides``, ``/api/pie``) and the
    record (``/api/record``)."""

    board: WebBoard
    host_names: frozenset[str] = frozenset(LOCAL_HOSTS)  # the names the board is reached by (the Host header)
    server_version = "hexzero-web"
    timeout = 30  # seconds a client may take to send its request before the connection is closed
    POSTS = {
        "/api/move": lambda board, body: board.play(body.get("action"), body.get("text")),
        "/api/new": lambda board, body: board.new_game(body.get("human"), body.get("starting_player")),
        "/api/undo": lambda board, body: board.undo(),
        "/api/swap-sides": lambda board, body: board.swap_sides(),
        "/api/pie": lambda board, body: board.pie(),
        "/api/resign": lambda board, body: board.resign(),
        "/api/stop": lambda board, body: board.stop(),
    }

    def log_message(self, format: str, *args) -> None:  # the terminal shows the game's address, not every poll
        pass

    def _foreign(self, post: bool) -> str | None:
        """Why a request from elsewhere is refused, or None. The Host header must name this
        board (a local name, an address, the host it serves): another name is a DNS
        rebinding page reading or playing the game. A POST must come from the board's own
        page (an ``Origin`` header, which browsers send, naming this server) and be JSON (a
        cross-site form or ``text/plain`` request could otherwise play moves unasked)."""
        host = (self.headers.get("Host") or "").strip().lower()
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 or host.startswith("[") and "]:" in host else host
        name = name.strip("[]")
        if not host or not (name in self.host_names or _is_address(name)):
            return f"the Host {host!r} is not this board's: open it as http://localhost:{self.server.server_port}/"
        if post:
            origin = self.headers.get("Origin")
            if origin is not None and origin.lower() != f"http://{host}":
                return f"a request from the page {origin!r} is not the board's own"
            content_type = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
            if content_type != "application/json":
                return "a request is JSON: Content-Type: application/json"
        return None

    def do_GET(self) -> None:
        refusal = self._foreign(post=False)
        if refusal:
            self._json(HTTPStatus.FORBIDDEN, {"error": refusal})
            return
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, PAGE.encode(), "text/html; charset=utf-8")
        elif path == "/api/state":
            self._json(HTTPStatus.OK, self.board.snapshot())
        elif path == "/api/record":
            name, content_type, text = self.board.record()
            self._send(HTTPStatus.OK, text.encode(), content_type,
                       {"Content-Disposition": f'attachment; filename="{name}"'})
        elif path in self.POSTS:
            self._json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"{path} takes POST"})
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {path}"})

    def do_POST(self) -> None:
        refusal = self._foreign(post=True)
        if refusal:
            status = HTTPStatus.UNSUPPORTED_MEDIA_TYPE if refusal.startswith("a request is JSON") else HTTPStatus.FORBIDDEN
            self._json(status, {"error": refusal})
            return
        path = self.path.split("?", 1)[0]
        action = self.POSTS.get(path)
        if action is None:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such request: POST {path}"})
            return
        try:
            action(self.board, self._body())
        except BoardError as refusal:
            self._json(refusal.status, {"error": refusal.reason})
            return
        self._json(HTTPStatus.OK, self.board.snapshot())

    def _body(self) -> dict:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise BoardError(HTTPStatus.BAD_REQUEST, "Content-Length is not a number") from None
        if length > MAX_BODY:
            raise BoardError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"a request body is at most {MAX_BODY} bytes")
        raw = self.rfile.read(length) if length else b""
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise BoardError(HTTPStatus.BAD_REQUEST, "the request body is not JSON") from None
        if not isinstance(body, dict):
            raise BoardError(HTTPStatus.BAD_REQUEST, "the request body is a JSON object")
        return body

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _send(self, status: int, data: bytes, content_type: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


def _is_address(name: str) -> bool:
    """Whether ``name`` is an IP address (no DNS name can be rebound to it)."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def serve(board: WebBoard, host: str, port: int, announce: Callable[[str], None] = print) -> None:
    """Serve ``board`` until Ctrl-C; the agent (an outside engine) is let go at the end."""
    try:
        server = make_server(board, host, port)
        try:
            shown = f"[{host}]" if ":" in host else host
            announce(f"{board.game!r} against {board.agent.label}: open http://{shown}:{server.server_port}/ "
                     "(Ctrl-C stops)")
            server.serve_forever(poll_interval=0.2)
        finally:
            server.server_close()
    finally:
        board.close()


def headless_chromium(width: int = 1100, height: int = 900):
    """A Selenium driver of the system's Chromium, headless and without the sandbox (which
    refuses to run as root), for the browser test and the documentation's screenshots.
    RuntimeError saying what to install when Selenium, Chromium or its driver is missing."""
    import shutil

    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        raise RuntimeError("selenium is not installed: pip install -e '.[browser]'") from None
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        raise RuntimeError("Chromium and its driver are not installed: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(driver), options=options)


@mctsfw.hookimpl
def mctsfw_config_sections():
    return [SERVE_SECTION]


PAGE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>hexzero board</title>
<style>
 body { font-family: sans-serif; margin: 1em 2em; color: #222; }
 #main { display: flex; gap: 2em; align-items: flex-start; flex-wrap: wrap; }
 #board svg { max-width: 90vw; max-height: 80vh; height: auto; }
 #board .cell { cursor: pointer; }
 #board .cell:hover { fill: rgba(0, 0, 0, 0.12); }
 #board pre { font-size: 15px; background: #f6f6f6; padding: 0.5em; }
 #side { min-width: 18em; max-width: 28em; }
 button { margin: 0.15em 0.2em 0.15em 0; padding: 0.3em 0.7em; }
 #status { font-weight: bold; margin: 0.4em 0; }
 #message { min-height: 1.3em; margin: 0.4em 0; }
 #message.refusal { color: #b00020; }
 #thinking { color: #444; min-height: 1.3em; }
 #moves { font-family: monospace; max-height: 14em; overflow-y: auto; }
 fieldset { margin: 0.6em 0; }
</style>
</head>
<body>
<h2 id="title">hexzero</h2>
<div id="main">
 <div id="board"></div>
 <div id="side">
  <div id="status"></div>
  <div id="message"></div>
  <div id="thinking"></div>
  <form id="typed" hidden><input id="typed-move" size="10"> <button type="submit">move</button>
   <div id="move-help"></div></form>
  <div>
   <button id="undo">undo</button>
   <button id="swap-sides">swap sides</button>
   <button id="pie" hidden>swap (pie rule)</button>
   <button id="pass" hidden>pass</button>
   <button id="stop" hidden>stop thinking</button>
   <button id="resign">resign</button>
   <a id="record" href="/api/record" download>download the record</a>
  </div>
  <fieldset><legend>new game</legend>
   you play <select id="human"><option value="1">player 1</option><option value="2">player 2</option></select>,
   <select id="starter"><option value="1">player 1</option><option value="2">player 2</option></select> opens
   <button id="new">new game</button>
  </fieldset>
  <div>moves:</div><ol id="moves"></ol>
 </div>
</div>
<script>
"use strict";
let current = null, polling = null;

function $(id) { return document.getElementById(id); }

function say(text, refusal) {
  $("message").textContent = text || "";
  $("message").className = refusal ? "refusal" : "";
}

async function request(path, body) {
  const options = body === undefined ? {} :
    {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)};
  let answer;
  try { answer = await fetch(path, options); }
  catch (e) { say("the server does not answer: is cli.py serve still running?", true); return null; }
  const value = await answer.json();
  if (!answer.ok) { say("refused: " + value.error, true); return null; }
  return value;
}

function percent(x) { return (100 * x).toFixed(0) + "%"; }

function show(s) {
  current = s;
  $("title").textContent = s.title;
  $("board").innerHTML = s.svg || "";
  if (!s.svg) {
    const pre = document.createElement("pre");
    pre.textContent = s.text;
    $("board").appendChild(pre);
  }
  $("typed").hidden = !!s.svg;
  $("move-help").textContent = "type " + s.move_help;
  let status;
  if (s.over) status = s.result;
  else if (s.thinking) status = "the agent (" + s.agent.label + ", player " + s.agent.player + ") is thinking...";
  else if (s.your_turn) status = "your move: you are player " + s.human;
  else status = "player " + s.to_move + " to move";
  $("status").textContent = status;
  const p = s.thinking ? s.progress : s.last_search;
  let think = "";
  if (p && p.simulations !== undefined) {
    think = (s.thinking ? "thinking: " : "agent's last search: ") + p.simulations + " simulations, " +
      p.seconds.toFixed(1) + " s, " + (p.verdict ? "proven: " + p.verdict : "win estimate " + percent(p.win_estimate)) +
      (p.best ? ", best " + p.best + " (" + percent(p.best_share) + " of visits)" : "");
  } else if (s.thinking) think = "thinking...";
  else if (p) think = "the agent moved in " + p.seconds.toFixed(1) + " s";
  $("thinking").textContent = think;
  if (s.agent_error) say(s.agent_error, true);
  else if (s.notice) say(s.notice, false);
  $("pie").hidden = !s.swap_offered;
  $("pass").hidden = s.pass_action === null || !s.your_turn;
  $("stop").hidden = !s.thinking;
  $("resign").disabled = s.over;
  $("record").textContent = "download the record (" + s.record.toUpperCase() + ")";
  $("human").value = String(s.human);
  $("starter").value = String(s.starting_player);
  const list = $("moves");
  list.innerHTML = "";
  for (const m of s.moves) {
    const item = document.createElement("li");
    item.textContent = "player " + m.player + ": " + m.text;
    list.appendChild(item);
  }
  list.scrollTop = list.scrollHeight;
  clearTimeout(polling);
  if (s.thinking) polling = setTimeout(refresh, 250);
}

async function refresh() {
  const s = await request("/api/state");
  if (s) show(s);
}

async function post(path, body) {
  const s = await request(path, body || {});
  if (s) { say(""); show(s); }
}

$("board").addEventListener("click", (event) => {
  const target = event.target.closest("[data-action]");
  if (target) post("/api/move", {action: Number(target.dataset.action)});
});
$("typed").addEventListener("submit", (event) => {
  event.preventDefault();
  post("/api/move", {text: $("typed-move").value});
  $("typed-move").value = "";
});
$("undo").onclick = () => post("/api/undo");
$("swap-sides").onclick = () => post("/api/swap-sides");
$("pie").onclick = () => post("/api/pie");
$("pass").onclick = () => post("/api/move", {action: current.pass_action});
$("stop").onclick = () => post("/api/stop");
$("resign").onclick = () => { if (confirm("Resign this game?")) post("/api/resign"); };
$("new").onclick = () => post("/api/new", {human: Number($("human").value), starting_player: Number($("starter").value)});
refresh();
</script>
</body>
</html>
"""
