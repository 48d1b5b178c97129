"""SGF records (mctsfw/sgf.py): written and read back, files as other programs write them,
broken files refused with the reason, and the command line (play --record/--from, self-play)."""

import random

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.sgf import SgfError, parse_sgf, read_sgf, read_sgf_file, resigned_result, to_sgf
from tests.test_cli import refused
from tests.test_plugins import run_cli


def random_game(game, seed, starting_player=1, upto=None):
    """The moves of a random game (to its end, or its first ``upto`` moves)."""
    rng = random.Random(seed)
    state, moves = game.initial_state(starting_player), []
    while not game.is_final(state) and (upto is None or len(moves) < upto):
        action = rng.choice(game.legal_actions(state))
        moves.append(action)
        state = game.next_state(state, action)
    return moves


# ---- the Game API for grids ----------------------------------------------------------------------
def test_hex_grid_cells_are_hexgui_cells_row_by_row_from_the_top():
    game = mctsfw.make_game("hex", size=7)
    assert game.sgf_game == 11 and game.pass_action is None
    for action in range(game.num_actions):
        row, col = game.grid_cell(action)
        assert game.grid_action(row, col) == action
        # HexGui's name of the cell (its SGF value) is the one people type here
        assert f"{chr(ord('a') + col)}{row + 1}" == game.action_to_text(action)
    with pytest.raises(ValueError):
        game.grid_action(7, 0)


@pytest.mark.parametrize("name", ["nim", "connect4"])
def test_games_without_a_square_numbered_board_have_no_sgf(name):
    game = mctsfw.make_game(name)
    assert game.sgf_game is None
    with pytest.raises(NotImplementedError):
        game.grid_cell(0)
    with pytest.raises(ValueError, match="no SGF"):
        to_sgf(game, [])


# ---- writing and reading back ----------------------------------------------------------------------
@pytest.mark.parametrize("size", [3, 5, 11, 19])
def test_hex_games_round_trip(size):
    game = mctsfw.make_game("hex", size=size)
    for seed in range(5):
        starting = 1 + seed % 2
        moves = random_game(game, seed, starting)
        text = to_sgf(game, moves, starting, players={1: "alice", 2: "bob"})
        assert text.startswith("(;FF[4]GM[11]") and f"SZ[{size}]" in text
        assert all(len(line) <= 80 for line in text.splitlines())
        final = game.state_after(moves, starting)
        assert f"RE[{'B' if game.winner(final) == 1 else 'W'}+]" in text
        assert ("PL[W]" in text) == (starting == 2)
        read = read_sgf(text)
        assert read.game.name == "hex" and read.game.size == size and read.size == size
        assert read.moves == moves and read.starting_player == starting
        assert read.players == {1: "alice", 2: "bob"}
        assert read.state() == final
        assert read.state(3) == game.state_after(moves[:3], starting)


def test_the_first_moves_of_a_hex_game_are_written_as_hexgui_cells():
    game = mctsfw.make_game("hex", size=5)
    assert resigned_result(1) == "W+R" and resigned_result(2) == "B+R" and resigned_result(None) is None
    text = to_sgf(game, [0, 24, 7], result=resigned_result(1), DT="2026-11-23")
    assert ";B[a1];W[e5];B[c2])" in text and "RE[W+R]" in text and "DT[2026-11-23]" in text
    assert read_sgf(text).result == "W+R"


def test_values_with_brackets_backslashes_and_line_breaks_round_trip():
    game = mctsfw.make_game("hex", size=4)
    names = {1: "a]b\\c", 2: "[x]"}
    comment = "line one\nline two ] with \\ and ]]"
    text = to_sgf(game, [5], players=names, C=comment)
    assert "PB[a\\]b\\\\c]" in text
    read = read_sgf(text)
    assert read.players == names and read.properties["C"] == [comment]


def test_several_properties_a_node_white_space_and_soft_line_breaks():
    text = """ (
      ; FF [4] GM[11] SZ [5]
        C[a comment \\
that goes on]  PB[someone]
      ; B [c3] C[first] ;W[b2]
      ;B[d1]LB[d1:x][e1:y])"""
    nodes = parse_sgf(text)
    assert nodes[0].properties["C"] == ["a comment that goes on"]
    assert nodes[1].properties == {"B": ["c3"], "C": ["first"]}
    assert nodes[3].properties["LB"] == ["d1:x", "e1:y"]
    read = read_sgf(text)
    assert read.moves == [12, 6, 3] and read.players == {1: "someone"}


