"""Pictures of the web board for the documentation (docs/playing.md), taken by the browser of the browser test.

    python scripts/web_screenshots.py [--out docs]

Writes ``web-hex.png`` (7x7 Hex) and ``web-go.png`` (9x9 Go): a few moves of a person
(scripted, seeded) against MCTS, then the person's next move, and the picture is taken
while the agent thinks about its answer, so the heat map of its visits, its win estimate
and the seconds show. Needs Selenium and the system Chromium (``pip install -e
'.[browser]'``; ``apt-get install chromium chromium-driver``).
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hexzero import mctsfw  # noqa: E402
from hexzero.plugins.web import WebBoard, headless_chromium, make_server  # noqa: E402

#: (file, game, parameters, the person's moves before the picture, the agent's seconds a move)
SHOTS = [
    ("web-hex.png", "hex", {"size": 7}, 4, 4.0),
    ("web-go.png", "go", {"size": 9}, 6, 4.0),
]


def take(driver, out: Path, name: str, params: dict, person_moves: int, seconds: float, seed: int = 7) -> None:
    game = mctsfw.make_game(name, **params)
    agent = mctsfw.make_actor("mcts", game, search_games=None, time_limit=seconds, seed=seed)
    board = WebBoard(game, agent)
    server = make_server(board, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    rng = random.Random(seed)
    try:
        agent.time_limit, agent.search_games = None, 300  # quick answers for the opening
        centre = game.num_actions // 2 if name == "hex" else (params["size"] // 2) * (params["size"] + 1)
        for number in range(person_moves + 1):
            if number == person_moves:
                agent.search_games, agent.time_limit = None, seconds  # think long enough to be seen
            legal = [a for a in game.search_actions(board.state()) if a != game.pass_action]
            board.play(centre if number == 0 and centre in legal else rng.choice(legal))
            if number < person_moves:
                board.wait_for_agent()
        driver.get(f"http://127.0.0.1:{server.server_port}/")
        end = time.monotonic() + seconds
        while time.monotonic() < end and "simulations" not in driver.find_element("id", "thinking").text:
            time.sleep(0.1)
        time.sleep(min(1.5, seconds / 2))  # a search that has grown
        target = out / name_of(name)
        driver.find_element("id", "main").screenshot(str(target))
        print(f"wrote {target}")
    finally:
        server.shutdown()
        server.server_close()
        board.wait_for_agent()
        board.close()


def name_of(game: str) -> str:
    return f"web-{game}.png"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs", help="the folder the pictures go to (default: docs)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        driver = headless_chromium(1000, 820)
    except RuntimeError as missing:
        print(f"error: {missing}", file=sys.stderr)
        return 2
    try:
        for _, name, params, person_moves, seconds in SHOTS:
            take(driver, out, name, params, person_moves, seconds)
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
