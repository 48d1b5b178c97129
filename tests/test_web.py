"""The board in the browser (``cli.py serve``, plugins/web.py): the boards the game
plugins draw, the page's requests over HTTP, the command line, and a real browser
(Chromium driven by Selenium) playing on the page."""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.game import Game, IllegalMoveError
from hexzero.plugins.web import WebBoard, board_svg, headless_chromium, make_server

ROOT = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"


def actions_in(svg: str) -> list[int]:
    """The action numbers a person can click in a board picture (which must be well-formed SVG)."""
    root = ET.fromstring(svg)
    return [int(e.get("data-action")) for e in root.iter() if e.get("data-action") is not None]


def play_some(game, count, seed=0):
    import random

    rng, state, last = random.Random(seed), game.initial_state(), None
    for _ in range(count):
        last = rng.choice(game.legal_actions(state))
        state = game.next_state(state, last)
    return state, last


# ---- the boards the plugins draw ---------------------------------------------------------------
@pytest.mark.parametrize("name, params", [("hex", {"size": 7}), ("go", {"size": 9}), ("gomoku", {"size": 9})])
def test_board_games_draw_every_cell_clickable_with_the_last_move_and_the_heat(name, params):
    game = mctsfw.make_game(name, **params)
    state, last = play_some(game, 6)
    legal = [a for a in game.legal_actions(state) if a != game.pass_action]
    svg = board_svg(game, state, last, {legal[0]: 0.6, legal[1]: 0.3, legal[2]: 0.02, legal[3]: 0.01})
    clickable = actions_in(svg)
    assert sorted(clickable) == list(range(game.size * game.size))  # occupied cells too: the rules refuse them
    root = ET.fromstring(svg)
    assert len([e for e in root.iter() if e.get("class") == "last-move"]) == 1
    assert len([e for e in root.iter() if e.get("class") == "heat"]) == 4
    labels = [e.text for e in root.iter() if e.get("class") == "heat-label"]
    assert labels == ["60", "30", "2"]  # the three most visited, in per cent
    stones = [e for e in root.iter(SVG + "circle") if e.get("r") and float(e.get("r")) > 10 and e.get("class") is None]
    assert len(stones) == 6


def test_hex_colours_each_players_goal_sides():
    game = mctsfw.make_game("hex", size=5)
    root = ET.fromstring(board_svg(game, game.initial_state()))
    goals = [e.get("class") for e in root.iter(SVG + "polygon") if (e.get("class") or "").startswith("goal")]
    assert sorted(goals) == ["goal-1", "goal-1", "goal-2", "goal-2"]


def test_connect_four_columns_and_nim_piles_offer_exactly_the_legal_moves():
    c4 = mctsfw.make_game("connect4")
    state, last = play_some(c4, 5)
    assert actions_in(board_svg(c4, state, last)) == list(range(c4.columns))
    nim = mctsfw.make_game("nim", piles=[3, 4, 5], max_take=3)
    state = nim.next_state(nim.initial_state(), nim.action(0, 2))
    assert sorted(actions_in(board_svg(nim, state))) == sorted(nim.legal_actions(state))


class Countdown(Game):
    """A game no plugin draws: take 1 or 2 from a count; who takes the last wins."""

    name = "countdown-test"
    num_actions = 2
    move_help = "1 or 2"

    def initial_state(self, starting_player=1):
        return (starting_player, 7)

    def current_player(self, state):
        return state[0]

    def legal_actions(self, state):
        return [a for a in (0, 1) if a + 1 <= state[1]]

    def next_state(self, state, action):
        self.check_legal(state, action)
        return (3 - state[0], state[1] - action - 1)

    def is_final(self, state):
        return state[1] == 0

    def winner(self, state):
        return 3 - state[0] if state[1] == 0 else None

    def encode(self, state):
        raise NotImplementedError

    def render(self, state):
        return f"{state[1]} left, player {state[0]} to move"

    def parse_action(self, text, state):
        if text.strip() not in ("1", "2"):
            raise IllegalMoveError(f"cannot read {text!r}: type {self.move_help}")
        action = int(text) - 1
        self.check_legal(state, action)
        return action


def test_a_game_without_a_picture_is_shown_as_text_and_played_by_typing():
    game = Countdown()
    board = WebBoard(game, mctsfw.make_actor("random", game, seed=1))
    shown = board.snapshot()
    assert shown["svg"] is None and shown["text"] == "7 left, player 1 to move"
    board.play(text="2")
    assert board.wait_for_agent()
    assert board.moves[0] == 1 and len(board.moves) == 2
    assert board.snapshot()["record"] == "json"


