"""OpenSpiel's MCTS as a player (``openspiel:SIMULATIONS``), following our games move by move."""

import importlib.util
import sys

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.actors import ActorError
from hexzero.mctsfw.match import play_game, play_match



def needs_openspiel(test):
    """Marked ``openspiel`` (the second step of CI runs these, with the extra installed); skipped without it."""
    missing = importlib.util.find_spec("pyspiel") is None
    return pytest.mark.openspiel(pytest.mark.skipif(missing, reason='needs OpenSpiel (pip install -e ".[differential]")')(test))


def test_without_openspiel_the_player_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # an import of it fails, as where it is not installed
    with pytest.raises(ActorError, match=r'OpenSpiel is not installed: pip install -e "\.\[differential\]"'):
        mctsfw.make_actor("openspiel:100", mctsfw.make_game("hex"))


@needs_openspiel
@pytest.mark.parametrize("name, params", [("hex", {"size": 4}), ("hex", {"size": 5}), ("connect4", {}),
                                          ("gomoku", {"size": 9})])
@pytest.mark.parametrize("starting_player", [1, 2])
def test_its_copy_of_the_game_ends_as_ours_whoever_opens(name, params, starting_player):
    """Whichever player opens (Hex's player 2 opening is OpenSpiel's game on the mirrored
    board), OpenSpiel's state ends where ours ends, with the same winner."""
    game = mctsfw.make_game(name, **params)
    bot = mctsfw.make_actor("openspiel:50", game, seed=3)
    other = mctsfw.make_actor("random", game, seed=starting_player)
    for seat in (1, 2):
        bot.reset()
        actors = {seat: bot, 3 - seat: other}
        record = play_game(game, actors, starting_player=starting_player)
        bot.sync(record.states[-1])
        spiel = bot.spiel_state
        assert spiel.is_terminal()
        returns = spiel.returns()
        opener_won = returns[0] > 0  # OpenSpiel's player 0 is whoever opened
        expected = None if returns[0] == 0 else starting_player if opener_won else 3 - starting_player
        assert game.winner(record.states[-1]) == expected


@needs_openspiel
def test_it_takes_a_win_and_blocks_one():
    """Its solver and search are OpenSpiel's: Connect Four, a column of three to complete."""
    game = mctsfw.make_game("connect4")
    state = game.initial_state(1)
    for column in (3, 4, 3, 4, 3, 4):  # player 1 threatens 3, player 2 threatens 4
        state = game.next_state(state, column)
    bot = mctsfw.make_actor("openspiel:200", game, seed=1)
    bot.opening_played(1, [3, 4, 3, 4, 3, 4])
    assert bot.select_action(state) == 3


@needs_openspiel
def test_it_beats_random_play_and_plays_a_match():
    game = mctsfw.make_game("hex", size=5)
    match = play_match(game, mctsfw.make_actor("openspiel:1000", game, seed=1), mctsfw.make_actor("random", game, seed=2),
                       4, seating=(1, 2), openers=("a", "a", "b", "b"))
    assert match.wins_a == 4


@pytest.mark.parametrize("spec, problem", [
    ("openspiel:", "give the simulations a move"),
    ("openspiel:ten", "give the simulations a move"),
    ("openspiel:0", "give the simulations a move"),
    ("openspiel:100,maybe", "give the simulations a move"),
])
def test_a_bad_spec_says_what_to_give(spec, problem):
    with pytest.raises(ActorError, match=problem):
        mctsfw.make_actor(spec, mctsfw.make_game("hex"))


def test_games_it_cannot_play_are_refused_with_the_reason():
    with pytest.raises(ActorError, match="not nim"):
        mctsfw.make_actor("openspiel:100", mctsfw.make_game("nim"))
    with pytest.raises(ActorError, match="exactly five"):
        mctsfw.make_actor("openspiel:100", mctsfw.make_game("gomoku", exactly_five=True))


@needs_openspiel
def test_go_opened_by_white_is_refused():
    game = mctsfw.make_game("go", size=5)
    with pytest.raises(ActorError, match="black"):
        mctsfw.make_actor("openspiel:10", game).select_action(game.initial_state(2))
