"""The Gomocup brain protocol: our brain (``cli.py pbrain``, ``plugins.pbrain.PbrainEngine``)
and outside brains as players (``pbrain:COMMAND``, ``plugins.pbrain.PbrainActor``)."""

from __future__ import annotations

import shlex
import sys

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.actors import ActorError
from hexzero.mctsfw.match import play_match
from hexzero.plugins.pbrain import PbrainActor, PbrainEngine, PbrainEngineError, seconds_for
from benchmarks.shipped import shipped_model
from tests.test_plugins import ROOT, run_cli

GOMOKU9 = shipped_model("gomoku9")


def brain(size=9, player="random", **params) -> PbrainEngine:
    params = params or {"seed": 1}
    return PbrainEngine("gomoku", {"size": size}, lambda game: mctsfw.make_actor(player, game, **params))


def point(text: str, size: int = 9) -> int:
    x, y = map(int, text.split(","))
    assert 0 <= x < size and 0 <= y < size
    return y * size + x


def our_brain_command(*args: str) -> str:
    return shlex.join([sys.executable, str(ROOT / "cli.py"), "pbrain", *args])


def test_a_game_through_the_protocol_start_begin_turn():
    engine = brain()
    assert engine.handle("START 9") == ["OK"]
    [first] = engine.handle("BEGIN")  # the brain opens: black
    assert engine.moves == [point(first)]
    [answer] = engine.handle("TURN 0,0")
    assert engine.moves == [point(first), 0, point(answer)]
    assert engine.game.current_player(engine.state) == 2  # the opponent (white) is to move
    assert engine.handle("TAKEBACK " + answer) == ["OK"] and engine.moves == [point(first), 0]
    assert engine.handle("RESTART") == ["OK"] and engine.moves == []


def test_board_sets_the_position_and_the_brain_moves_as_the_side_to_move():
    engine = brain()
    engine.handle("START 9")
    assert engine.handle("BOARD") == []
    for line in ("4,4,2", "0,0,1", "5,5,2"):  # the opponent has one stone more: the brain is white
        assert engine.handle(line) == []
    [answer] = engine.handle("DONE")
    assert engine.moves[:3] == [point("4,4"), point("0,0"), point("5,5")]
    assert engine.moves[3] == point(answer) and engine.game.current_player(engine.state) == 1


def test_the_brain_takes_a_five_and_blocks_a_four():
    engine = brain(player="mcts", search_games=400, seed=0)
    engine.handle("START 9")
    # its own four in row 0 (x 0..3): it completes the five at 4,0
    lines = ["BOARD", "0,0,1", "0,5,2", "1,0,1", "1,5,2", "2,0,1", "2,5,2", "3,0,1", "8,8,2", "DONE"]
    answers = [a for line in lines for a in engine.handle(line)]
    assert answers == ["4,0"] and engine.game.is_final(engine.state)
    engine.handle("RESTART")
    # the opponent's four in column 8 from the top edge (y 0..3): the brain must block at 8,4
    lines = ["BOARD", "8,0,2", "0,0,1", "8,1,2", "2,6,1", "8,2,2", "4,6,1", "8,3,2", "DONE"]
    answers = [a for line in lines for a in engine.handle(line)]
    assert answers == ["8,4"]


@pytest.mark.parametrize("line, reason", [
    ("TURN 4,4", "illegal move 4,4: that point is taken"),  # the brain's own stone; x,y alone, no h8
    ("TURN 9,0", "off the 9x9 board"),
    ("TURN x", "expected coordinates x,y"),
    ("TAKEBACK 0,0", "the last stone is"),
    ("START 4", "size"),
    ("START big", "START takes the board size"),
    ("RECTSTART 9,11", "only square boards"),
    ("BEGIN", "send RESTART first"),
    ("INFO rule 4", "renju is not supported"),
    ("INFO timeout_turn soon", "whole number"),
])
def test_what_is_refused_changes_nothing(line, reason):
    engine = brain()
    engine.handle("START 9")
    engine.handle("BOARD")
    engine.handle("4,4,1")
    engine.handle("0,0,2")
    engine.handle("1,1,2")
    [answer] = engine.handle("DONE")
    before = (list(engine.moves), engine.state, engine.game)
    [error] = engine.handle(line)
    assert error.startswith("ERROR ") and reason in error
    assert (engine.moves, engine.state, engine.game) == before
    assert engine.handle("TURN 8,8") != [] and engine.moves[-2] == point("8,8")  # it plays on


def test_malformed_board_lines_and_unknown_commands():
    engine = brain()
    engine.handle("START 9")
    engine.handle("BOARD")
    [error] = engine.handle("1,1,7")
    assert error.startswith("ERROR ") and "x,y,field" in error
    assert engine.board_lines is None and engine.moves == []  # out of the BOARD
    engine.handle("BOARD")
    engine.handle("1,1,1")
    engine.handle("2,2,1")
    [error] = engine.handle("DONE")  # two stones of its own, none of the opponent's: not its turn
    assert "cannot be to move" in error and engine.moves == []
    [unknown] = engine.handle("SWAP2BOARD")
    assert unknown.startswith("UNKNOWN ")
    assert engine.handle("INFO max_memory 83886080") == [] and engine.handle("INFO some_future_key 1") == []
    assert engine.handle("") == [] and engine.handle("\x00\r") == []