def test_the_main_line_is_the_first_variation_and_a_collection_gives_its_first_game():
    text = """(;GM[11]SZ[5];B[a1]
        (;W[b1](;B[c1];W[d1])(;B[e5]))
        (;W[e5];B[e4])
    )
    (;GM[11]SZ[5];B[c3])"""
    assert read_sgf(text).moves == [0, 1, 2, 3]


def test_ff3_long_property_names_keep_their_capitals():
    assert read_sgf("(;GaMe[11]SiZe[5];Black[a1];White[b1])").moves == [0, 1]


# ---- files from other programs -----------------------------------------------------------------
# HexGui 0.10 writes the root as FF, AP, GM, SZ, then the moves, lines cut at 72 characters
HEXGUI = """(;FF[4]AP[HexGui:0.10.GIT]GM[11]SZ[11]PB[MoHex]PW[human]RE[B+]C[pie rule\\: on]
;B[f6];W[swap-sides];W[e7];B[d9];W[c8];B[c9];W[d8];B[f5];W[g6]
;B[h4])
"""


def test_a_hexgui_record_with_a_swap():
    read = read_sgf(HEXGUI)
    game = read.game
    assert game.name == "hex" and game.size == 11
    # swap-sides leaves the board as it is: White moves next, as after B[f6]
    assert [game.action_to_text(a) for a in read.moves] == ["f6", "e7", "d9", "c8", "c9", "d8", "f5", "g6", "h4"]
    assert read.starting_player == 1 and read.result == "B+"
    assert read.properties["C"] == ["pie rule: on"]


def test_old_hexgui_swap_pieces_means_swap_sides_and_real_swap_pieces_mirrors_the_stone():
    old = "(;FF[4]AP[HexGui:0.9]GM[11]SZ[5];B[b1];W[swap-pieces];W[c3];B[a1])"
    assert read_sgf(old).moves == [1, 12, 0] and read_sgf(old).starting_player == 1
    # swap-pieces: b1 becomes a White stone on its mirror image across the long diagonal, a2
    new = "(;FF[4]AP[HexGui:0.10]GM[11]SZ[5];B[b1];W[swap-pieces];B[c3];W[a1])"
    read = read_sgf(new)
    assert read.starting_player == 2 and read.moves == [5, 12, 0]
    assert read.game.to_flat(read.state())[1:7] == (2, 0, 0, 0, 0, 2)


def test_little_golem_two_letter_hex_cells_and_a_resignation():
    read = read_sgf("(;FF[4]GM[11]SZ[13]PB[p1]PW[p2];B[gg];W[ef];B[resign])")
    assert read.moves == [6 * 13 + 6, 5 * 13 + 4] and read.ended_by == "resign"


