"""GTP: our engine (``cli.py gtp``, ``plugins.gtp.GtpEngine``) and outside engines as
players (``gtp:COMMAND``, ``plugins.gtp.GtpActor``), on Hex and Go, and a full 9x9 game
against GNU Go when it is installed."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.actors import Actor, ActorError, Resignation
from hexzero.mctsfw.match import play_game, play_match
from hexzero.plugins.gtp import GtpActor, GtpEngine, GtpEngineError, TimeBudget, find_program, gnugo_spec, score_text
from benchmarks.shipped import shipped_model
from tests.test_plugins import ROOT, run_cli

PYTHON = sys.executable
REQUIRED = ("protocol_version name version known_command list_commands quit boardsize clear_board play genmove undo "
            "showboard time_settings time_left gogui-analyze_commands").split()


def our_engine_command(*args: str) -> str:
    """The command line of our own engine, for the ``gtp:`` spec."""
    return shlex.join([PYTHON, str(ROOT / "cli.py"), "gtp", *args])


def hex_engine(size=5, player="random", **params) -> GtpEngine:
    params = params or {"seed": 1}
    return GtpEngine("hex", {"size": size}, lambda game: mctsfw.make_actor(player, game, **params))


def ask(engine: GtpEngine, line: str) -> str:
    """The response to ``line``, checked well formed: '=' or '?', then an empty line."""
    response = engine.handle(line)
    assert response is not None and response.endswith("\n\n") and "\n\n" not in response[:-2], repr(response)
    return response[:-2]


def ok(engine: GtpEngine, line: str) -> str:
    response = ask(engine, line)
    assert response.startswith("="), f"{line!r} -> {response!r}"
    return response.split(" ", 1)[1] if " " in response else ""


def position(engine: GtpEngine):
    return (engine.game_name, dict(engine.params), engine.starting_player, list(engine.moves), engine.state,
            len(engine.undo_stack))


# ---- the engine, in-process ------------------------------------------------------------------
def test_the_engine_answers_the_protocol_commands_with_ids():
    engine = hex_engine()
    assert ok(engine, "protocol_version") == "2"
    assert ask(engine, "12 name") == "=12 hexzero"
    assert ok(engine, "version")
    commands = ok(engine, "list_commands").split("\n")
    assert set(REQUIRED) <= set(commands)
    assert ok(engine, "known_command genmove") == "true"
    assert ok(engine, "known_command frobnicate") == "false"
    assert ask(engine, "7 frobnicate") == "?7 unknown command"
    assert engine.handle("   ") is None and engine.handle("# a comment") is None
    assert ask(engine, "3 play\tb a1   # tabs and a comment") == "=3 "  # an empty result, as GNU Go writes it
    assert engine.moves == [0]
    assert ok(engine, "quit") == "" and engine.finished


def test_hex_dialect_cells_play_genmove_undo_showboard():
    engine = hex_engine(size=5)
    assert ok(engine, "boardsize 7 7") == ""  # HexGui's two-number form
    game = engine.game
    assert game.size == 7
    ok(engine, "play b a1")  # a1 is action 0 (HexGui's cell names)
    ok(engine, "play w c2")
    assert engine.moves == [0, 1 * 7 + 2]
    reply = ok(engine, "genmove b")
    action = game.parse_action(reply, game.state_after([0, 9]))
    assert engine.moves == [0, 9, action] and game.current_player(engine.state) == 2
    board = ok(engine, "showboard")
    assert board.startswith("\n") and "player 2 (O) to move" in board
    ok(engine, "undo")
    assert engine.moves == [0, 9]
    ok(engine, "clear_board")
    assert engine.moves == [] and engine.state == game.initial_state()


def test_hex_white_may_open_but_not_move_out_of_turn_later():
    engine = hex_engine()
    ok(engine, "play w b2")  # the first move of a game may be either colour's
    assert engine.starting_player == 2 and engine.game.current_player(engine.state) == 1
    before = position(engine)
    assert ask(engine, "play w c3") == "? it is black's turn (hex has no pass)"
    assert ask(engine, "genmove w") == "? it is black's turn (hex has no pass)"
    assert position(engine) == before


def test_swap_pieces_mirrors_the_first_stone_and_undo_takes_it_back():
    engine = hex_engine(size=5)
    game = engine.game
    ok(engine, "play b b1")  # row 0, column 1
    ok(engine, "play w swap-pieces")
    # the stone is now White's on row 1, column 0 (a2), and Black moves
    assert engine.state == game.state_after([game.grid_action(1, 0)], starting_player=2)
    assert game.current_player(engine.state) == 1
    ok(engine, "undo")
    assert engine.state == game.state_after([1])
    ok(engine, "play w c3")
    assert ask(engine, "play b swap-pieces").startswith("? swap-pieces is the second player's first move")


def test_a_second_swap_pieces_is_refused_and_changes_nothing():
    engine = hex_engine(size=5)
    ok(engine, "play b b1")
    ok(engine, "play w swap-pieces")
    before = position(engine)
    # Black (now the second player of the swapped game) may not swap back
    assert ask(engine, "play b swap-pieces") == ("? swap-pieces was played already in this game: the swap is the "
                                                 "second player's first move")
    assert position(engine) == before
    ok(engine, "undo")  # the swap taken back: White may swap again
    ok(engine, "play w swap-pieces")
    assert position(engine) == before


BAD_COMMANDS = [
    ("play", "? play takes a color and a move"),
    ("play b", "? play takes a color and a move"),
    ("play purple a1", "? invalid color 'purple'"),
    ("play b z9", "? illegal move: 'z9' is off the 5x5 board"),
    ("play b a1", "? illegal move: cell a1 is already taken"),
    ("play b hello", "? illegal move: cannot read 'hello'"),
    ("play b resign", "? resign is not a move"),
    ("play b swap-sides", "? illegal move: cannot read 'swap-sides'"),
    ("genmove", "? genmove takes a color"),
    ("genmove x", "? invalid color 'x'"),
    ("boardsize", "? boardsize takes a size"),
    ("boardsize 2", "? unacceptable size: hex: size: must be a whole number from 3 to 19"),
    ("boardsize 5 6", "? unacceptable size: only square boards"),
    ("boardsize seven", "? boardsize takes a size"),
    ("komi 7.5", "? unknown command"),  # Hex has no komi: the dialect table leaves it out
    ("final_score", "? unknown command"),
    ("time_settings 1 2", "? time_settings takes main_time byo_yomi_time byo_yomi_stones"),
    ("time_settings -1 0 0", "? time_settings takes"),
    ("time_left b -3 0", "? time_left takes a color, seconds and stones"),
    ("time_left q 3 0", "? invalid color 'q'"),
    ("loadsgf", "? loadsgf takes a file"),
    ("loadsgf /no/such/file.sgf", "? cannot load file: /no/such/file.sgf: cannot be read"),
    ("hexzero-visits", "? the player random does not search"),
    ("hexzero-policy", "? the player random has no policy to show"),
    ("12", "?12 no command after the id"),
    ("wibble", "? unknown command"),
    ("play w k9", "? illegal move: 'k9' is off the 5x5 board"),  # off the board, whoever's turn it is
    ("play w a12", "? illegal move: 'a12' is off the 5x5 board"),
]


@pytest.mark.parametrize("line,reason", BAD_COMMANDS)
def test_illegal_or_malformed_commands_are_refused_and_change_nothing(line, reason):
    engine = hex_engine(size=5)
    ok(engine, "play b a1")
    ok(engine, "play w b3")
    before = position(engine)
    response = ask(engine, line)
    assert response.startswith(reason), response
    assert position(engine) == before


def test_boardsize_a_network_cannot_play_is_an_unacceptable_size_and_changes_nothing():
    model = shipped_model("go9")  # a 9x9 network with dense heads: 9x9 only
    engine = GtpEngine("go", {"size": 9}, lambda game: mctsfw.make_actor(model, game, search_games=4, seed=1))
    ok(engine, "play b E5")
    before, actor = position(engine), engine.actor
    response = ask(engine, "boardsize 13")
    assert response.startswith("? unacceptable size: ") and "size=9" in response, response
    assert position(engine) == before and engine.actor is actor
    assert ok(engine, "genmove w")  # the engine plays on, on its 9x9 board


def test_a_finished_game_refuses_moves():
    engine = hex_engine(size=3)
    for line in ("play b a1", "play w b1", "play b a2", "play w b2", "play b a3"):  # black joins rows 1 to 3
        ok(engine, line)
    assert engine.game.winner(engine.state) == 1
    before = position(engine)
    assert ask(engine, "genmove w") == "? the game is over"
    assert ask(engine, "play w c1") == "? the game is over"
    assert position(engine) == before


def test_visit_heat_map_for_gogui():
    engine = hex_engine(size=4, player="mcts", search_games=200, seed=2)
    ok(engine, "play b b2")
    assert ok(engine, "gogui-analyze_commands") == "gfx/Visits/hexzero-visits"
    # HexGui asks for the same list by its own name as it connects (refused, it showed an error dialog)
    assert ok(engine, "hexgui-analyze_commands") == "gfx/Visits/hexzero-visits"
    lines = ok(engine, "hexzero-visits").split("\n")
    kinds = [line.split(" ", 1)[0] for line in lines]
    assert kinds == ["INFLUENCE", "LABEL", "TEXT"]
    game = engine.game
    influence = lines[0].split()[1:]
    shares = {game.parse_action(v, engine.state): float(x) for v, x in zip(influence[::2], influence[1::2])}
    labels = lines[1].split()[1:]
    counts = {game.parse_action(v, engine.state): int(n) for v, n in zip(labels[::2], labels[1::2])}
    assert set(shares) == set(counts) and set(counts) <= set(game.legal_actions(engine.state))
    assert max(shares.values()) == 1.0 and all(0 < x <= 1 for x in shares.values())
    best = max(counts, key=counts.get)
    assert shares[best] == 1.0 and sum(counts.values()) >= 199  # the root's visits, one may be its own
    assert lines[2].startswith("TEXT ") and "; best " in lines[2]


def test_policy_heat_map_for_a_raw_network():
    model = shipped_model("hex5")
    engine = GtpEngine("hex", {"size": 5}, lambda game: mctsfw.make_actor(str(model), game))
    assert ok(engine, "gogui-analyze_commands") == "gfx/Policy/hexzero-policy"
    lines = ok(engine, "hexzero-policy").split("\n")
    assert [line.split(" ", 1)[0] for line in lines] == ["INFLUENCE", "LABEL", "TEXT"]
    assert len(lines[0].split()[1:]) == 2 * 25  # every empty cell has a probability


def test_time_settings_budget_each_move():
    budget = TimeBudget()
    assert budget.seconds_for(1, 30) is None  # no time_settings: no limit
    budget = TimeBudget(60, 0, 0, set=True)
    assert budget.seconds_for(1, 30) == pytest.approx(60 / 30 * 0.8 - 0.1)
    assert budget.seconds_for(1, 5) == pytest.approx(60 / 20 * 0.8 - 0.1)  # at least 20 moves assumed left
    budget.left[1] = (10.0, 5)  # byo-yomi: 5 moves in 10 s
    assert budget.seconds_for(1, 30) == pytest.approx(10 / 5 * 0.8 - 0.1)
    assert TimeBudget(0, 0, 0, set=True).seconds_for(1, 30) is None  # 0 0 0: no limit (GTP)
    assert TimeBudget(0, 10, 0, set=True).seconds_for(1, 30) is None  # byo-yomi without stones: no limit


def test_the_clock_stops_a_search_before_its_search_games():
    engine = hex_engine(size=7, player="mcts", search_games=10**9, seed=1)
    ok(engine, "time_settings 0 1 1")  # one move a second: about 0.7 s of search
    ok(engine, "genmove b")
    searched = engine.actor.mcts.last_search_games
    assert 0 < searched < 10**9
    assert engine.actor.time_limit is None  # the budget held for that move only


def test_loadsgf_sets_up_the_recorded_position(tmp_path):
    from hexzero.mctsfw.sgf import to_sgf

    game = mctsfw.make_game("hex", size=6)
    moves = [game.parse_action(c, game.initial_state()) for c in ("c3", "d4", "b5", "a2")]
    path = tmp_path / "game.sgf"
    path.write_text(to_sgf(game, moves))
    engine = hex_engine(size=5)
    ok(engine, "play b a1")
    assert ok(engine, f"loadsgf {path} 3") == "black"  # before move 3: two moves played, black to move
    assert engine.game.size == 6 and engine.state == game.state_after(moves[:2])
    assert ok(engine, f"loadsgf {path}") == "black"
    assert engine.state == game.state_after(moves)
    ok(engine, "undo")  # the loaded moves may be taken back
    assert engine.state == game.state_after(moves[:3])
    broken = tmp_path / "broken.sgf"
    broken.write_text("(;GM[11]SZ[6];B[c3];W[c3])")
    before = position(engine)
    assert ask(engine, f"loadsgf {broken}").startswith("? cannot load file:")
    assert position(engine) == before


# ---- the engine as a program ------------------------------------------------------------------
def gtp_session(args, commands: str, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, str(ROOT / "cli.py"), "gtp", *args], input=commands, capture_output=True,
                          text=True, timeout=timeout)


def responses(stdout: str) -> list[str]:
    assert stdout.endswith("\n\n"), repr(stdout[-200:])
    return stdout[:-2].split("\n\n")


def test_cli_gtp_speaks_on_stdin_and_stdout():
    script = "1 protocol_version\n2 boardsize 4\n3 play b b2\n4 genmove w\n5 play b b2\n6 showboard\n7 quit\n"
    result = gtp_session(["--game", "hex", "--p", "mcts", "--search-games", "50", "--seed", "1"], script)
    assert result.returncode == 0, result.stderr
    answers = responses(result.stdout)
    assert [a.split(" ", 1)[0].split("\n")[0] for a in answers] == ["=1", "=2", "=3", "=4", "?5", "=6", "=7"]
    assert answers[0] == "=1 2"
    game = mctsfw.make_game("hex", size=4)
    reply = answers[3].split(" ", 1)[1]
    assert game.parse_action(reply, game.state_after([5])) != 5
    assert answers[4] == "?5 illegal move: cell b2 is already taken"
    assert "player 1 (X) to move" in answers[5]


def test_cli_gtp_ends_at_the_end_of_input_and_refuses_bad_players(tmp_path):
    result = gtp_session(["--game", "hex", "--p", "random"], "name\n")
    assert result.returncode == 0 and result.stdout == "= hexzero\n\n"
    for player, message in (("human", "needs an agent"), (str(tmp_path / "missing.keras"), "missing.keras"),
                            ("gtp:no-such-engine-here --mode gtp", "cannot find the engine program"),
                            ("wizard", "must be human, random, mcts")):
        result = gtp_session(["--game", "hex", "--p", player], "name\n")
        assert result.returncode == 2, (player, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr
        assert result.stdout == ""
    result = gtp_session(["--game", "hex", "--p", "mcts", "--resign-threshold", "1.5"], "name\n")
    assert result.returncode == 2 and "--resign-threshold is a value from 0" in result.stderr and result.stdout == ""


# ---- outside engines as players ----------------------------------------------------------------
def test_our_client_plays_our_engine_through_a_match():
    game = mctsfw.make_game("hex", size=5)
    engine = mctsfw.make_actor("gtp:" + our_engine_command("--game", "hex", "--size", "5", "--p", "mcts",
                                                           "--search-games", "300", "--seed", "2"), game)
    assert isinstance(engine, GtpActor) and engine.label == "gtp:hexzero 0.1.0"
    process = engine.engine.process
    try:
        result = play_match(game, engine, mctsfw.make_actor("random", game, seed=3), 4, seating=(1, 2),
                            openers=(1, 1, 2, 2))
    finally:
        engine.close()
    assert process.poll() is not None  # closed: the engine has gone
    assert result.games == 4 and result.wins_a >= 3  # 300 search games against random on 5x5
    for record in result.records:  # each move was legal (play_game's next_state checks) and the games ended
        assert game.is_final(game.state_after(record.actions, record.starting_player))


def test_gtp_players_in_play_and_compare():
    spec = "gtp:" + our_engine_command("--game", "hex", "--p", "random", "--seed", "5")
    result = run_cli("play", "--game", "hex", "--size", "4", "--p1", spec, "--p2", "random", "--no-display",
                     "--games", "2", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert "player 1 = gtp:hexzero 0.1.0" in result.stdout and "game 2:" in result.stdout
    result = run_cli("compare", spec, "random", "--game", "hex", "--size", "4", "--games", "2", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert "gtp:hexzero 0.1.0 (A) against random (B): 2 games" in result.stdout


FAKE_ENGINE = textwrap.dedent("""
    import sys
    answers = {"protocol_version": "2", "name": "fake", "version": "1",
               "list_commands": "protocol_version\\nname\\nversion\\nlist_commands\\nboardsize\\nclear_board\\nplay\\ngenmove\\nquit"}
    for line in sys.stdin:
        command = line.split()[0] if line.split() else ""
        if command == "genmove":
            print("= " + MOVE + "\\n", flush=True)
        elif command == "quit":
            print("=\\n", flush=True)
            break
        else:
            print("= " + answers.get(command, "") + "\\n", flush=True)