def test_info_rule_1_plays_exactly_five_and_about_names_the_brain():
    engine = brain()
    engine.handle("START 9")
    assert engine.handle("INFO rule 1") == [] and engine.game.exactly_five
    assert engine.handle("INFO rule 0") == [] and not engine.game.exactly_five
    [about] = engine.handle("ABOUT")
    assert about.startswith('name="hexzero", version="')
    assert engine.handle("END") == [] and engine.finished


def test_the_manager_s_time_budgets_the_search():
    assert seconds_for(None, None, None, 40) is None
    assert seconds_for(5000, None, None, 40) == pytest.approx(5 * 0.8 - 0.1)
    assert seconds_for(5000, 180000, 20000, 40) == pytest.approx(20 / 40 * 0.8 - 0.1)  # the game's time is short
    assert seconds_for(0, None, None, 40) == pytest.approx(0.05)  # as fast as possible
    engine = brain(player="mcts", search_games=10 ** 6, seed=0)
    engine.handle("START 9")
    engine.handle("INFO timeout_turn 300")
    import time

    started = time.perf_counter()
    engine.handle("BEGIN")
    assert time.perf_counter() - started < 2.0  # stopped by the manager's 0.3 s, not a million search games


def test_a_network_for_another_board_is_refused_and_the_old_one_kept():
    engine = brain(player=str(GOMOKU9))
    [error] = engine.handle("START 15")
    assert error.startswith("ERROR ") and GOMOKU9.name in error and "size=15" in error
    assert engine.game.size == 9
    assert engine.handle("START 9") == ["OK"] and len(engine.handle("BEGIN")) == 1


def test_a_full_game_against_our_own_agent_through_the_cli():
    """cli.py pbrain as an outside brain (pbrain:COMMAND) plays our UCT agent: every move
    through the protocol (BEGIN, TURN), games in both colours, finished by the rules."""
    game = mctsfw.make_game("gomoku", size=9)
    outside = mctsfw.make_actor(f"pbrain:{our_brain_command('--size', '9', '--p', 'mcts', '--search-games', '300', '--seed', '1')}",
                                game)
    ours = mctsfw.make_actor("random", game, seed=2)
    try:
        assert outside.label.startswith("pbrain:hexzero")
        result = play_match(game, outside, ours, 2, seating=(1, 2), openers=(1,))
    finally:
        outside.close()
    assert len(result.records) == 2
    for record in result.records:
        state = game.state_after(record.actions, record.starting_player)
        assert game.is_final(state) and record.winner == game.winner(state)
    assert result.tally().wins == 2  # UCT-300 beats a random player at 9x9 Gomoku
    assert outside.brain.process.poll() is not None  # END: the brain has gone


def test_an_outside_brain_that_answers_nonsense_is_killed_with_a_reason(tmp_path):
    script = tmp_path / "bad_brain.py"
    script.write_text("import sys\nfor line in sys.stdin:\n"
                      "    w = line.split()[0] if line.split() else ''\n"
                      "    if w == 'ABOUT': print('name=\"bad\"', flush=True)\n"
                      "    elif w == 'START': print('OK', flush=True)\n"
                      "    elif w in ('BEGIN', 'TURN', 'DONE'): print('99,99', flush=True)\n")
    game = mctsfw.make_game("gomoku", size=9)
    actor = PbrainActor(game, [sys.executable, str(script)])
    with pytest.raises(PbrainEngineError, match="99,99.*off the board"):
        actor.select_action(game.initial_state())
    assert actor.brain.process.poll() is not None
    with pytest.raises(ActorError, match="plays Gomoku"):
        PbrainActor(mctsfw.make_game("hex", size=5), [sys.executable, str(script)])


def test_cli_pbrain_refuses_other_games_in_one_line():
    result = run_cli("pbrain", "--game", "hex")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "Gomoku only" in result.stderr
    # the brain's opening move, with a fixed seed, so that the manager's reply goes elsewhere
    opening = run_cli("pbrain", "--size", "9", "--p", "random", "--seed", "5", stdin="START 9\nBEGIN\nEND\n")
    assert opening.returncode == 0, opening.stderr
    first = opening.stdout.split()[1]
    reply = "0,0" if first != "0,0" else "1,1"
    result = run_cli("pbrain", "--size", "9", "--p", "random", "--seed", "5",
                     stdin=f"START 9\nBEGIN\nTURN {reply}\nEND\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split()
    assert lines[0] == "OK" and len(lines) == 3 and lines[1] == first
    assert all("," in line for line in lines[1:]) and reply not in lines[1:]
