"""MoHex 2.0 as a player (``mohex:SIMULATIONS``, plugins/mohex.py): refused with the reason
where it cannot play, and, where it is built (scripts/build_mohex.sh; found as
$HEXZERO_MOHEX or mohex on PATH), a player of Hex games by our rules, the decided positions
that crashed it included."""

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.actors import ActorError
from hexzero.mctsfw.match import play_game
from hexzero.plugins.mohex import MOHEX_VARIABLE, find_mohex, mohex_argv

needs_mohex = pytest.mark.skipif(find_mohex() is None, reason="MoHex is not built (scripts/build_mohex.sh; "
                                                              f"${MOHEX_VARIABLE} or mohex on PATH)")

#: 9x9 Hex, black to move, already connected through the cells MoHex fills in: its search
#: answered no move (and its pre-search crashed) before scripts/patch_sources.py
DECIDED = ["e5", "i2", "g3", "d9", "f8", "i1", "f5", "i4", "g2", "a3", "g6", "b9", "g5", "e8", "f7", "c9"]


def test_what_mohex_cannot_play_is_refused(monkeypatch, tmp_path):
    hex9 = mctsfw.make_game("hex", size=9)
    with pytest.raises(ActorError, match=r"mohex:many: give the simulations a move, a whole number >= 1"):
        mctsfw.make_actor("mohex:many", hex9)
    with pytest.raises(ActorError, match=r"mohex:100: MoHex plays Hex, not go"):
        mctsfw.make_actor("mohex:100", mctsfw.make_game("go", size=9))
    monkeypatch.setenv(MOHEX_VARIABLE, str(tmp_path / "no-mohex"))
    with pytest.raises(ActorError, match=r"mohex:100: MoHex not found: build it with scripts/build_mohex.sh"):
        mctsfw.make_actor("mohex:100", hex9)


def test_every_seed_reaches_mohex_as_a_seed():
    # MoHex reads --seed=0 (and -1) as "seed from the clock": seed 0, a match's usual seed,
    # made its games differ from run to run
    seeds = [mohex_argv("mohex", seed)[-1] for seed in (0, 1, 2**31, -1)]
    assert seeds[0] != "--seed=0" and seeds[1] == "--seed=1" and seeds[2] == seeds[0]
    assert seeds[3] == "--seed=2147483647"  # (-1 modulo 2**31)
    assert not any(arg.startswith("--seed") for arg in mohex_argv("mohex"))


@needs_mohex
def test_mohex_seeded_with_0_replays_its_game():
    game = mctsfw.make_game("hex", size=7)
    games = []
    for _ in range(2):
        black, white = mctsfw.make_actor("mohex:300", game, seed=0), mctsfw.make_actor("mohex:300", game, seed=0)
        try:
            games.append(play_game(game, {1: black, 2: white}, 1).actions)
        finally:
            black.close()
            white.close()
    assert games[0] == games[1]


@needs_mohex
def test_mohex_wins_both_colours_against_random_play():
    game = mctsfw.make_game("hex", size=5)
    mohex = mctsfw.make_actor("mohex:200", game, seed=1)
    random_player = mctsfw.make_actor("random", game, seed=1)
    try:
        assert mohex.label == "mohex(200)"
        for seats, winner in (({1: mohex, 2: random_player}, 1), ({1: random_player, 2: mohex}, 2)):
            record = play_game(game, seats, 1)
            assert record.winner == winner  # by our rules: MoHex's black connects the top and bottom rows, as ours
    finally:
        mohex.close()


@needs_mohex
def test_mohex_answers_in_positions_its_filled_in_cells_decide():
    game = mctsfw.make_game("hex", size=9)
    state = game.initial_state()
    moves = []
    for text in DECIDED:
        moves.append(game.parse_action(text, state))
        state = game.next_state(state, moves[-1])
    black, white = mctsfw.make_actor("mohex:1000", game, seed=3), mctsfw.make_actor("mohex:1000", game, seed=4)
    try:
        record = play_game(game, {1: black, 2: white}, 1, opening=moves)  # the rest: black has won, white has lost
        assert record.winner == 1 and game.is_final(record.states[-1])
    finally:
        black.close()
        white.close()