""")


def fake_engine(tmp_path, move: str) -> str:
    path = tmp_path / "fake_engine.py"
    path.write_text(f"MOVE = {move!r}\n" + FAKE_ENGINE)
    return shlex.join([PYTHON, str(path)])


def test_an_engine_that_resigns_loses_the_game(tmp_path):
    game = mctsfw.make_game("hex", size=4)
    actor = GtpActor(game, fake_engine(tmp_path, "resign"))
    try:
        record = play_game(game, {1: mctsfw.make_actor("random", game, seed=1), 2: actor})
    finally:
        actor.close()
    assert record.resigned == 2 and record.winner == 1 and len(record.actions) == 1


def test_resignation_is_a_loss_in_a_match():
    class Resigner(Actor):
        def select_action(self, state):
            raise Resignation("no hope")

    game = mctsfw.make_game("hex", size=3)
    result = play_match(game, Resigner(game), mctsfw.make_actor("random", game, seed=1), 2)
    assert result.wins_b == 2 and [r.resigned for r in result.records] == [1, 1]


def test_an_engine_answering_an_illegal_move_is_stopped(tmp_path):
    game = mctsfw.make_game("hex", size=4)
    actor = GtpActor(game, fake_engine(tmp_path, "a1"))
    # it answers a1 every time: taken by random's first move, or by its own first answer
    with pytest.raises(GtpEngineError, match="answered genmove with 'a1': cell a1 is already taken"):
        play_game(game, {1: mctsfw.make_actor("random", game, seed=0), 2: actor}, starting_player=1)
    assert actor.engine.process.poll() is not None  # killed on the error


def test_a_missing_or_broken_engine_is_one_clear_error(tmp_path):
    game = mctsfw.make_game("hex", size=4)
    with pytest.raises(ActorError, match="cannot find the engine program 'no-such-engine'"):
        mctsfw.make_actor("gtp:no-such-engine --mode gtp", game)
    with pytest.raises(GtpEngineError, match="exited"):
        GtpActor(game, [PYTHON, "-c", "import sys; sys.exit(3)"])


def test_an_engine_never_outlives_our_process(tmp_path):
    """The engine is started by a process that is then killed with SIGKILL (no atexit,
    no cleanup): the engine goes with it (PR_SET_PDEATHSIG)."""
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        from hexzero import mctsfw
        from hexzero.plugins.gtp import GtpActor
        actor = GtpActor(mctsfw.make_game("hex", size=4), {fake_engine(tmp_path, "a1")!r})
        print(actor.engine.process.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """))
    result = subprocess.run([PYTHON, str(script)], capture_output=True, text=True, timeout=60)
    assert result.returncode == -signal.SIGKILL, result.stderr
    pid = int(result.stdout.split()[0])
    for _ in range(100):
        if not os.path.exists(f"/proc/{pid}") or "Z" in open(f"/proc/{pid}/stat").read().split()[2]:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the engine outlived the process that started it")