# ---- broken files ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    ("", "no SGF game tree"),
    ("FF[4]GM[11]", "no SGF game tree"),
    ("(;GM[11]SZ[5];B[a1]", "line 1: the file ends inside a game tree"),
    ("(;GM[11]SZ[5];B[a1\n\n)", "line 1: a property value is never closed"),
    ("(;GM[11]SZ[5];B;W[a1])", "property B has no value"),
    ("(;GM[11]SZ[5];b[a1])", "no capital letter"),
    ("(;GM[11]SZ[5]\n;B[a1]}", "line 2: unexpected '}'"),
    ("(;GM[11]SZ[5](;B[a1]);W[b1])", "a node (';') after a variation"),
    ("(;GM[11]SZ[5]())", "an empty game tree"),
    ("(;GM[4]SZ[15];B[hh])", "GM[4] is Gomoku/Renju: not a game played here with SGF; these are: "),
    ("(;GM[x])", "GM[x] is not a game number"),
    ("(;GM[11]SZ[5:7])", "only square boards"),
    ("(;GM[11]SZ[five])", "SZ[five] is not a board size"),
    ("(;GM[11]SZ[25])", "hex: size: must be a whole number from 3 to 19, not 25"),
    ("(;GM[11]SZ[5];B[f1])", "line 1: move 1 B[f1]: 'f1' is off the 5x5 board"),
    ("(;GM[11]SZ[5];B[a1];W[b0])", "move 2 W[b0]: 'b0' is off the 5x5 board"),
    ("(;GM[11]SZ[5];B[a1];W[1a])", "move 2 W[1a]: '1a' is not a point"),
    ("(;GM[11]SZ[5];B[a1];B[b1])", "move 2 B[b1]: W is to move here (hex alternates)"),
    ("(;GM[11]SZ[5];B[a1];W[a1])", "move 2 W[a1] is illegal: cell a1 is already taken"),
    ("(;GM[11]SZ[5];B[a1];W[])", "move 2 W[]: a pass, and hex has no pass"),
    ("(;GM[11]SZ[5];B[a1]W[b1])", "a node holds one move"),
    ("(;GM[11]SZ[5]AB[a1][b2];W[c3])", "setup stones (AB[...]) are not supported"),
    ("(;GM[11]SZ[5];B[a1];W[b1];B[swap-sides])", "a swap is the second player's first move"),
    ("(;GM[11]SZ[5];B[a1];W[resign];B[c3])", "a move after resign"),
    ("(;GM[11]SZ[5]PL[X])", "PL[X]: the player to move is B or W"),
])
def test_broken_files_are_refused_with_the_reason(text, message):
    with pytest.raises(SgfError) as error:
        read_sgf(text)
    assert message in str(error.value)


def test_a_file_of_another_game_or_board_than_the_engines_is_refused():
    hex5 = mctsfw.make_game("hex", size=5)
    assert read_sgf("(;GM[11]SZ[5];B[c3])", game=hex5).moves == [12]
    assert read_sgf("(;GM[11];B[c3])", game=hex5).moves == [12]  # no SZ: the engine's board
    with pytest.raises(SgfError, match="the file's board is 7x7, this hex board is 5x5"):
        read_sgf("(;GM[11]SZ[7];B[c3])", game=hex5)
    with pytest.raises(SgfError, match="the file is a game of Go, not of hex"):
        read_sgf("(;GM[1]SZ[5];B[cc])", game=hex5)


def test_read_sgf_file_names_the_file(tmp_path):
    with pytest.raises(SgfError, match=r"nothing\.sgf: cannot be read"):
        read_sgf_file(tmp_path / "nothing.sgf")
    bad = tmp_path / "bad.sgf"
    bad.write_bytes(b"(;GM[11]SZ[5]PB[J\xf6rg];B[a1];W[a1])")  # Latin-1, as old files are
    with pytest.raises(SgfError, match=r"bad\.sgf: line 1: move 2 W\[a1\] is illegal"):
        read_sgf_file(bad)
    bad.write_bytes(b"(;GM[11]SZ[5]PB[J\xf6rg];B[a1])")
    assert read_sgf_file(bad).players == {1: "J\u00f6rg"}


# ---- the command line ------------------------------------------------------------------------------
def test_play_records_sgf_and_continues_from_it(tmp_path):
    record = tmp_path / "games" / "x.sgf"
    result = run_cli("play", "--size", "4", "--p1", "random", "--p2", "random", "--seed", "5", "--no-display",
                     "--record", str(record))
    assert result.returncode == 0, result.stderr
    assert f"games saved in {record}" in result.stdout
    full = read_sgf_file(record)
    assert full.game.is_final(full.state()) and full.players == {1: "random", 2: "random"}
    # the first three moves of it, from which two players go on
    start = tmp_path / "start.sgf"
    start.write_text(to_sgf(full.game, full.moves[:3]))
    result = run_cli("play", "--p1", "random", "--p2", "mcts", "--search-games", "20", "--seed", "1", "--no-display",
                     "--from", str(start), "--record", str(tmp_path / "y.sgf"))
    assert result.returncode == 0, result.stderr
    assert "Hex(size=4)" in result.stdout and "3 moves played, player 2 to move" in result.stdout
    continued = read_sgf_file(tmp_path / "y.sgf")
    assert continued.moves[:3] == full.moves[:3] and continued.game.is_final(continued.state())
    assert continued.players == {1: "random", 2: "mcts(20 games)"}


