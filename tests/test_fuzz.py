"""Hostile input, generated (Hypothesis): the GTP engine, the Gomocup brain, the web board's
requests and the readers of SGF, TOML and model files answer anything with a refusal of
their own kind, never an unexpected exception, and a refusal changes nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hexzero import mctsfw
from hexzero.mctsfw.checkpoints import ModelFileError, load_net
from hexzero.mctsfw.config import ConfigError, read_toml
from hexzero.mctsfw.sgf import SgfError, read_sgf_file
from hexzero.plugins.gtp import GtpEngine
from hexzero.plugins.pbrain import PbrainEngine
from hexzero.plugins.web import BoardError, BoardRequestHandler, WebBoard

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

GTP_WORDS = ["play", "genmove", "undo", "boardsize", "clear_board", "komi", "loadsgf", "showboard", "final_score",
             "time_settings", "time_left", "known_command", "list_commands", "hexzero-visits", "hexzero-policy",
             "b", "w", "black", "white", "pass", "resign", "swap-pieces", "D4", "a1", "e5", "j9", "T19", "0", "-1",
             "9", "25", "1e9", "nan", "inf", "/dev/zero", "/nonexistent.sgf", "#", "\t", "\x00", "é", "3.5"]
gtp_lines = st.one_of(st.text(max_size=40),
                      st.lists(st.sampled_from(GTP_WORDS), min_size=1, max_size=5).map(" ".join),
                      st.tuples(st.sampled_from(["", "7 ", "12 "]), st.sampled_from(GTP_WORDS[:15]),
                                st.lists(st.sampled_from(GTP_WORDS), max_size=3)).map(
                          lambda t: t[0] + t[1] + " " + " ".join(t[2])))


@pytest.mark.parametrize("game, size", [("go", 5), ("hex", 5)])
@FAST
@given(lines=st.lists(gtp_lines, max_size=12))
def test_the_gtp_engine_answers_anything_and_a_refusal_changes_nothing(game, size, lines):
    engine = GtpEngine(game, {"size": size}, lambda g: mctsfw.make_actor("random", g, seed=1))
    try:
        for line in lines:
            before = (engine.starting_player, list(engine.moves), engine.state, engine.game.params())
            response = engine.handle(line)
            if response is None:
                continue
            assert response[0] in "=?" and response.endswith("\n\n") and "\n\n" not in response[:-2]
            if response.startswith("?"):
                assert (engine.starting_player, engine.moves, engine.state, engine.game.params()) == before
            assert engine.state == engine.game.state_after(engine.moves, engine.starting_player)
            if engine.finished:
                break
    finally:
        engine.actor.close()


PBRAIN_WORDS = ["START", "RECTSTART", "RESTART", "BEGIN", "TURN", "BOARD", "DONE", "TAKEBACK", "INFO", "ABOUT",
                "timeout_turn", "time_left", "rule", "max_memory", "0", "1", "4", "9", "15", "99", "-3",
                "0,0", "4,4", "8,8", "9,9", "1,1,1", "2,2,2", "3,3,3", "0,0,7", "x,y", ",", "", "\x00"]
pbrain_lines = st.one_of(st.text(max_size=30),
                         st.lists(st.sampled_from(PBRAIN_WORDS), min_size=1, max_size=3).map(" ".join))


@FAST
@given(lines=st.lists(pbrain_lines, max_size=15))
def test_the_gomocup_brain_answers_anything_in_one_line_each(lines):
    engine = PbrainEngine("gomoku", {"size": 9}, lambda g: mctsfw.make_actor("random", g, seed=1))
    try:
        for line in lines:
            before = (list(engine.moves), engine.state, engine.game.params())
            answers = engine.handle(line)
            for answer in answers:
                assert "\n" not in answer and answer.strip() == answer
            if answers and answers[0].split(" ")[0] in ("ERROR", "UNKNOWN"):
                assert len(answers) == 1 and (engine.moves, engine.state, engine.game.params()) == before
            assert engine.state == engine.game.state_after(engine.moves, 1)
    finally:
        engine.actor.close()


json_values = st.recursive(st.none() | st.booleans() | st.integers(-10 ** 6, 10 ** 6) | st.floats() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                       max_size=3), max_leaves=6)
bodies = st.dictionaries(st.sampled_from(["action", "text", "human", "starting_player", "x"]), json_values, max_size=3)


@FAST
@given(requests=st.lists(st.tuples(st.sampled_from(sorted(BoardRequestHandler.POSTS)), bodies), max_size=10))
def test_the_web_board_refuses_bad_requests_with_a_reason_and_nothing_else(requests):
    game = mctsfw.make_game("go", size=5)
    board = WebBoard(game, mctsfw.make_actor("random", game, seed=1))
    try:
        for path, body in requests:
            board.wait_for_agent()
            before = (list(board.moves), board.human, board.starting_player, board.resigned)
            try:
                BoardRequestHandler.POSTS[path](board, body)
            except BoardError as refusal:
                assert 400 <= refusal.status < 500 and refusal.reason
                assert (board.moves, board.human, board.starting_player, board.resigned) == before
            json.dumps(board.snapshot())  # whatever happened, the page can be drawn
    finally:
        board.wait_for_agent()
        board.close()


@FAST
@given(data=st.one_of(st.binary(max_size=300),
                      st.text(max_size=200).map(str.encode),
                      st.lists(st.sampled_from(["(", ")", ";", "FF[4]", "GM[1]", "GM[11]", "SZ[5]", "SZ[99]", "B[aa]",
                                                "W[bb]", "B[]", "AB[cc]", "KM[7.5]", "RE[B+R]", "[", "]", "\\"]),
                               max_size=20).map(lambda parts: "".join(parts).encode())))
def test_file_readers_refuse_any_bytes_with_their_own_error(tmp_path, data):
    path = tmp_path / "input"
    path.write_bytes(data)
    try:
        read_sgf_file(path)
    except SgfError:
        pass
    try:
        read_toml(path)
    except ConfigError:
        pass
    with pytest.raises(ModelFileError):
        load_net(path, mctsfw.make_game("hex", size=5))
