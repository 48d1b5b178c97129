"""Where a Hex network loses its won games against MoHex: each move of a match judged by
MoHex's own solver.

    python benchmarks/hex_blunders.py MODEL [--mohex 1000] [--search-games 400] [--games 20]
                                      [--seed 0] [--solve-seconds 2] [--json FILE]

The match is ``scripts/strength_report.py``'s (the same openings for the same ``--seed``:
each pair from the game's opening, two random stones, the network once in each seat,
player 1 moving first after the opening). Afterwards MoHex's depth-first proof-number
solver (``dfpn-solve-state``, at most ``--solve-seconds`` a position, its table kept
from position to position) judges the positions of every game from the last move back,
until it fails on three in a row: the earlier ones are the hardest, and what it solves
late in a game helps it with the positions before. A position is *won* for the player
to move where the solver proves that player wins (Hex has no draws); a player *slips*
where it moves from a won position to one the solver proves lost for it.

Prints, for the network and for MoHex: the won positions each moved from, how many it
kept, and the stones on the board at each slip; then, for each game the network lost,
whether it ever stood won and at which stone count it slipped. A network that loses only
positions it never had won needs a better start; one that slips late needs tactics.

    python benchmarks/hex_blunders.py MODEL --positions FILE [--all-won] [search options]

plays no match: it takes the games a run wrote (``--json``) and asks the agent (the model
with these search settings, ``benchmarks/search_options.py``'s, ``--pairing`` /
``--no-pairing`` for the pairing proofs, ``--vc`` / ``--no-vc`` for H-search's, ``--prune`` /
``--no-prune`` for the pruned cells, else the file's) for its move in each position the network slipped in (with ``--all-won``,
in every won position the network moved from), the solver judging whether the move keeps
the win: a quick trial of a search setting on the positions that decided the games.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hexzero import mctsfw  # noqa: E402
from hexzero.mctsfw.checkpoints import ModelFileError  # noqa: E402
from hexzero.mctsfw.match import PLAYER_1_OPENS, play_pairs  # noqa: E402
from hexzero.plugins.gtp import COLOUR_NAMES, GtpProcess  # noqa: E402
from hexzero.plugins.mohex import find_mohex, mohex_argv  # noqa: E402
from search_options import add_search_options, check_search_options, search_label, search_params  # noqa: E402

#: the solver's answers: the winner's colour, or "empty" where it ran out of time
WINNERS = {"black": 1, "white": 2}
#: positions in a row the solver may fail on before the rest of a game (earlier, harder) is left unjudged
MISSES = 3


class Solver:
    """MoHex's DFPN solver in a process of its own: ``winner(game, starter, moves)`` the
    player who wins the position those moves reach with perfect play, None where it
    cannot say within its time."""

    def __init__(self, program: str, size: int, seconds: float):
        self.engine = GtpProcess(mohex_argv(program, 1), timeout=seconds * 10 + 60)
        self.engine.send(f"boardsize {size}")
        self.engine.send(f"param_dfpn timelimit {seconds}")
        self.on_board: tuple[int, list[int]] | None = None  # (the starting player, the moves the engine holds)

    def winner(self, game, starter: int, moves: list[int]) -> int | None:
        state = game.initial_state(starter)
        held = self.on_board
        if held is not None and held[0] == starter and held[1][:len(moves)] == moves:
            for _ in range(len(held[1]) - len(moves)):  # (an earlier position of the same game: taken back)
                self.engine.send("undo")
            for action in moves:
                state = game.next_state(state, action)
        else:
            self.engine.send("clear_board")
            for action in moves:
                self.engine.send(f"play {COLOUR_NAMES[game.current_player(state)][0]} {game.action_to_text(action, state)}")
                state = game.next_state(state, action)
        self.on_board = (starter, list(moves))
        return WINNERS.get(self.engine.send(f"dfpn-solve-state {COLOUR_NAMES[game.current_player(state)][0]}"))

    def close(self) -> None:
        self.engine.kill()


def judged_game(game, solver: Solver, starter: int, moves: list[int], opening: int) -> list[int | None]:
    """The winner of each position from the end of the opening on (None: not solved),
    solved from the last back until ``MISSES`` in a row fail."""
    winners: list[int | None] = [None] * (len(moves) - opening)
    misses = 0
    for i in reversed(range(len(winners))):
        winners[i] = solver.winner(game, starter, moves[:opening + i])
        misses = misses + 1 if winners[i] is None else 0
        if misses == MISSES:
            break
    return winners


def slips(game, starter: int, moves: list[int], opening: int, winners: list[int | None]) -> list[dict]:
    """Each move made from a solved position: its mover, the stones before it, whether the
    mover stood won and whether the position after it is still won for the mover."""
    found = []
    state = game.initial_state(starter)
    for action in moves[:opening]:
        state = game.next_state(state, action)
    for i, action in enumerate(moves[opening:]):
        mover, state = game.current_player(state), game.next_state(state, action)
        after = winners[i + 1] if i + 1 < len(winners) else game.winner(state)  # (the last move: the game's winner)
        if winners[i] is not None:
            found.append({"mover": mover, "stones": opening + i, "won": winners[i] == mover,
                          "kept": None if after is None else after == mover})
    return found


def games_file(path: str, game) -> dict:
    """The games a run wrote (``--json``), ValueError saying why where they are not that
    or not of this board."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as error:
        raise ValueError(f"{path}: {error.strerror}") from None
    except ValueError:
        raise ValueError(f"{path}: not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("games"), list):
        raise ValueError(f"{path}: not the games hex_blunders.py --json writes")
    if data.get("size") != game.size:
        raise ValueError(f"{path}: games of {data.get('size')}x{data.get('size')} Hex, not {game.size}x{game.size}")
    return data


def won_positions(game, data: dict, every: bool) -> list[tuple[int, list[int], int]]:
    """(the starting player, the moves before, the network's seat) of each position of
    ``data``'s games (``--json``) where the network stood won and slipped (``every``: kept
    the win or not), in the order played."""
    found = []
    for played in data["games"]:
        starter, moves, opening, seat = played["starting_player"], played["moves"], played["opening"], played["network"]
        for move in slips(game, starter, moves, opening, played["winners"]):
            if move["mover"] == seat and move["won"] and move["kept"] is not None and (every or not move["kept"]):
                found.append((starter, moves[:move["stones"]], seat))
    return found


def retried(game, agent, solver: Solver, positions: list[tuple[int, list[int], int]]) -> list[bool | None]:
    """Whether the agent's move keeps each won position won (``won_positions``); None
    where the solver cannot say."""
    kept = []
    for starter, moves, seat in positions:
        state = game.initial_state(starter)
        for action in moves:
            state = game.next_state(state, action)
        agent.reset()
        action = agent.select_action(state)
        after = game.next_state(state, action)
        winner = game.winner(after) if game.is_final(after) else solver.winner(game, starter, [*moves, action])
        kept.append(None if winner is None else winner == seat)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a Hex network file")
    parser.add_argument("--size", type=int, default=None, help="board side (default: the file's)")
    parser.add_argument("--mohex", type=int, default=1000, help="MoHex's simulations a move")
    parser.add_argument("--search-games", type=int, default=400)
    parser.add_argument("--games", type=int, default=20, help="an even number: each opening once in each seat")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--solve-seconds", type=float, default=2.0)
    parser.add_argument("--json", help="also write every game here: its moves, the network's seat, the solver's winners")
    parser.add_argument("--positions", metavar="FILE", help="no match: the won positions of the games in FILE (--json)")
    parser.add_argument("--all-won", action="store_true", help="--positions: every won position, not only the slips")
    parser.add_argument("--pairing", action=argparse.BooleanOptionalAction,
                        help="the game's pairing proofs on or off (games.hex.pairing; default: the file's)")
    parser.add_argument("--vc", action=argparse.BooleanOptionalAction,
                        help="the game's H-search proofs and must-play on or off (games.hex.vc; default: the file's)")
    parser.add_argument("--prune", action=argparse.BooleanOptionalAction,
                        help="the game's pruning of dead and captured cells on or off (games.hex.prune; default: the file's)")
    add_search_options(parser)
    args = parser.parse_args()
    check_search_options(parser, args)
    if args.games < 2 or args.games % 2 or args.search_games < 1 or args.solve_seconds <= 0:
        parser.error("--games must be an even number of 2 or more, --search-games and --solve-seconds above 0")
    program = find_mohex()
    if program is None:
        parser.error("MoHex is not built: bash scripts/build_mohex.sh (docs/hex.md)")
    try:
        settings = {k: v for k, v in (("size", args.size), ("pairing", args.pairing), ("vc", args.vc),
                                                           ("prune", args.prune)) if v is not None}
        game = mctsfw.make_model_game(args.model, **settings)
        if game.name != "hex":
            parser.error(f"{args.model} is a network of {game.name}, not of Hex")
        agent = mctsfw.make_actor(args.model, game, search_games=args.search_games, seed=args.seed, **search_params(args))
        data = games_file(args.positions, game) if args.positions else None
    except (ModelFileError, ValueError) as error:
        parser.error(str(error))
    label = f"{agent.label}{search_label(args)}{', pairing' if game.pairing else ''}{', vc' if game.vc else ''}{', prune' if game.prune else ''}"
    if data is not None:
        positions = won_positions(game, data, args.all_won)
        solver = Solver(program, game.size, args.solve_seconds)
        start = time.perf_counter()
        try:
            kept = retried(game, agent, solver, positions)
        finally:
            solver.close()
        unknown = kept.count(None)
        print(f"{label}: kept {kept.count(True)} of the {len(kept)} {'won positions' if args.all_won else 'slips'} of "
              f"{args.positions} ({data['model']}, search({data['search_games']}))"
              + (f", {unknown} not solved after the move" if unknown else "") + f"; {time.perf_counter() - start:.0f} s")
        return
    mohex = mctsfw.make_actor(f"mohex:{args.mohex}", game, seed=args.seed)
    print(f"{label}, against mohex({args.mohex}) on {game.size}x{game.size} Hex, "
          f"{args.games} games; the solver {args.solve_seconds:g} s a position; "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}", flush=True)
    start = time.perf_counter()
    try:
        match = play_pairs(game, agent, mohex, args.games, PLAYER_1_OPENS, "game", args.seed)
    finally:
        mohex.close()
    played = time.perf_counter() - start
    print(f"played in {played:.0f} s: the network won {match.wins_a} of {match.games} "
          f"({match.distinct_games} distinct)", flush=True)
    solver = Solver(program, game.size, args.solve_seconds)
    tally = {name: {"won": 0, "kept": 0, "slips": []} for name in ("network", "mohex")}
    lost, games = [], []
    try:
        for number, (record, seat) in enumerate(zip(match.records, match.a_players)):
            opening = len(match.openings(number, record.starting_player))
            winners = judged_game(game, solver, record.starting_player, record.actions, opening)
            moves = slips(game, record.starting_player, record.actions, opening, winners)
            games.append({"starting_player": record.starting_player, "moves": [int(a) for a in record.actions],
                          "opening": opening, "network": seat, "winner": record.winner, "winners": winners})
            for move in moves:
                who = tally["network" if move["mover"] == seat else "mohex"]
                if move["won"] and move["kept"] is not None:
                    who["won"] += 1
                    who["kept"] += move["kept"]
                    if not move["kept"]:
                        who["slips"].append(move["stones"])
            if record.winner != seat:
                mine = [m for m in moves if m["mover"] == seat]
                first = next((m for m in mine if m["won"] and m["kept"] is False), None)
                lost.append((number, seat, "stood won, slipped at %d stones" % first["stones"] if first else
                             "never stood won where solved" + (f" (from {mine[0]['stones']} stones)" if mine else "")))
    finally:
        solver.close()
    print(f"judged in {time.perf_counter() - start - played:.0f} s")
    for name, who in tally.items():
        at = ", ".join(map(str, sorted(who["slips"])))
        print(f"{name}: kept {who['kept']} of the {who['won']} won positions it moved from; "
              + (f"slipped at {at} stones" if at else "no slip"))
    for number, seat, what in lost:
        print(f"  game {number + 1} (network as player {seat}), lost: {what}")
    if args.json:
        Path(args.json).write_text(json.dumps({"model": args.model, "size": game.size, "mohex": args.mohex,
                                               "search_games": args.search_games,
                                               "seed": args.seed, "solve_seconds": args.solve_seconds, "games": games}))


if __name__ == "__main__":
    main()
