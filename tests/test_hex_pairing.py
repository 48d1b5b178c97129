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