# ---- Go -------------------------------------------------------------------------------------
def go_engine(size=9, player="random", **params) -> GtpEngine:
    params = params or {"seed": 1}
    return GtpEngine("go", {"size": size}, lambda game: mctsfw.make_actor(player, game, **params))


def test_go_vertices_passes_and_the_score():
    engine = go_engine()
    assert {"komi", "final_score", "loadsgf"} <= set(ok(engine, "list_commands").split("\n"))
    game = engine.game
    ok(engine, "play b D4")
    ok(engine, "play w pass")
    assert engine.moves == [3 * 9 + 3, 81]
    # one black stone on an empty board owns it all: 81 - 7.5
    assert ok(engine, "final_score") == "B+73.5" == score_text(game.score(engine.state))
    ok(engine, "komi 0.5")
    assert engine.game.komi == 0.5 and engine.moves == [30, 81]  # the game goes on with the new komi
    assert ok(engine, "final_score") == "B+80.5"
    reply = ok(engine, "genmove b")
    assert engine.moves[-1] == engine.game.parse_action(reply, engine.game.state_after([30, 81]))
    ok(engine, "boardsize 13")
    assert engine.game.size == 13 and engine.game.komi == 0.5 and engine.moves == []
    assert ok(engine, "final_score") == "W+0.5"