def test_a_person_goes_on_from_a_record_with_piped_moves(tmp_path):
    game = mctsfw.make_game("hex", size=3)
    start = tmp_path / "start.sgf"
    start.write_text(to_sgf(game, [4, 0], 1))  # b2 (X), a1 (O): X to move
    # c1 and a3 join nothing yet, then every cell in turn: the taken ones are refused
    moves = "b2\n" + "\n".join(f"{r} {c}" for r in range(3) for c in range(3)) + "\n"
    result = run_cli("play", "--p1", "human", "--p2", "random", "--seed", "3", "--from", str(start),
                     "--record", str(tmp_path / "end.sgf"), stdin=moves)
    assert result.returncode == 0, result.stderr
    assert "refused: cell b2 is already taken" in result.stdout
    end = read_sgf_file(tmp_path / "end.sgf")
    assert end.moves[:2] == [4, 0] and end.game.is_final(end.state())


def test_several_games_are_saved_one_file_each(tmp_path):
    result = run_cli("play", "--size", "3", "--p1", "random", "--p2", "random", "--games", "3", "--no-display",
                     "--starting-player", "alternate", "--record", str(tmp_path / "g.sgf"))
    assert result.returncode == 0, result.stderr
    starters = [read_sgf_file(tmp_path / f"g-{n}.sgf").starting_player for n in (1, 2, 3)]
    assert starters == [1, 2, 1] and not (tmp_path / "g.sgf").exists()


def test_play_refuses_sgf_it_cannot_use_with_one_line(tmp_path, capsys):
    assert refused(capsys, "play", "--game", "nim", "--p1", "random", "--p2", "random", "--record",
                   tmp_path / "n.sgf") == f"error: --record {tmp_path / 'n.sgf'}: nim has no SGF; record it as JSON " \
                                          "lines (another extension)"
    broken = tmp_path / "broken.sgf"
    broken.write_text("(;GM[11]SZ[5];B[a1];W[a1])")
    assert refused(capsys, "play", "--from", broken) == \
        f"error: {broken}: line 1: move 2 W[a1] is illegal: cell a1 is already taken"
    assert refused(capsys, "play", "--from", tmp_path / "missing.sgf").startswith(
        f"error: {tmp_path / 'missing.sgf'}: cannot be read")
    game = mctsfw.make_game("hex", size=3)
    over = tmp_path / "over.sgf"
    over.write_text(to_sgf(game, random_game(game, 1)))
    assert "the game is over after its" in refused(capsys, "play", "--from", over)
    start = tmp_path / "start.sgf"
    start.write_text(to_sgf(game, [4]))
    assert refused(capsys, "play", "--from", start, "--size", "5") == \
        f"error: {start}: a 3x3 board, not 5x5 (--size)"
    assert refused(capsys, "play", "--from", start, "--game", "nim") == \
        f"error: {start}: a game of hex, not of nim (--game)"
    assert not (tmp_path / "n.sgf").exists()


# ---- self-play -------------------------------------------------------------------------------------
def test_selfplay_saves_each_game_once_also_across_a_resume(tmp_path):
    from hexzero.mctsfw.runs import RunDir
    from hexzero.mctsfw.selfplay import SelfPlayTrainer
    from tests.test_selfplay import tiny

    run_dir = tmp_path / "run"
    trainer = SelfPlayTrainer(tiny(run_dir, generations=1, extra=["selfplay.sgf=true"]), run_dir, progress=False)
    trainer.train()
    sgf_dir = run_dir / "sgf"
    assert sorted(p.name for p in sgf_dir.iterdir()) == [f"gen_0001_game_00{n}.sgf" for n in (1, 2, 3)]
    # what a run killed after playing games it had not committed leaves behind
    (sgf_dir / "gen_0002_game_001.sgf").write_text("(;GM[11]SZ[3];B[a1])")
    (sgf_dir / "gen_0005_game_002.sgf").write_text("junk")
    trainer = SelfPlayTrainer(tiny(run_dir, generations=2, extra=["selfplay.sgf=true"]), run_dir, progress=False)
    trainer.train()
    names = sorted(p.name for p in sgf_dir.iterdir())
    assert names == [f"gen_000{g}_game_00{n}.sgf" for g in (1, 2) for n in (1, 2, 3)]
    games = [r for r in RunDir(run_dir).read_metrics() if r["kind"] == "game"]
    assert len(games) == 6
    for record in games:
        read = read_sgf_file(trainer.sgf_path(record["game"]))
        assert read.moves == record["moves"] and read.starting_player == record["starting_player"]
        assert read.result == {1: "B+", 2: "W+"}[record["winner"]]


