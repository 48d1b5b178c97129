import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as mctsfw sets it, in case numpy loads first

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the tests run from a checkout whether or not it is installed
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import mctsfw  # noqa: E402


@pytest.fixture(scope="module")
def hex3():
    return mctsfw.make_game("hex", size=3)


@pytest.fixture(scope="module")
def hex4():
    return mctsfw.make_game("hex", size=4)


def random_states(game, count, seed=0):
    """``count`` positions reached by random legal moves from either opener (some may be final)."""
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(count):
        state = game.initial_state(int(rng.integers(1, 3)))
        for _ in range(int(rng.integers(0, game.num_actions // 2))):
            if game.is_final(state):
                break
            state = game.next_state(state, int(rng.choice(game.legal_actions(state))))
        states.append(state)
    return states