# ---- the page's requests over HTTP ---------------------------------------------------------
@contextlib.contextmanager
def served(board):
    server = make_server(board, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        board.wait_for_agent()
        board.close()


def call(url, body=None, raw=None, headers=None):
    """(status, JSON answer) of a GET, or of a POST of ``body`` (or of the bytes ``raw``),
    sent as the page sends it (JSON) unless ``headers`` say otherwise."""
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    headers = {**({"Content-Type": "application/json"} if data is not None else {}), **(headers or {})}
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def mcts_board(game, human=1, starting_player=1, **search):
    search.setdefault("search_games", 200)
    return WebBoard(game, mctsfw.make_actor("mcts", game, seed=3, **search), human, starting_player)


def settled(url):
    """The state once the agent has stopped thinking."""
    for _ in range(600):
        status, state = call(url + "/api/state")
        if not state["thinking"]:
            return state
        time.sleep(0.05)
    raise AssertionError("the agent never moved")


def test_a_move_gets_the_agents_answer_and_illegal_or_bad_requests_are_refused_with_the_reason():
    game = mctsfw.make_game("hex", size=5)
    board = mcts_board(game)
    with served(board) as url:
        status, page = 0, urllib.request.urlopen(url + "/", timeout=30).read().decode()
        assert "<svg" not in page and "/api/state" in page  # the page draws what the server sends
        status, state = call(url + "/api/move", {"action": 12})
        assert status == 200
        state = settled(url)
        assert [m["player"] for m in state["moves"]] == [1, 2] and state["moves"][0]["text"] == "c3"
        assert state["your_turn"] and state["last_search"]["simulations"] == 200
        before = state["moves"]
        for body, code, reason in [
            ({"action": 12}, 409, "illegal move: cell c3 is already taken"),
            ({"action": 25}, 400, "action 25 is not one of this game's (0 to 24)"),
            ({"action": "a1"}, 400, "a move is an action number, not 'a1'"),
            ({"text": "z9"}, 409, "illegal move: "),
            ({"human": 3}, 404, None),
        ]:
            path = "/api/move" if "human" not in body else "/api/nothing"
            status, answer = call(url + path, body)
            assert status == code, answer
            assert reason is None or answer["error"].startswith(reason)
        assert call(url + "/api/move", raw=b"{not json")[0] == 400
        assert call(url + "/api/move", raw=b"[1]") == (400, {"error": "the request body is a JSON object"})
        assert call(url + "/api/new", {"human": 3}) == (400, {"error": "human is player 1 or 2, not 3"})
        assert call(url + "/api/undo")[0] == 405  # a change is a POST
        assert call(url + "/api/state")[1]["moves"] == before  # none of that changed the game


def test_undo_new_game_and_swapping_sides():
    game = mctsfw.make_game("connect4")
    board = mcts_board(game)
    with served(board) as url:
        assert call(url + "/api/undo", {}) == (409, {"error": "nothing to undo: you have not moved yet"})
        call(url + "/api/move", {"action": 3})
        settled(url)
        call(url + "/api/move", {"action": 3})
        assert len(settled(url)["moves"]) == 4
        status, state = call(url + "/api/undo", {})
        assert status == 200 and [m["action"] for m in state["moves"]] == [3, board.moves[1]]
        assert state["your_turn"]
        call(url + "/api/swap-sides", {})  # the person takes player 2, whose turn it is not: the agent moves
        state = settled(url)
        assert state["human"] == 2 and len(state["moves"]) == 3 and state["your_turn"]
        call(url + "/api/new", {"human": 2, "starting_player": 1})  # the agent opens a new game
        state = settled(url)
        assert len(state["moves"]) == 1 and state["moves"][0]["player"] == 1 and state["your_turn"]
        record = urllib.request.urlopen(url + "/api/record", timeout=30)
        assert "connect4-game.json" in record.headers["Content-Disposition"]
        assert json.loads(record.read())["moves"] == board.moves


def test_the_agents_thinking_is_shown_live_as_a_heat_map():
    game = mctsfw.make_game("go", size=5)
    board = mcts_board(game, search_games=None, time_limit=1.5)
    with served(board) as url:
        call(url + "/api/move", {"action": 12})
        seen = None
        while seen is None:
            status, state = call(url + "/api/state")
            if state["thinking"] and state["progress"] and 'class="heat"' in state["svg"]:
                seen = state
            assert state["thinking"], "the search ended before it was seen"
            time.sleep(0.05)
        assert seen["progress"]["simulations"] > 0 and 0 <= seen["progress"]["win_estimate"] <= 1
        assert call(url + "/api/undo", {})[1]["error"] == "cannot undo while the agent is thinking: wait for its move"
        state = settled(url)
        assert 'class="heat"' not in state["svg"]
        assert len(state["moves"]) == 2, f"the agent did not move: {state['agent_error']!r}, {state['result']!r}"
        record = urllib.request.urlopen(url + "/api/record", timeout=30).read().decode()
        assert record.startswith("(;FF[4]GM[1]") and "PB[person]" in record


def test_the_page_is_drawn_without_touching_the_game_the_agent_searches_with():
    """A game's caches serve one thread at a time (two threads in Go's legal-move cache
    once lost a search its move): the agent's game is used by the agent's thread alone
    while the page is polled as it thinks."""
    go = type(mctsfw.make_game("go", size=5))

    class Watched(go):
        def kernels(self):  # none: the search runs on the object tree, which asks the game's cache
            return None

        def _legal_array(self, state):  # the legal-move cache itself, whoever asks (mask, moves, list)
            self.threads.add(threading.get_ident())
            return super()._legal_array(state)

    game = Watched(size=5)
    game.threads = set()
    board = mcts_board(game, search_games=None, time_limit=1.0)
    with served(board) as url:
        call(url + "/api/move", {"action": 12})
        polled = 0
        while call(url + "/api/state")[1]["thinking"]:
            polled += 1
            time.sleep(0.05)
        assert polled and len(settled(url)["moves"]) == 2
    assert len(game.threads) == 1  # the search's thread, not the page's


class PieHex(mctsfw.default_registries().games.get("hex")):
    """A stand-in for the pie-rule contract (``Game.swap_offered/swapped``): after the first
    move, the second player may take it, mirrored across the long diagonal."""

    def swap_offered(self, starting_player, moves):
        return len(moves) == 1

    def swapped(self, starting_player, moves):
        if len(moves) != 1:
            raise IllegalMoveError("no swap here")
        r, c = divmod(moves[0], self.size)
        return 3 - starting_player, [c * self.size + r]


def test_the_pie_rule_when_the_game_offers_it():
    game = PieHex(size=5)
    board = mcts_board(game, human=2, starting_player=1)  # the agent opens
    with served(board) as url:
        state = settled(url)
        assert state["swap_offered"]
        first = board.moves[0]
        r, c = divmod(first, 5)
        status, state = call(url + "/api/pie", {})
        assert status == 200
        assert state["moves"][0] == {"action": c * 5 + r, "player": 2, "text": state["moves"][0]["text"]}
        state = settled(url)  # the opener (the agent) moves next
        assert [m["player"] for m in state["moves"]] == [2, 1] and not state["swap_offered"]
        assert call(url + "/api/pie", {})[0] == 409
        # the game after the swap looks like an opening: the swap is not offered again
        call(url + "/api/move", {"action": next(a for a in range(25) if a not in board.moves)})
        settled(url)
        call(url + "/api/undo", {})
        assert [m["player"] for m in call(url + "/api/state")[1]["moves"]] == [2, 1]
        assert not call(url + "/api/state")[1]["swap_offered"]
    plain = mcts_board(mctsfw.make_game("hex", size=5))
    assert not plain.snapshot()["swap_offered"]
    with pytest.raises(Exception, match="no swap here"):
        plain.pie()


class Swapper(mctsfw.actors.RandomActor):
    """An agent that always takes the swap (``Actor.consider_swap`` of the pie-rule contract)."""

    def consider_swap(self, starting_player, moves):
        return True


def test_an_agent_offered_the_swap_may_take_it():
    game = PieHex(size=5)
    board = WebBoard(game, Swapper(game, seed=1))  # the person opens
    with served(board) as url:
        call(url + "/api/move", {"action": 1})  # a2: row 0, column 1
        state = settled(url)
        assert [(m["action"], m["player"]) for m in state["moves"]] == [(5, 2)]  # mirrored: row 1, column 0
        assert state["your_turn"] and not state["swap_offered"]
        assert state["notice"].startswith("the agent took the swap")


GNUGO = shutil.which("gnugo") or shutil.which("gnugo", path="/usr/games")


@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get install gnugo)")
def test_an_outside_gtp_engine_answers_follows_an_undo_and_stops_with_the_board():
    from conftest import descendants, live

    game = mctsfw.make_game("go", size=9)
    before = set(descendants(os.getpid()))  # what earlier tests left running is not the engine
    agent = mctsfw.make_actor(f"gtp:{GNUGO} --mode gtp --level 1", game)
    engine_pids = [pid for pid in descendants(os.getpid()) if pid not in before]
    board = WebBoard(game, agent)
    with served(board) as url:
        call(url + "/api/move", {"action": game.text_to_action("E5")})
        first = settled(url)["moves"][1]["text"]
        call(url + "/api/undo", {})
        call(url + "/api/move", {"action": game.text_to_action("C3")})
        state = settled(url)
        assert [m["text"] for m in state["moves"]][0] == "C3" and len(state["moves"]) == 2 and first
        assert state["agent_error"] is None  # the engine was told the game after the undo, and its answer is legal
    assert engine_pids and not live(engine_pids)  # the board let the engine go


