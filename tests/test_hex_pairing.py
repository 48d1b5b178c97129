"""Hex's pairing connections (games/hex_pairing.py): the wins they prove are wins and the
moves they leave out lose, by plain minimax on small boards; on a 9x9 board a chain of
bridges and edge templates is found, its gap filled first and an intrusion answered."""

import pytest

from hexzero import mctsfw
from tests.test_hex_solver import minimax, random_positions


@pytest.mark.parametrize("size, fewest, seed", [(4, 4, 0), (5, 13, 1)])
def test_proofs_and_defences_agree_with_minimax(size, fewest, seed):
    game = mctsfw.make_game("hex", size=size, pairing=True)
    memo, proved, kept = {}, 0, 0
    for state in random_positions(game, 150, fewest, size * size - 2, seed):
        if game.forcing_actions(state) is not None:
            continue  # (a win at once, or a stop: the searches ask these first)
        line = game.forced_win(state)
        if line:
            proved += 1
            assert minimax(game, state, memo), game.render(state)
            assert not minimax(game, game.next_state(state, line[0]), memo), game.render(state)
            continue
        defences = game.threat_defences(state)
        if defences:
            kept += 1
            for action in game.legal_actions(state):
                if action not in defences:  # every move left out loses
                    assert minimax(game, game.next_state(state, action), memo), (game.render(state), action)
    assert proved > 5 and kept > 5


def play(game, black, white, to_move=1):
    """A 9x9 position with player 1's stones on the cells ``black`` and player 2's on ``white``."""
    ones = sum(1 << game.parse_action(cell, game.initial_state()) for cell in black)
    twos = sum(1 << game.parse_action(cell, game.initial_state()) for cell in white)
    return (to_move, ones, twos, 0)


def test_the_proofs_are_asked_for():
    """Off by default (``[games.hex] pairing``): the searches play Hex as the shipped figures
    were measured; on, a game's name says so."""
    assert mctsfw.make_game("hex", size=9).forced_win(play(mctsfw.make_game("hex", size=9), CHAIN, [])) is None
    assert mctsfw.make_game("hex", size=9, pairing=True).params() == {"size": 9, "pairing": True}


CHAIN = ["e2", "d4", "c6", "b8"]


def test_a_chain_of_bridges_wins_its_gap_first_and_answers_an_intrusion():
    game = mctsfw.make_game("hex", size=9, pairing=True)
    # player 1 joins rows 1 and 9: e2 (an edge template to row 1), bridges e2-d4, d4-c6,
    # c6-b8 (b8 an edge template to row 9); the chain has no gap
    black = ["e2", "d4", "c6", "b8"]
    white = ["g5", "h3"]
    state = play(game, black, white, to_move=1)
    line = game.forced_win(state)
    assert line is not None and len(line) == 9  # the first bridge filled, then four intrusions and answers
    # player 2 to move: every move but the chain's cells loses
    state2 = play(game, black, white, to_move=2)
    defences = game.threat_defences(state2)
    assert defences is not None and len(defences) == 10  # five links of two cells each
    # player 2 intrudes into the bridge d4-c6 at d5; player 1's answer is the other cell, c5
    intruded = game.next_state(state2, game.parse_action("d5", state2))
    line = game.forced_win(intruded)
    assert line is not None and game.cell_name(line[0]) == "c5"
    # white on b7 leaves one cell between c6 and b8: the gap, filled first
    gapped = play(game, black, ["b7"], to_move=1)
    line = game.forced_win(gapped)
    assert line is not None and game.cell_name(line[0]) == "c7"
    assert game.forced_win(play(game, black, ["b7"], to_move=2)) is None  # player 2 holds nothing
    # player 2 keeps the gap and the four bridges' cells: elsewhere player 1 fills the gap
    defences = game.threat_defences(play(game, black, ["b7"], to_move=2))
    assert len(defences) == 9 and game.parse_action("c7", state) in defences


def board(game, black, white, to_move):
    """A position with player 1's stones on ``black`` and player 2's on ``white`` (cell names)."""
    cell = lambda name: game.parse_action(name, game.initial_state())  # noqa: E731
    return (to_move, sum(1 << cell(c) for c in black), sum(1 << cell(c) for c in white), 0)