def test_the_controller_plays_past_the_cut_off_and_the_engine_passes():
    """Go's move cut-off ends self-play games; under GTP the controller ends the game: moves
    past the cut-off are taken, and the engine, whose search keeps the cut-off, passes."""
    engine = GtpEngine("go", {"size": 5, "max_moves": 6},
                       lambda game: mctsfw.make_actor("mcts", game, search_games=20, seed=1))
    assert engine.actor.game.max_moves == 6  # the search keeps it
    for move in ("b a1", "w e5", "b a2", "w e4", "b a3", "w e3"):
        ok(engine, f"play {move}")
    assert ok(engine, "genmove b") == "pass"  # move 7: past the cut-off
    ok(engine, "play w c3")  # the controller's move is taken
    assert ok(engine, "genmove b") == "pass" and len(engine.moves) == 9
    assert ask(engine, "hexzero-visits").startswith("? past the search's move cut-off")
    ok(engine, "play w pass")  # two passes: now the game is over, and the controller ends it
    assert ok(engine, "genmove b") == "pass" and len(engine.moves) == 10  # a pass, as a controller expects
    assert ask(engine, "play b c4") == "? the game is over"
    assert ok(engine, "final_score") == score_text(engine.game.score(engine.state))
    ok(engine, "undo")  # the cut-off comes back with undo
    assert ok(engine, "genmove w") == "pass" and len(engine.moves) == 10


