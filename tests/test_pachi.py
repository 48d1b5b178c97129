"""Pachi as a player (``pachi:PLAYOUTS``, plugins/pachi.py): refused with the reason where it
cannot play, and, where it is built (scripts/build_pachi.sh; found as $HEXZERO_PACHI or
pachi on PATH), a Go player by our rules: it beats random play with either colour, its
games end with no dead stone left for the count."""

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.actors import ActorError
from hexzero.mctsfw.match import play_game
from hexzero.plugins.gtp import GtpActor, find_program, gnugo_spec
from hexzero.plugins.pachi import PACHI_VARIABLE, find_pachi

needs_pachi = pytest.mark.skipif(find_pachi() is None, reason="Pachi is not built (scripts/build_pachi.sh; "
                                                              f"${PACHI_VARIABLE} or pachi on PATH)")


def test_what_pachi_cannot_play_is_refused(monkeypatch, tmp_path):
    go9 = mctsfw.make_game("go", size=9)
    with pytest.raises(ActorError, match=r"pachi:lots: give the playouts a move, a whole number >= 1"):
        mctsfw.make_actor("pachi:lots", go9)
    with pytest.raises(ActorError, match=r"pachi:100: Pachi plays Go, not hex"):
        mctsfw.make_actor("pachi:100", mctsfw.make_game("hex", size=9))
    with pytest.raises(ActorError, match=r"pachi:100: Pachi plays at least 500 playouts a move"):
        mctsfw.make_actor("pachi:100", go9)
    monkeypatch.setenv(PACHI_VARIABLE, str(tmp_path / "no-pachi"))
    with pytest.raises(ActorError, match=r"pachi:500: Pachi not found: build it with scripts/build_pachi.sh"):
        mctsfw.make_actor("pachi:500", go9)


@needs_pachi
def test_pachi_beats_random_play_with_either_colour_and_leaves_no_dead_stones():
    game = mctsfw.make_game("go", size=9, komi=7.5)
    pachi = mctsfw.make_actor("pachi:500", game, seed=1)
    random_player = mctsfw.make_actor("random", game, seed=1)
    gnugo = find_program("gnugo")
    referee = GtpActor(game, gnugo_spec(1, gnugo)[len("gtp:"):]) if gnugo else None
    try:
        assert pachi.label == "pachi(500)"
        for seats, winner in (({1: pachi, 2: random_player}, 1), ({1: random_player, 2: pachi}, 2)):
            record = play_game(game, seats, 1)
            assert record.winner == winner and record.resigned is None
            final = record.states[-1]
            assert game.is_final(final)
            if referee is not None:  # Pachi took every dead stone off before it passed: the count as it stands holds
                referee.reset()
                referee.opening_played(1, record.actions)
                assert referee.send("final_status_list dead") == ""
    finally:
        pachi.close()
        if referee is not None:
            referee.close()