def test_a_second_row_ladder_with_an_escape_cannot_be_cut():
    """Player 1's column e2-e6 touches row 1 only at e1 (white f1 blocks the edge template):
    white blocks e1, black steps to d2 (threatening d1), white d1, black c2 joins c1 on the
    edge. With the escape c1 black holds a chain without a gap; with white on c1 the
    ladder runs into the board's end and e1 is a gap. Plain minimax agrees each time."""
    game = mctsfw.make_game("hex", size=6, pairing=True)
    black = ["e2", "e3", "e4", "e5", "e6"]
    empty = {"d1", "e1", "c2", "d2"}
    white = [f"{col}{row}" for col in "abcdef" for row in range(1, 7)
             if f"{col}{row}" not in empty and f"{col}{row}" not in black and f"{col}{row}" != "c1"]
    memo = {}
    escaped = board(game, black + ["c1"], white, to_move=2)
    assert not minimax(game, escaped, memo)  # white to move loses
    assert sorted(game.cell_name(a) for a in game.threat_defences(escaped)) == ["c2", "d1", "d2", "e1"]
    black_to_move = board(game, black + ["c1"], white, to_move=1)
    assert [game.cell_name(a) for a in game.forced_win(black_to_move)] == ["e1"]  # the gap filled at once
    blocked = game.next_state(escaped, game.parse_action("e1", escaped))
    assert game.cell_name(game.forced_win(blocked)[0]) == "d2"  # the ladder's next step: a gap
    stepped = game.next_state(blocked, game.parse_action("d2", blocked))
    assert not minimax(game, stepped, memo)
    assert sorted(game.cell_name(a) for a in game.threat_defences(stepped)) == ["c2", "d1"]
    # white to move after e1 d1 (black's step d2 played): black's next step c2 is the gap
    after = board(game, black + ["c1", "d2"], white + ["e1", "d1"], to_move=2)
    assert [game.cell_name(a) for a in game.threat_defences(after)] == ["c2"]
    caught = board(game, black, white + ["c1"], to_move=2)  # no escape: white blocks e1 and wins
    assert minimax(game, caught, memo)
    assert not minimax(game, game.next_state(caught, game.parse_action("e1", caught)), memo)
    assert "e1" in [game.cell_name(a) for a in game.threat_defences(caught)]


def test_ladders_run_to_an_edge_template_along_every_side():
    """On 9x9, for each player and each of the player's sides (the board turned and
    mirrored), a group on the second line with one empty first-line cell and a stone of
    the player's further along with its edge template free: the ladder links them, so the
    player's chain has no gap and the opponent to move keeps its cells."""
    game = mctsfw.make_game("hex", size=9, pairing=True)
    n = 9

    def name(player, side, line, pos):
        r, c = (line, pos) if side == 0 else (n - 1 - line, n - 1 - pos)
        return game.cell_name(r * n + c if player == 1 else c * n + r)

    for player in (1, 2):
        for side in (0, 1):
            # a line of stones from the other side down to (1, 6), (0, 7) blocked; an escape
            # stone at (1, 2) with (0, 2) and (0, 3) free: the ladder runs (1, 5) .. (1, 3)
            own = [name(player, side, line, 6) for line in range(1, n)]
            other = [name(player, side, 0, 7), name(player, side, 2, 4)]
            escape = name(player, side, 1, 2)
            stones = (own + [escape], other) if player == 1 else (other, own + [escape])
            state = board(game, *stones, to_move=3 - player)
            kept = {game.cell_name(a) for a in game.threat_defences(state)}
            ladder = {name(player, side, 0, p) for p in range(2, 7)} | {name(player, side, 1, p) for p in range(3, 6)}
            assert kept == ladder, (player, side, sorted(kept))
            without = (own, other + [escape]) if player == 1 else (other + [escape], own)
            state = board(game, *without, to_move=3 - player)
            assert {game.cell_name(a) for a in game.threat_defences(state)} == {name(player, side, 0, 6)}