def test_a_searching_engine_warms_up_before_its_first_genmove():
    """What a search compiles on first use (the array search's Go playouts) is compiled
    when the engine starts (a fresh process, where nothing is compiled yet), not on the
    clock of the first genmove; the warm-up's move is forgotten."""
    code = textwrap.dedent("""
        from hexzero import mctsfw
        from hexzero.mctsfw.game import compiled_module
        from hexzero.plugins.gtp import GtpEngine
        module = compiled_module("hexzero.games.go_kernels")
        kernel = module.playouts if module else None
        before = len(kernel.signatures) if kernel else -1
        engine = GtpEngine("go", {"size": 9}, lambda game: mctsfw.make_actor("mcts", game, search_games=50, seed=1))
        print(before, len(kernel.signatures) if kernel else -1, engine.moves, engine.actor.mcts.last_search_games > 0)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    before, after, moves, searched = result.stdout.split(maxsplit=3)
    assert result.returncode == 0, result.stderr
    if before != "-1":  # with numba: compiled before the first genmove
        assert before == "0" and int(after) > 0
    assert moves == "[]" and searched.strip() == "True"


def test_a_gomoku_engine_compiles_its_threat_search_before_its_first_move():
    """Gomoku's compiled threat search runs only once stones are on the board: the
    warm-up's second position (random moves in) has it compiled when the engine starts,
    the array search's kernels (the threats at its nodes) and the root's thorough search."""
    code = textwrap.dedent("""
        from hexzero import mctsfw
        from hexzero.games.gomoku import compiled_threats
        from hexzero.mctsfw.game import compiled_module
        from hexzero.plugins.pbrain import PbrainEngine
        kernels, search = compiled_threats(), compiled_module("hexzero.games.gomoku_kernels")
        before = len(kernels.forced_fours.signatures) + len(search.moves.signatures) if kernels else -1
        engine = PbrainEngine("gomoku", {}, lambda game: mctsfw.make_actor("mcts", game, search_games=50, seed=1))
        print(before, len(kernels.forced_fours.signatures) if kernels else -1,
              len(search.moves.signatures) if kernels else -1)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    before, fours, defences = result.stdout.split()
    if before != "-1":  # with numba
        assert before == "0" and int(fours) > 0 and int(defences) > 0


def test_go_out_of_turn_implies_a_pass_and_undo_takes_both_back():
    engine = go_engine()
    ok(engine, "play b E5")
    ok(engine, "play b C3")  # white's pass is implied
    assert engine.moves == [40, 81, 20]
    ok(engine, "undo")
    assert engine.moves == [40]
    ok(engine, "genmove b")  # here too
    assert engine.moves[:2] == [40, 81] and len(engine.moves) == 3
    ok(engine, "clear_board")
    ok(engine, "play w pass")  # at the start: black's pass, then white's: two passes end the game
    assert engine.game.is_final(engine.state)
    assert ok(engine, "genmove b") == "pass" and engine.moves == [81, 81]  # the game stays over
    assert ask(engine, "play b D4") == "? the game is over"
    ok(engine, "undo")
    ok(engine, "play b pass")
    assert ask(engine, "play b pass") == "? it is white's turn; an implied pass would end the game"


GO_BAD = [
    ("play b E5", "? illegal move: "),  # occupied
    ("play b I4", "? illegal move: 'I4': Go columns skip the letter I"),
    ("play b K10", "? illegal move: 'K10' is off the 9x9 board"),
    ("play b A1", "? illegal move: "),  # suicide: A1 has no liberty left (B1, A2 are white)
    ("komi seven", "? komi takes a number"),
    ("komi inf", "? komi takes a number"),
    ("boardsize 4", "? unacceptable size: go: size: must be a whole number from 5 to 19"),
    ("boardsize 21", "? unacceptable size"),
]


@pytest.mark.parametrize("line,reason", GO_BAD)
def test_go_refusals_change_nothing(line, reason):
    engine = go_engine()
    for move in ("play b E5", "play w B1", "play b J9", "play w A2"):
        ok(engine, move)
    before = position(engine)
    assert ask(engine, line).startswith(reason)
    assert position(engine) == before


def test_go_ko_is_refused():
    engine = go_engine(size=5)
    # black D3 C2 C4 B3 ... a ko at C3/B3: white takes, black may not retake at once
    for move in ("b C2", "w D2", "b B3", "w E3", "b C4", "w D4", "b D3", "w C3"):
        ok(engine, f"play {move}")  # white C3 captures black D3
    assert engine.game.board(engine.state)[2, 3] == 0
    before = position(engine)
    assert ask(engine, "play b D3").startswith("? illegal move: ")
    assert position(engine) == before


def test_go_loadsgf_takes_the_files_size_and_komi(tmp_path):
    from hexzero.mctsfw.sgf import to_sgf

    game = mctsfw.make_game("go", size=7, komi=6.5)
    moves = [game.text_to_action(v) for v in ("D4", "C3", "E5", "pass")]
    path = tmp_path / "go.sgf"
    path.write_text(to_sgf(game, moves))
    engine = go_engine(size=9)
    assert ok(engine, f"loadsgf {path}") == "black"
    assert (engine.game.size, engine.game.komi) == (7, 6.5) and engine.state == game.state_after(moves)
    hex_file = tmp_path / "hex.sgf"
    hex_file.write_text("(;FF[4]GM[11]SZ[5];B[a1])")
    before = position(engine)
    assert ask(engine, f"loadsgf {hex_file}").startswith("? cannot load file:")
    assert position(engine) == before


GNUGO = find_program("gnugo")
needs_gnugo = pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get install gnugo): "
                                                       "the games against it are skipped")