def test_selfplay_sgf_is_refused_for_a_game_without_sgf(tmp_path, capsys):
    message = refused(capsys, "selfplay", "--game", "nim", "--run-dir", tmp_path / "run", "--set", "selfplay.sgf=true")
    assert "selfplay.sgf = true: nim has no SGF" in message
    assert not (tmp_path / "run").exists()


# ---- Go ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [9, 13, 19])
def test_go_games_round_trip_with_passes_komi_and_the_area_score(size):
    game = mctsfw.make_game("go", size=size, komi=6.5)
    for seed in range(2):
        moves = random_game(game, seed, upto=None if size == 9 else 120)
        moves += [game.pass_action, game.pass_action] if not game.is_final(game.state_after(moves)) else []
        final = game.state_after(moves)
        assert game.is_final(final)
        text = to_sgf(game, moves)
        assert "GM[1]" in text and f"SZ[{size}]" in text and "KM[6.5]" in text
        assert ";B[]" in text or ";W[]" in text  # passes are empty values
        score = game.score(final)
        assert f"RE[{'B' if score > 0 else 'W'}+{abs(score):g}]" in text
        read = read_sgf(text)
        assert read.game.name == "go" and read.game.size == size and read.komi == 6.5 == read.game.komi
        assert read.moves == moves and read.state() == final


def test_go_points_are_column_then_row_from_the_top():
    read = read_sgf("(;GM[1]SZ[9];B[aa];W[ia];B[ai];W[ii];B[ee];W[tt];B[])")
    assert [read.game.action_to_text(a) for a in read.moves] == ["A9", "J9", "A1", "J1", "E5", "pass", "pass"]
    game = read.game
    # A1 = 0 (bottom left), J1 = 8, J9 = 80
    assert to_sgf(game, [0, game.pass_action, 8, 80]).splitlines()[-1] == ";B[ai];W[];B[ii];W[ia])"


def test_go_records_as_gogui_sabaki_and_gnu_go_write_them():
    gogui = """(;FF[4]CA[UTF-8]AP[GoGui:1.5.1]SZ[9]
KM[7.5]PB[GNU Go]PW[hexzero]DT[2026-11-23]RE[W+R]
;B[ee];W[gc];B[cg];W[ge];B[];W[])
"""
    read = read_sgf(gogui)
    assert [read.game.action_to_text(a) for a in read.moves] == ["E5", "G7", "C3", "G5", "pass", "pass"]
    assert read.result == "W+R" and read.players == {1: "GNU Go", 2: "hexzero"} and read.game.is_final(read.state())
    sabaki = """(;GM[1]FF[4]CA[UTF-8]AP[Sabaki:0.52.2]KM[6.5]SZ[13]DT[2026-11-23]
;B[dd]C[a \\] bracket]
;W[jj]
;B[jd]
(;W[dj]C[the main line]
;B[gg])
(;W[cj]))"""
    read = read_sgf(sabaki)
    assert [read.game.action_to_text(a) for a in read.moves] == ["D10", "K4", "K10", "D4", "G7"]
    assert read.komi == 6.5 and read.game.size == 13
    gnugo = """(;GM[1]FF[4]
SZ[9]
DT[2026-11-23]
KM[7.5]AP[GNU Go:3.8]RE[W+88.5]
;B[ee];W[cg];B[tt];W[gc];B[gg]C[White wins by 88.5 points
])
"""
    read = read_sgf(gnugo)
    assert [read.game.action_to_text(a) for a in read.moves] == ["E5", "C3", "pass", "G7", "G3"]
    assert parse_sgf(gnugo)[-1].properties["C"] == ["White wins by 88.5 points\n"]  # a hard line break stays


