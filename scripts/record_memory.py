"""Bytes per stored position: a replay buffer of encodings against one of game records.

    python scripts/record_memory.py [--games 30] [--search-games 100] [--json FILE]

Plays a few games per board with UCT search and random rollouts (moves drawn from the
visits, so games differ), keeps them as ``mctsfw.records.RecordedGame`` in a
``ReplayBuffer`` and measures what a stored position costs:

- encoded: what the buffer held when it kept encodings (until issue 9): for every case,
  one per symmetry of the board (training adds them all), the float32 input, the dense
  float32 visit distribution and the float32 value target;
- input only: one float32 encoding of the position, no copies, no targets;
- records: the buffer's arrays (``mctsfw.records.GameStore``: per position the move, the
  value target, the number of visited moves and each one's action and visit count; per
  game its opener, winner and offsets) per position, measured on the played games; "in
  memory" adds the numpy objects holding them (traced with tracemalloc), "file" is the
  buffer file (npz) per position.

Rows of games that are not installed, and Go 13x13 (11 planes, not a game here), are
estimates from the encoding's shape and the worst case for a record: every legal move
visited (``num_actions`` visited moves a position, one of them 255 times or more). The
ratio is encoded / in memory (or / the worst case for estimates).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw import MCTS, make_tree_policy  # noqa: E402
from hexzero.mctsfw.evaluators import RandomRollouts  # noqa: E402
from hexzero.mctsfw.search import target_counts  # noqa: E402
from hexzero.mctsfw.records import GameStore, RecordedGame, action_dtype  # noqa: E402
from hexzero.mctsfw.replay import ReplayBuffer, game_result  # noqa: E402
from hexzero.mctsfw.sampling import sample_action  # noqa: E402

#: (label, game, params, encoding, search games, estimate: (rows, cols, planes, symmetries, actions) if not installed)
BOARDS = [
    ("Connect Four 6x7", "connect4", {}, "flat", None, None),
    ("Connect Four 6x7", "connect4", {}, "planes", None, None),
    ("Hex 5x5", "hex", {"size": 5}, "flat", None, None),
    ("Gomoku 15x15, history 2", "gomoku", {"size": 15, "history": 2}, "planes", None, (15, 15, 8, 8, 225)),
    ("Go 13x13, 11 planes", None, {}, "planes", None, (13, 13, 11, 8, 170)),
]


def play_records(game, count: int, search_games: int, seed: int = 0, temperature_moves: int = 8) -> list[RecordedGame]:
    """``count`` games of UCT with random rollouts; the first ``temperature_moves`` moves
    drawn from the visits, the rest the most visited; value targets z."""
    rng = np.random.default_rng(seed)
    records = []
    for number in range(count):
        mcts = MCTS(game, make_tree_policy("uct"), RandomRollouts(game, seed=seed + number), seed=seed + number)
        starter = 1 + number % 2
        state = game.initial_state(starter)
        moves, counts, movers = [], [], []
        while not game.is_final(state):
            root = mcts.search(state, search_games=search_games)
            counts.append(target_counts(root, game.num_actions))
            movers.append(game.current_player(state))
            action = sample_action(mcts.visit_distribution(root), 1.0 if len(moves) < temperature_moves else 0.0, rng)
            moves.append(action)
            mcts.advance(action)
            state = game.next_state(state, action)
        winner = game.winner(state)
        values = [game_result(winner, mover) for mover in movers]
        records.append(RecordedGame.from_targets(game.num_actions, starter, moves, counts, values, winner))
    return records


def encoded_bytes(input_floats: int, copies: int, num_actions: int) -> int:
    """What one position cost in the buffer of encodings: per case its input, its dense
    distribution and its value, all float32."""
    return copies * 4 * (input_floats + num_actions + 1)


def measured_row(label: str, game, encoding: str, records: list[RecordedGame]) -> dict:
    encode_one = game.encode_planes if encoding == "planes" else game.encode
    encode = lambda states: np.stack([encode_one(s) for s in states]).astype(np.float32)  # noqa: E731
    buffer = ReplayBuffer(10**9, game, encode, augment=True)
    for record in records:
        buffer.add(record)
    positions = buffer.positions
    input_floats = int(np.prod(encode([game.initial_state()]).shape[1:]))
    arrays = buffer.games.nbytes()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = GameStore.from_arrays(buffer.games.arrays(), game.num_actions)  # the games as the buffer holds them
    in_memory = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del kept
    with tempfile.TemporaryDirectory() as tmp:
        buffer.save(Path(tmp) / "replay.npz")
        file_bytes = (Path(tmp) / "replay.npz").stat().st_size
    visited = np.mean([np.diff(r.policy_offsets.astype(np.int64)).mean() for r in records])
    encoded = encoded_bytes(input_floats, buffer.copies, game.num_actions)
    return {
        "board": label, "encoding": f"{encoding} {tuple(encode([game.initial_state()]).shape[1:])}",
        "measured": True, "games": len(records), "positions": positions,
        "visited_moves": round(float(visited), 1), "copies": buffer.copies,
        "encoded": encoded, "input_only": 4 * input_floats,
        "records": round(arrays / positions, 1), "records_in_memory": round(in_memory / positions, 1),
        "records_file": round(file_bytes / positions, 1), "ratio": round(encoded / (in_memory / positions), 1),
    }


def estimated_row(label: str, shape: tuple[int, int, int, int, int]) -> dict:
    rows, cols, planes, copies, num_actions = shape
    input_floats = rows * cols * planes
    small = np.dtype(action_dtype(num_actions)).itemsize
    # a move, its number of visited moves, the value (4 bytes), each of num_actions visited
    # moves: its action and a byte for its visit count, and one count of 255 or more (4 bytes)
    worst = small + small + 4 + num_actions * (small + 1) + 4
    encoded = encoded_bytes(input_floats, copies, num_actions)
    return {
        "board": label, "encoding": f"planes ({rows}, {cols}, {planes})", "measured": False, "games": 0,
        "positions": 0, "visited_moves": num_actions, "copies": copies, "encoded": encoded,
        "input_only": 4 * input_floats, "records": worst, "records_in_memory": None, "records_file": None,
        "ratio": round(encoded / worst, 1),
    }


def table(rows: list[dict]) -> str:
    lines = ["| board | encoding | cases a position | encoded B/position | input only | records B/position "
             "(arrays / in memory / file) | visited moves | smaller by |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["measured"]:
            records = f"{r['records']:.0f} / {r['records_in_memory']:.0f} / {r['records_file']:.0f}"
            note = f" ({r['games']} games, {r['positions']} positions)"
        else:
            records, note = f"{r['records']} (estimate: worst case)", " (estimate)"
        lines.append(f"| {r['board']}{note} | {r['encoding']} | {r['copies']} | {r['encoded']:,} | {r['input_only']:,} "
                     f"| {records} | {r['visited_moves']} | {r['ratio']}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=30, help="games played per board")
    parser.add_argument("--search-games", type=int, default=100, help="UCT search games a move")
    parser.add_argument("--gomoku-games", type=int, default=2, help="games of 15x15 Gomoku (slow with random rollouts)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    available = mctsfw.default_registries().games.names()
    rows, played = [], {}
    for label, name, params, encoding, _, estimate in BOARDS:
        if name in available:
            game = mctsfw.make_game(name, **params)
            key = (name, tuple(sorted(params.items())))
            if key not in played:
                count = args.gomoku_games if name == "gomoku" else args.games
                played[key] = play_records(game, count, args.search_games, args.seed)
            rows.append(measured_row(label, game, encoding, played[key]))
        else:
            rows.append(estimated_row(label, estimate))
        print(f"{label}: {rows[-1]['ratio']}x", file=sys.stderr)
    print(f"UCT with {args.search_games} search games a move, random rollouts; bytes per stored position:\n")
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