# ---- the command line ------------------------------------------------------------------------------
def run_cli(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


@pytest.mark.parametrize("args, message", [
    (("--p2", "human"), "error: --p2 human: the web board's opponent is an agent"),
    (("--p2", "nobody"), "error: play.player2: must be human, random, mcts"),
    (("--port", "70000"), "serve.port"),
])
def test_serve_refuses_bad_options_in_one_line(args, message):
    done = run_cli("serve", *args)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_serve_on_a_port_in_use_says_so_in_one_line():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli("serve", "--game", "nim", "--p2", "random", "--port", str(port))
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: cannot serve on 127.0.0.1:{port}: ") \
        and len(done.stderr.strip().splitlines()) == 1


def start_serve(processes, *args):
    process = processes.start([sys.executable, ROOT / "cli.py", "serve", "--port", "0", *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    line = process.stdout.readline()
    assert "open http://" in line, line + process.stderr.read()
    return process, line.split("open ")[1].split()[0].rstrip("/")


@pytest.mark.parametrize("stop", ["ctrl_c", "terminate"])
def test_serve_from_the_command_line_answers_and_ctrl_c_or_sigterm_stops_it(processes, stop):
    process, url = start_serve(processes, "--game", "nim", "--p2", "random", "--host", "127.0.0.1")
    assert url.startswith("http://127.0.0.1:")
    status, state = call(url + "/api/state")
    assert status == 200 and state["game"] == "nim" and state["agent"]["label"] == "random"
    getattr(processes, stop)(process)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0 and err.strip() == "stopped"
    with pytest.raises(urllib.error.URLError):  # the socket is closed
        urllib.request.urlopen(url + "/api/state", timeout=5)


def test_serve_warns_when_other_machines_can_reach_it(processes):
    process, url = start_serve(processes, "--game", "nim", "--p2", "random", "--host", "0.0.0.0")
    processes.ctrl_c(process)
    out, err = process.communicate(timeout=30)
    assert err.startswith("warning: serving on 0.0.0.0: other machines")


# ---- requests from elsewhere, many clients, clients that hang up --------------------------------
def test_a_cross_site_page_cannot_play_and_a_rebound_host_name_is_refused():
    game = mctsfw.make_game("hex", size=5)
    board = WebBoard(game, mctsfw.make_actor("random", game, seed=1))
    with served(board) as url:
        own = url.removeprefix("http://")
        # a form or fetch on another site: text/plain needs no preflight, so the browser sends it
        status, answer = call(url + "/api/move", raw=b'{"action": 12}', headers={"Content-Type": "text/plain",
                                                                                  "Origin": "http://evil.example"})
        assert status == 403 and "evil.example" in answer["error"]
        status, answer = call(url + "/api/move", raw=b'{"action": 12}', headers={"Content-Type": "text/plain"})
        assert status == 415 and "application/json" in answer["error"]
        status, answer = call(url + "/api/move", {"action": 12}, headers={"Origin": "http://evil.example"})
        assert status == 403
        # DNS rebinding: a page on evil.example whose name now points here
        for body in (None, {"action": 12}):
            status, answer = call(url + "/api/state" if body is None else url + "/api/move", body,
                                  headers={"Host": "evil.example:" + own.split(":")[1]})
            assert status == 403 and "not this board's" in answer["error"]
        assert call(url + "/api/state")[1]["moves"] == []  # nothing was played
        status, state = call(url + "/api/move", {"action": 12}, headers={"Origin": url, "Host": own})
        assert status == 200 and [m["action"] for m in state["moves"]][:1] == [12]  # the board's own page plays
        status, _ = call(url.replace("127.0.0.1", "localhost") + "/api/state")
        assert status == 200


def test_twenty_clients_at_once_are_all_answered_and_a_client_that_hangs_up_is_no_traceback(capfd):
    import socket

    game = mctsfw.make_game("hex", size=5)
    board = WebBoard(game, mctsfw.make_actor("random", game, seed=1))
    with served(board) as url:
        port = int(url.rsplit(":", 1)[1])
        results = []

        def client():
            results.append(call(url + "/api/state")[0])

        threads = [threading.Thread(target=client) for _ in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert results == [200] * 20
        for partial in (b"POST /api/move HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 500\r\n\r\n{", b"GET /api/sta"):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(partial)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        time.sleep(0.5)
        assert call(url + "/api/state")[0] == 200  # still serving
    assert "Traceback" not in capfd.readouterr().err


def test_the_person_may_resign_and_may_stop_the_agents_search():
    game = mctsfw.make_game("hex", size=5)
    board = WebBoard(game, mctsfw.make_actor("mcts", game, seed=3, search_games=10 ** 7), human=1)
    with served(board) as url:
        call(url + "/api/move", {"action": 12})
        assert call(url + "/api/state")[1]["thinking"]
        started = time.perf_counter()
        status, state = call(url + "/api/stop", {})
        assert status == 200 and "asked to stop" in state["notice"]
        state = settled(url)
        assert time.perf_counter() - started < 10  # ten million search games were not run
        assert [m["player"] for m in state["moves"]] == [1, 2] and state["your_turn"]
        status, answer = call(url + "/api/stop", {})
        assert status == 409 and "not thinking" in answer["error"]
        call(url + "/api/move", {"action": 0 if state["moves"][1]["action"] != 0 else 1})
        status, state = call(url + "/api/resign", {})  # while the agent thinks: its move is not played
        assert status == 200 and state["over"] and state["winner"] == 2 and "resigned" in state["result"]
        state = settled(url)
        assert len(state["moves"]) == 3 and state["over"]
        status, answer = call(url + "/api/resign", {})
        assert status == 409 and "over" in answer["error"]
        random_board = WebBoard(game, mctsfw.make_actor("random", game, seed=1), human=2)
        random_board.wait_for_agent()
        with pytest.raises(Exception, match="not thinking"):
            random_board.stop()


# ---- a real browser -------------------------------------------------------------------------------
def browser():
    """Headless Chromium driven by Selenium, or a skip saying what is missing."""
    try:
        return headless_chromium()
    except RuntimeError as missing:
        pytest.skip(str(missing))


def wait_for(condition, seconds=60.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("the page never showed it")


def click_cell(driver, action):
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, f'#board [data-action="{action}"]').click()


@pytest.mark.browser
def test_a_browser_plays_a_move_sees_the_answer_and_an_illegal_click_refused():
    from_page = browser()
    game = mctsfw.make_game("hex", size=5)
    board = mcts_board(game)
    try:
        with served(board) as url:
            from selenium.webdriver.common.by import By

            driver = from_page
            driver.get(url + "/")
            wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#board svg"))
            assert "your move" in driver.find_element(By.ID, "status").text
            click_cell(driver, 12)
            # the agent's answer appears on the page: two moves listed, the person's turn again
            wait_for(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#moves li")) == 2
                     and "your move" in driver.find_element(By.ID, "status").text)
            assert driver.find_elements(By.CSS_SELECTOR, "#moves li")[0].text == "player 1: c3"
            click_cell(driver, board.moves[1])  # the agent's stone
            message = wait_for(lambda: driver.find_element(By.ID, "message").text)
            assert message.startswith("refused: illegal move: cell") and "already taken" in message
            assert driver.find_element(By.ID, "message").get_attribute("class") == "refusal"
            assert len(driver.find_elements(By.CSS_SELECTOR, "#moves li")) == 2
    finally:
        from_page.quit()