@needs_gnugo
@pytest.mark.parametrize("our_colour", [1, 2])
def test_a_full_9x9_game_against_gnu_go_scored_alike(our_colour):
    """Our engine (``cli.py gtp``, a random player) against GNU Go level 1 (Chinese rules),
    both through GTP: every move is legal for both programs, and on the finished board
    GNU Go's final_score is ours. Area scoring as the board stands agrees with GNU Go's
    once no dead stone is left: GNU Go captures every dead stone before it passes
    (--capture-all-dead), so when both have passed it lists none, and we check that."""
    game = mctsfw.make_game("go", size=9, komi=7.5)
    ours = GtpActor(game, our_engine_command("--game", "go", "--size", "9", "--p", "random", "--seed", str(our_colour)))
    gnugo = GtpActor(game, [GNUGO, "--mode", "gtp", "--level", "1", "--chinese-rules", "--capture-all-dead",
                            "--positional-superko", "--seed", "1"])
    try:
        assert gnugo.label.startswith("gtp:GNU Go")
        # an illegal move from either side fails the game: our next_state raises for GNU Go's
        # answers, GNU Go refuses ours ("? illegal move")
        record = play_game(game, {our_colour: ours, 3 - our_colour: gnugo})
        final = record.states[-1]
        assert game.is_final(final) and final[3] == 2, "the game ended by two passes, not at the cut-off"
        assert record.resigned is None
        gnugo.sync(final)  # GNU Go sees the last moves too
        assert gnugo.send("final_status_list dead") == ""
        assert gnugo.send("final_score") == score_text(game.score(final))
        assert record.winner == 3 - our_colour  # random loses to GNU Go
    finally:
        ours.close()
        gnugo.close()


