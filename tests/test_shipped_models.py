"""The networks shipped under models/: each loads for the game its run's config names
and gives a legal policy; the Connect Four network with search blocks a four in a row
and takes the only winning move."""

from pathlib import Path

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw.actors import make_actor
from hexzero.mctsfw.checkpoints import load_net
from benchmarks.shipped import shipped_game, shipped_model
from tests.test_training import ROOT

SHIPPED = sorted((ROOT / "models").glob("*/*.keras"))


def game_of(model: Path) -> mctsfw.Game:
    return shipped_game(model.parent.name)


def test_models_are_shipped():
    assert {p.parent.name for p in SHIPPED} >= {"hex5", "hex5-az", "connect4", "gomoku9", "go9", "go13", "hex7"}


@pytest.mark.parametrize("model", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_shipped_network_loads_and_gives_a_legal_policy(model):
    game = game_of(model)
    net = load_net(model, game)
    state = game.initial_state()
    probs = net.policy(state)
    assert probs.shape == (game.num_actions,)
    assert np.isclose(probs.sum(), 1.0, atol=1e-4) and (probs >= 0).all()


def test_connect_four_network_with_search_wins_and_blocks():
    model = shipped_model("connect4")
    game = game_of(model)

    def move_after(columns: str) -> int:
        state = game.initial_state(1)
        for c in columns:
            state = game.next_state(state, int(c))
        return make_actor(model, game, search_games=200, seed=0).select_action(state)

    # player 1 holds columns 0-2 of the bottom row; player 2, to move, must block at 3
    assert move_after("06162") == 3
    # player 1, to move, has three in column 6; player 2's open three on the bottom row
    # (columns 1-3) wins next move whatever player 1 blocks, so only column 6 wins
    assert move_after("616263") == 6



def test_hex7_network_completes_its_bridge_to_win():
    """Player 1 (row 0 to row 6) holds a chain down column 3 but for one cell; the net with
    a little search plays the one winning cell, from either side's turn to start."""
    model = shipped_model("hex7")
    game = game_of(model)
    assert game.num_actions == 49
    state = game.initial_state(1)
    # player 1: (0,3) (1,3) (2,3) (4,3) (5,3) (6,3); player 2 far away in column 0
    for p1, p2 in zip((3, 10, 17, 31, 38, 45), (0, 7, 14, 21, 28, 35)):
        state = game.next_state(game.next_state(state, p1), p2)
    assert make_actor(model, game, search_games=100, seed=0).select_action(state) == 24