def test_go_setup_stones_and_illegal_moves_are_refused():
    # GNU Go's printsgf writes a position as setup stones, and handicap games start with them
    printsgf = "(;GM[1]FF[4]\nSZ[9]\nKM[7.5]HA[0]RU[Japanese]AP[GNU Go:3.8]AW[gc][cg]\nAB[hd][ee]\nPL[W]\n)"
    with pytest.raises(SgfError, match=r"line 1: setup stones \(AB/AW\[...\]\) are not supported: go positions"):
        read_sgf(printsgf)
    # a ko recapture at once
    ko = "(;GM[1]SZ[5];B[ba];W[ca];B[ab];W[db];B[bc];W[cc];B[cb];W[bb];B[cb])"
    with pytest.raises(SgfError, match=r"move 9 B\[cb\] is illegal"):
        read_sgf(ko)
    with pytest.raises(SgfError, match=r"move 1 B\[jj\]: 'jj' is off the 9x9 board"):
        read_sgf("(;GM[1]SZ[9];B[jj])")
    with pytest.raises(SgfError, match="go: size: must be a whole number from 5 to 19"):
        read_sgf("(;GM[1]SZ[21];B[aa])")
    assert read_sgf("(;GM[1];B[pd])").game.size == 19  # SGF's default board


def test_play_records_go_as_sgf_and_goes_on_from_its_komi_and_moves(tmp_path):
    game = mctsfw.make_game("go", size=7, komi=5.5)
    start = tmp_path / "start.sgf"
    start.write_text(to_sgf(game, random_game(game, 3, upto=11), players={1: "x", 2: "y"}))
    out = tmp_path / "go.sgf"
    result = run_cli("play", "--p1", "random", "--p2", "random", "--no-display", "--seed", "2",
                     "--from", str(start), "--record", str(out))
    assert result.returncode == 0, result.stderr
    assert "Go(size=7, komi=5.5" in result.stdout and "11 moves played, player 2 to move" in result.stdout
    read = read_sgf_file(out)
    assert read.game.komi == 5.5 and read.moves[:11] == read_sgf_file(start).moves
    assert read.game.is_final(read.state()) and read.result.startswith(("B+", "W+", "0"))


# ---- GNU Go reads our files and we read its own -----------------------------------------------------
def gnugo_path():
    import shutil

    return shutil.which("gnugo") or shutil.which("gnugo", path="/usr/games")


@pytest.mark.skipif(gnugo_path() is None, reason="GNU Go is not installed (apt-get install gnugo)")
@pytest.mark.parametrize("size, seed", [(9, 1), (13, 2)])
def test_gnu_go_finishes_our_record_and_its_record_reads_back_move_for_move(tmp_path, size, seed):
    """GNU Go loads our SGF, plays the game out (``--score finish``), writes its own SGF and
    prints each move it adds as a GTP vertex (on stderr): our reading of its file must give our moves
    first, then exactly the moves it printed (so both programs read points the same way)."""
    import re
    import subprocess

    game = mctsfw.make_game("go", size=size)
    ours = random_game(game, seed, upto=30)
    (tmp_path / "ours.sgf").write_text(to_sgf(game, ours))
    result = subprocess.run([gnugo_path(), "--quiet", "--level", "1", "--seed", "1", "--chinese-rules",
                             "--score", "finish", "-l", "ours.sgf", "-o", "theirs.sgf"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    printed = {int(n): vertex for n, vertex in re.findall(r"^(\d+) \w+ \(.\) move (\w+)$", result.stderr, re.M)}
    assert printed and min(printed) == len(ours)
    theirs = read_sgf_file(tmp_path / "theirs.sgf")
    assert theirs.moves[: len(ours)] == ours
    assert {n: game.action_to_text(a).upper() for n, a in enumerate(theirs.moves) if n >= len(ours)} == \
        {n: v.upper() for n, v in printed.items()}
    assert theirs.game.is_final(theirs.state())  # it ends with two passes


def test_play_continues_a_match_from_the_opening_moves():
    from hexzero.mctsfw.match import play_match

    game = mctsfw.make_game("hex", size=4)
    opening = [5, 10, 0]
    a, b = mctsfw.make_actor("random", game, seed=1), mctsfw.make_actor("random", game, seed=2)
    result = play_match(game, a, b, 2, seating=(1,), openers=(1,), opening=opening)
    for record in result.records:
        assert record.actions[:3] == opening and record.opening == 3
        assert len(record.movers) == len(record.move_seconds) == len(record.actions) - 3
        assert record.movers[0] == 2  # player 2 moves after three moves opened by player 1
        assert game.state_after(record.actions) == record.states[-1] and game.is_final(record.states[-1])
