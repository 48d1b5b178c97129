"""Rapfi as a player (``rapfi:NODES``, plugins/rapfi.py): refused with the reason where it
cannot play, and, where it is built (scripts/build_rapfi.sh; found as $HEXZERO_RAPFI or
pbrain-rapfi on PATH), a Gomoku player by our rules, held to its nodes."""

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.actors import ActorError
from hexzero.mctsfw.match import play_game
from hexzero.plugins.rapfi import RAPFI_VARIABLE, find_rapfi

needs_rapfi = pytest.mark.skipif(find_rapfi() is None, reason="Rapfi is not built (scripts/build_rapfi.sh; "
                                                              f"${RAPFI_VARIABLE} or pbrain-rapfi on PATH)")


def test_what_rapfi_cannot_play_is_refused(monkeypatch, tmp_path):
    gomoku = mctsfw.make_game("gomoku", size=15)
    with pytest.raises(ActorError, match=r"rapfi:lots: give the search nodes a move, a whole number >= 1"):
        mctsfw.make_actor("rapfi:lots", gomoku)
    with pytest.raises(ActorError, match=r"rapfi:100: Rapfi plays Gomoku, not hex"):
        mctsfw.make_actor("rapfi:100", mctsfw.make_game("hex", size=9))
    monkeypatch.setenv(RAPFI_VARIABLE, str(tmp_path / "no-rapfi"))
    with pytest.raises(ActorError, match=r"rapfi:100: Rapfi not found: build it with scripts/build_rapfi.sh"):
        mctsfw.make_actor("rapfi:100", gomoku)


@needs_rapfi
def test_rapfi_wins_both_colours_against_random_play_and_stops_at_its_nodes(tmp_path, monkeypatch):
    (tmp_path / "config.toml").write_text("game = 'hex'\n")  # a run directory's config: not Rapfi's
    monkeypatch.chdir(tmp_path)
    game = mctsfw.make_game("gomoku", size=15)
    rapfi = mctsfw.make_actor("rapfi:100", game)
    random_player = mctsfw.make_actor("random", game, seed=1)
    try:
        assert rapfi.label == "rapfi(100)"
        for seats, winner in (({1: rapfi, 2: random_player}, 1), ({1: random_player, 2: rapfi}, 2)):
            record = play_game(game, seats, 1)
            assert record.winner == winner and len(record.actions) < 40
    finally:
        rapfi.close()


@needs_rapfi
def test_rapfi_makes_an_open_four_from_an_open_three():
    game = mctsfw.make_game("gomoku", size=15)
    # black (to move): an open three in the middle of row 7; white's stones far away in row 0
    moves = [7 * 15 + 5, 0, 7 * 15 + 6, 2, 7 * 15 + 7, 4]
    state = game.state_after(moves)
    rapfi = mctsfw.make_actor("rapfi:100", game)
    try:
        rapfi.opening_played(1, moves)
        after = game.next_state(state, rapfi.select_action(state))
        _, black, white, _, _ = after
        wins_next = game.completing_cells(black, game.full & ~(black | white))
        assert bin(wins_next).count("1") >= 2  # two cells to make five: white cannot stop both
    finally:
        rapfi.close()