@needs_gnugo
def test_a_match_refereed_by_gnu_go_takes_its_final_score():
    """``play_match(judged=True)``: GNU Go's final_score decides each finished game, in
    both seats (the strength report and the imitation games referee Go this way)."""
    game = mctsfw.make_game("go", size=9, komi=7.5)
    gnugo = GtpActor(game, [GNUGO, "--mode", "gtp", "--level", "1", "--chinese-rules", "--capture-all-dead",
                            "--positional-superko", "--seed", "2"])
    try:
        result = play_match(game, mctsfw.make_actor("random", game, seed=5), gnugo, 2, seating=(1, 2), openers=(1,),
                            judged=True)
    finally:
        gnugo.close()
    for record, a_player in zip(result.records, result.a_players):
        assert record.score is not None and record.score == game.score(record.states[-1])
        assert record.winner == (1 if record.score > 0 else 2) == 3 - a_player  # GNU Go wins, by its own count


@needs_gnugo
def test_gnu_go_as_a_player_in_play_and_compare():
    # without --capture-all-dead GNU Go passes with dead stones of ours on its side, and
    # area scoring as the board stands counts them: it can lose to random then
    spec = gnugo_spec(1, GNUGO)
    result = run_cli("play", "--game", "go", "--size", "9", "--p1", "random", "--p2", spec, "--no-display",
                     "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert "player 2 = gtp:GNU Go" in result.stdout
    assert "player 2 (gtp:GNU Go" in result.stdout  # GNU Go beats random
    result = run_cli("compare", spec, "random", "--game", "go", "--size", "9", "--games", "2", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert "gtp:GNU Go" in result.stdout and "(A) against random (B): 2 games" in result.stdout
    total = next(line for line in result.stdout.splitlines() if line.startswith("all "))
    assert total.split()[1:4] == ["2", "100%", "0%"]  # A (GNU Go) wins every game


@needs_gnugo
def test_gnu_go_seeded_replays_its_moves():
    """A seeded GNU Go (``make_actor(spec, game, seed=S)``) is given the seed
    (``set_random_seed``) and plays the same moves every time it starts; unseeded it draws
    its seed from the clock."""
    game = mctsfw.make_game("go", size=9, komi=7.5)

    def moves(seed):
        gnugo = mctsfw.make_actor(gnugo_spec(1, GNUGO), game, seed=seed)
        try:
            state, played = game.initial_state(), []
            for _ in range(12):
                played.append(gnugo.select_action(state))
                state = game.next_state(state, played[-1])
            return played, gnugo.send("get_random_seed")
        finally:
            gnugo.close()

    first, seed = moves(3)
    assert seed == "3"
    assert moves(3) == (first, "3")
    assert moves(2**31 + 3) == (first, "3")  # as GNU Go takes it: below 2^31


def test_a_game_continued_from_a_record_is_told_to_the_engine(tmp_path):
    """``play --from game.sgf`` with an outside engine: the recorded moves reach it before its first genmove."""
    from hexzero.mctsfw.sgf import to_sgf

    game = mctsfw.make_game("hex", size=5)
    opening = [game.parse_action(c, game.initial_state()) for c in ("c3", "b4", "d2")]
    path = tmp_path / "opening.sgf"
    path.write_text(to_sgf(game, opening))
    spec = "gtp:" + our_engine_command("--game", "hex", "--p", "random", "--seed", "2")
    result = run_cli("play", "--from", str(path), "--p1", "random", "--p2", spec, "--no-display", "--seed", "1",
                     "--record", str(tmp_path / "out.sgf"))
    assert result.returncode == 0, result.stderr
    from hexzero.mctsfw.sgf import read_sgf

    played = read_sgf((tmp_path / "out.sgf").read_text())
    assert played.moves[:3] == opening and game.is_final(played.state())


def test_a_lost_position_makes_our_engine_resign():
    """With a resign threshold, a searching player whose move is worth less answers
    ``resign`` and the position stays; without one it plays on."""
    def engine(threshold):
        return GtpEngine("hex", {"size": 3}, lambda game: mctsfw.make_actor("mcts", game, search_games=300, seed=1),
                         resign_threshold=threshold)

    # black b1 joins row 3 through a2 or b2, and white can take only one of them
    lost = ("play b b1", "play w a1", "play b a3", "play w c1", "play b b3", "play w c2", "play b c3")
    for threshold, resigns in ((0.0, False), (0.1, True)):
        gtp = engine(threshold)
        for line in lost:
            ok(gtp, line)
        before = position(gtp)
        answer = ok(gtp, "genmove w")
        assert (answer == "resign") == resigns
        assert (position(gtp) == before) == resigns


# ---- games whose moves are words ----------------------------------------------------------------
def test_connect_four_moves_in_words_reach_the_engine_and_back():
    """Connect Four writes a move as ``column 4``: ``play`` reads the words after the colour,
    and our own client and engine play a game through them."""
    engine = GtpEngine("connect4", {}, lambda game: mctsfw.make_actor("random", game, seed=1))
    ok(engine, "play b column 4")
    ok(engine, "play w 5")
    assert engine.moves == [3, 4]
    assert ask(engine, "play b column 9").startswith("? illegal move: there is no column 9")
    assert engine.moves == [3, 4]
    game = mctsfw.make_game("connect4")
    client = GtpActor(game, our_engine_command("--game", "connect4", "--p", "random", "--seed", "2"))
    try:
        record = play_game(game, {1: client, 2: mctsfw.make_actor("random", game, seed=3)})
    finally:
        client.close()
    assert game.is_final(record.states[-1]) and record.resigned is None


def test_a_refusal_of_the_engine_travels_from_a_worker_process():
    """A worker's exception comes back pickled: the refusal keeps its command and reason."""
    import pickle

    from hexzero.plugins.gtp import GtpCommandRefused

    again = pickle.loads(pickle.dumps(GtpCommandRefused("play b Z9", "illegal move")))
    assert (again.command, again.reason, str(again)) == ("play b Z9", "illegal move",
                                                          "the GTP engine refused 'play b Z9': illegal move")


def test_the_client_reads_the_engines_final_score_as_the_score_for_black():
    from hexzero.plugins.gtp import score_of_text

    assert [score_of_text(t) for t in ("B+3.5", "W+0.5", "0", "b+12", "B+R", "W+Resign", "nonsense")] == \
        [3.5, -0.5, 0.0, 12.0, None, None, None]


def documented_gtp_commands() -> list[str]:
    """Every ``python cli.py gtp ...`` command line the README and the docs show."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line in page.read_text().splitlines():
            if line.startswith("python cli.py gtp "):
                found.append(line.split("#")[0].strip())
    return sorted(set(found))


@pytest.mark.parametrize("command", documented_gtp_commands())
def test_every_documented_gtp_command_plays_a_move(command):
    """As a newcomer copies it (with a small budget: flags given later win)."""
    args = shlex.split(command)[2:] + ["--search-games", "4", "--model-search-games", "4", "--time-limit", "0.2"]
    result = run_cli(*args, stdin="genmove b\nquit\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("= ") and "?" not in result.stdout, result.stdout + result.stderr
