"""Network rollouts' fast path: greedy moves from the net's scores (no softmax), the
same moves and results as the most probable legal move of the full policy."""

import random

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw.evaluators import NetRolloutPolicy, NetRollouts, best_legal
from hexzero.mctsfw.roles import policy_scores
from benchmarks.shipped import shipped_model
from tests.conftest import random_states

MODEL = shipped_model("hex5")


class ScoresOnlyNet:
    """A policy net whose ``forward`` must not be called: greedy moves come from ``scores``."""

    name = "scores_only"
    roles = ("policy",)
    input_kind = "flat"

    def __init__(self, num_actions):
        self.logits = np.linspace(5.0, -5.0, num_actions, dtype=np.float32)  # prefers low cells
        self.calls = 0

    def forward(self, x):
        raise AssertionError("greedy rollouts computed the softmax")

    def scores(self, x):
        self.calls += 1
        return np.tile(self.logits, (len(x), 1))


class ForwardOnlyNet:
    """A policy net of the role's required methods only (no optional ``scores``)."""

    name = "forward_only"
    roles = ("policy",)
    input_kind = "flat"

    def __init__(self, num_actions):
        self.probs = np.linspace(0.1, 1.0, num_actions, dtype=np.float32)  # prefers high cells
        self.probs /= self.probs.sum()

    def forward(self, x):
        return np.tile(self.probs, (len(x), 1))


@pytest.fixture(scope="module")
def hex5():
    return mctsfw.make_game("hex", size=5)


@pytest.fixture(scope="module")
def anet(hex5):
    from hexzero.mctsfw.checkpoints import load_net

    return load_net(MODEL, hex5)


def test_policy_scores_is_the_optional_scores_or_forward(hex5):
    with_scores, without = ScoresOnlyNet(25), ForwardOnlyNet(25)
    assert policy_scores(with_scores) == with_scores.scores
    assert policy_scores(without) == without.forward


def test_greedy_rollouts_use_scores_and_never_the_softmax(hex5):
    net = ScoresOnlyNet(25)
    states = [s for s in random_states(hex5, 30, seed=2) if not hex5.is_final(s)]
    winners = hex5.playout_batch(states, random.Random(0), NetRolloutPolicy(hex5, net))
    assert net.calls > 0 and set(winners) <= {1, 2}
    # the net prefers low cells: each playout fills the empty cells in increasing order
    for state, winner in zip(states, winners):
        player, ones, twos, _ = state
        for a in hex5.legal_actions(state):
            if player == 1:
                ones |= 1 << a
            else:
                twos |= 1 << a
            player = 3 - player
        assert winner == (1 if hex5._connects(ones, 1) else 2)


def test_a_net_without_scores_still_rolls_out_by_its_forward(hex5):
    net = ForwardOnlyNet(25)
    state = hex5.initial_state()
    policy = NetRolloutPolicy(hex5, net)
    assert policy(state) == 24  # the most probable legal move
    x, mask = hex5.encode(state)[None, :], hex5.legal_mask(state)[None, :]
    mask[0, 24] = 0
    assert policy.choose_batch(x, mask).tolist() == [23]


def test_best_legal_never_picks_an_illegal_move_whatever_the_scores():
    rng = np.random.default_rng(0)
    scores = rng.normal(0, 1e6, (200, 25)).astype(np.float32)  # far beyond any trained logits
    mask = (rng.random((200, 25)) < 0.3).astype(np.float32)
    mask[np.arange(200), rng.integers(0, 25, 200)] = 1.0  # at least one legal move a row
    picked = best_legal(scores, mask)
    assert (mask[np.arange(200), picked] == 1).all()
    assert (picked == np.where(mask > 0, scores, -np.inf).argmax(axis=1)).all()


def test_shipped_anet_greedy_rollouts_equal_the_full_policys_most_probable_moves(hex5, anet):
    """Same moves (and so the same results) as argmax of the masked softmax, move by move:
    batched, lock-step, on positions from either opener."""
    states = [s for s in random_states(hex5, 120, seed=5) if not hex5.is_final(s)]
    x = np.stack([hex5.encode(s) for s in states])
    mask = np.stack([hex5.legal_mask(s) for s in states])
    policy = NetRolloutPolicy(hex5, anet)
    full = np.where(mask > 0, anet.forward(x), -1.0).argmax(axis=1)
    assert (policy.choose_batch(x, mask) == full).all()

    def most_probable(state):
        p = anet.forward(hex5.encode(state)) * hex5.legal_mask(state)
        return int(p.argmax())

    rng = random.Random(1)
    expected = [hex5.playout(s, rng, most_probable) for s in states]
    assert hex5.playout_batch(states, rng, policy) == expected
    rollouts = NetRollouts(hex5, anet, seed=0)
    values, _ = rollouts.evaluate(states)
    assert values == [float(w == hex5.current_player(s)) for w, s in zip(expected, states)]


def test_lockstep_playouts_stop_asking_the_net_once_games_are_decided(hex5):
    """A won game leaves the batch: the net sees fewer rows than filling every board
    would take, and the winners are still those of the filled boards."""
    net = ScoresOnlyNet(25)
    seen = []
    scores = net.scores
    net.scores = lambda x: seen.append(len(x)) or scores(x)
    states = [s for s in random_states(hex5, 60, seed=7) if not hex5.is_final(s)]
    winners = hex5.playout_batch(states, random.Random(0), NetRolloutPolicy(hex5, net))
    filling = sum(25 - (s[1] | s[2]).bit_count() - 1 for s in states)  # every move but each game's last
    assert 0 < sum(seen) < filling
    rng = random.Random(0)
    assert winners == [hex5.playout(s, rng, NetRolloutPolicy(hex5, ScoresOnlyNet(25))) for s in states]
    # a game already won (cells still empty) keeps its winner
    won = hex5.initial_state()
    for cell in (0, 1, 5, 2, 10, 3, 15, 4, 20):  # player 1 down the first column
        won = hex5.next_state(won, cell)
    assert hex5.winner(won) == 1 and hex5.playout_batch([won], random.Random(0), NetRolloutPolicy(hex5, net)) == [1]



def test_exploring_rows_cost_no_network_call_and_change_no_move(hex5, anet):
    """With epsilon, greedy rollouts judge only the rows that do not explore; the moves
    are those of judging every row and then moving the exploring ones at random (the
    same random numbers drawn)."""
    states = [s for s in random_states(hex5, 80, seed=2) if not hex5.is_final(s)]
    x = np.stack([hex5.encode(s) for s in states])
    mask = np.stack([hex5.legal_mask(s) for s in states])
    policy = NetRolloutPolicy(hex5, anet, epsilon=0.5, seed=3)
    seen, scores = [], policy.scores
    policy.scores = lambda rows: seen.append(len(rows)) or scores(rows)
    actions = policy.choose_batch(x, mask)
    expected = best_legal(anet.scores(x), mask)  # every row judged ...
    draws = np.random.default_rng(3)  # ... then the exploring rows drawn and moved at random
    explore = draws.random(len(x)) < 0.5
    expected[explore] = (draws.random(mask[explore].shape) * mask[explore]).argmax(axis=1)
    np.testing.assert_array_equal(actions, expected)
    assert sum(seen) == int((~explore).sum()) < len(x)
