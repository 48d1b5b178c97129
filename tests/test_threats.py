"""Threats declared by the games (``Game.forcing_actions``) agree with brute force by the
game's own rules, in positions reached by random play (games/gomoku.py, connect4.py, hex.py)."""

import random

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.game import Forcing

GAMES = {
    "gomoku 9x9": ("gomoku", {"size": 9}),
    "gomoku 15x15": ("gomoku", {"size": 15}),
    "gomoku exactly five": ("gomoku", {"size": 9, "exactly_five": True}),
    "gomoku connect 4": ("gomoku", {"size": 7, "connect": 4}),
    "connect4": ("connect4", {}),
    "connect4 5x4": ("connect4", {"rows": 4, "columns": 5}),
    "hex 3x3": ("hex", {"size": 3}),
    "hex 5x5": ("hex", {"size": 5}),
    "hex 7x7": ("hex", {"size": 7}),
}


def brute_forcing(game, state) -> Forcing | None:
    """What ``forcing_actions`` must say, by trying every move with ``next_state``: the moves
    that win now; else the moves that the opponent, were it their turn, would win with."""
    player = game.current_player(state)
    legal = game.legal_actions(state)
    wins = [a for a in legal if game.winner(game.next_state(state, a)) == player]
    if wins:
        return Forcing(tuple(sorted(wins)), True)
    passed = (3 - player, *state[1:])  # the same stones, the opponent to move
    blocks = [a for a in legal if game.winner(game.next_state(passed, a)) == 3 - player]
    return Forcing(tuple(sorted(blocks)), False) if blocks else None


def positions(game, games, seed):
    rng = random.Random(seed)
    for _ in range(games):
        state = game.initial_state(rng.choice([1, 2]))
        while not game.is_final(state):
            yield state
            state = game.next_state(state, rng.choice(game.legal_actions(state)))


@pytest.mark.parametrize("name", GAMES)
def test_forcing_actions_agree_with_brute_force(name):
    game_name, params = GAMES[name]
    game = mctsfw.make_game(game_name, **params)
    seen = {True: 0, False: 0, None: 0}
    for state in positions(game, 40, seed=hash(name) % 1000):
        declared = game.forcing_actions(state)
        assert declared == brute_forcing(game, state), game.render(state)
        seen[None if declared is None else declared.wins] += 1
    assert all(seen.values()), seen  # each kind met: wins, blocks and quiet positions


def test_a_game_that_declares_no_threats_says_none():
    nim = mctsfw.make_game("nim", piles=[1, 2])
    assert nim.forcing_actions(nim.initial_state()) is None
