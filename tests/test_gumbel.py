"""Gumbel AlphaZero's search (plugins/gumbel.py): sequential halving at the root, the
improved policy below it and as the target, sound with a handful of search games."""

import functools
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw import MCTS, make_tree_policy
from hexzero.mctsfw.search import NEW, search_together
from hexzero.plugins.gumbel import RootPlan, halving_visits
from benchmarks.shipped import shipped_model
from tests.test_puct import UniformEvaluator

ROOT = Path(__file__).resolve().parent.parent
NIM = mctsfw.make_game("nim", piles=[3, 4, 5])


def nim_sum(piles) -> int:
    return functools.reduce(lambda a, b: a ^ b, piles)


def winning_moves(game, state) -> list[int]:
    return [a for a in game.legal_actions(state) if nim_sum(game.next_state(state, a)[1]) == 0]


class MisledAtTheRoot(UniformEvaluator):
    """A network right everywhere but at the start: exact values (the xor rule), priors on
    the winning moves, except that the starting position's prior puts half its mass on
    a losing move (``bad``) and spreads the rest: its one winning move gets 1/30."""

    batch_size = 1

    def __init__(self, game, bad):
        super().__init__(game)
        self.bad = bad

    def evaluate(self, states, with_priors=True):
        game = self.game
        priors = np.zeros((len(states), game.num_actions))
        for i, state in enumerate(states):
            if state == game.initial_state():
                priors[i] = 0.5 / (game.num_actions - 1)
                priors[i, self.bad] = 0.5
            else:
                moves = winning_moves(game, state) or game.legal_actions(state)
                priors[i, moves] = 1.0 / len(moves)
        return np.array([1.0 if nim_sum(s[1]) else 0.0 for s in states]), priors


def misled_search(policy="gumbel", seed=1, **params):
    state = NIM.initial_state()
    (good,) = winning_moves(NIM, state)
    bad = next(a for a in NIM.legal_actions(state) if a != good)
    return MCTS(NIM, make_tree_policy(policy, **params), MisledAtTheRoot(NIM, bad), seed=seed), state, good


@pytest.mark.parametrize("k, n, expected", [
    (4, 16, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]),  # 2 rounds: 4 moves twice, then 2 moves four times
    (16, 8, [0] * 8),  # fewer search games than moves: each of the first 8 once
    (2, 5, [0, 0, 1, 1, 2]),
    (1, 3, [0, 1, 2]),
])
def test_sequential_halving_gives_each_round_equal_visits_and_halves_the_moves(k, n, expected):
    assert halving_visits(k, n) == expected


def test_halving_spends_the_budget_on_ever_fewer_moves():
    for k, n in [(16, 200), (8, 64), (12, 32), (3, 100)]:
        sequence = halving_visits(k, n)
        assert len(sequence) == n
        visits = [0] * k
        for want in sequence:  # the moves in: those at the wanted count; the best of them (here: the first) goes
            visits[visits.index(want)] += 1
        survivors = [v for v in visits if v == max(visits)]
        assert len(survivors) == 2 or k < 2 or n < k * math.ceil(math.log2(k))
        assert visits == sorted(visits, reverse=True)


@pytest.mark.parametrize("search_games", [4, 8, 16, 32])
def test_a_handful_of_search_games_finds_the_win_the_root_prior_hides(search_games):
    """The prior gives the one winning move 1/30 and a losing one 1/2; the values say
    which is which. Gumbel plays the win and learns it (the target puts most of its
    weight there) from 4 search games on; PUCT with as few follows the prior."""
    mcts, state, good = misled_search()
    root = mcts.search(state, search_games=search_games)
    assert mcts.best_action(root) == good
    target = mcts.visit_distribution(root)
    assert target[good] > 0.75 and target.sum() == pytest.approx(1.0)
    assert set(np.flatnonzero(target)) <= set(NIM.legal_actions(state))
    puct, state, good = misled_search("puct")
    assert puct.best_action(puct.search(state, search_games=min(search_games, 16))) != good


def test_the_target_keeps_some_weight_on_every_move_and_whole_number_weights_for_the_records():
    mcts, state, good = misled_search()
    root = mcts.search(state, search_games=16)
    weights = mcts.targets(root)
    assert weights.dtype.kind == "i" and abs(int(weights.sum()) - 10_000) <= len(NIM.legal_actions(state))
    assert all(weights[a] >= 0 for a in NIM.legal_actions(state)) and weights[good] == weights.max()


def test_a_player_searches_without_noise_and_self_play_draws_gumbel_noise():
    """Without root noise the search is the same whatever the seed; with it (self-play)
    the moves considered depend on the seed's Gumbel draws."""
    chosen = set()
    for seed in range(6):
        mcts, state, _ = misled_search(seed=seed, max_considered=4)
        chosen.add(tuple(mcts.search(state, search_games=8).stats.considered))
    assert len(chosen) == 1
    drawn = set()
    for seed in range(6):
        state = NIM.initial_state()
        mcts = MCTS(NIM, make_tree_policy("gumbel", max_considered=4), UniformEvaluator(NIM), seed=seed,
                    root_noise=True)
        drawn.add(tuple(mcts.search(state, search_games=8).stats.considered))
    assert len(drawn) > 1


def test_searches_in_lock_step_sharing_the_policy_keep_their_own_plans():
    """Self-play's games in lock-step share one tree policy: each root keeps its own plan
    and every search ends as it would alone."""
    policy = make_tree_policy("gumbel")
    states = [NIM.initial_state(), NIM.next_state(NIM.initial_state(), 2)]
    alone = []
    for state in states:
        mcts = MCTS(NIM, policy, UniformEvaluator(NIM), seed=3)
        root = mcts.search(state, search_games=24)
        alone.append((mcts.best_action(root), mcts.targets(root).tolist()))
    searches = [(MCTS(NIM, policy, UniformEvaluator(NIM), seed=3), state) for state in states]
    roots = search_together(searches, 24)
    together = [(mcts.best_action(root), mcts.targets(root).tolist()) for (mcts, _), root in zip(searches, roots)]
    assert together == alone
    assert all(isinstance(root.stats, RootPlan) for root in roots)


def test_a_proven_win_is_played_and_learnt_alone():
    game = mctsfw.make_game("connect4")
    state = game.initial_state()
    for column in (0, 1, 0, 1, 0, 1):  # player 1 has three in column 0: 0 wins at once
        state = game.next_state(state, column)
    mcts = MCTS(game, make_tree_policy("gumbel"), UniformEvaluator(game), seed=0)
    root = mcts.search(state, search_games=16)
    assert mcts.best_action(root) == 0 and root.result == 1.0
    assert mcts.visit_distribution(root)[0] == 1.0


def test_a_time_limit_alone_plans_a_halving_and_goes_on_with_the_last_two():
    game = mctsfw.make_game("hex", size=5)
    mcts = MCTS(game, make_tree_policy("gumbel", max_considered=8), UniformEvaluator(game), seed=0)
    root = mcts.search(game.initial_state(), time_limit=0.3)
    plan = root.stats
    assert mcts.last_search_games > 0 and len(plan.considered) == 8
    searched = sorted((plan.searched(root.child(a), a) for a in plan.considered), reverse=True)
    if mcts.last_search_games > len(plan.sequence):  # past the plan: the last two share the rest
        assert searched[0] - searched[1] <= 1 and searched[1] > searched[2]
    assert mcts.best_action(root) in plan.considered


def test_gumbel_is_a_tree_policy_of_every_searching_player():
    game = mctsfw.make_game("connect4")
    actor = mctsfw.make_actor("mcts", game, search_games=16, tree_policy="gumbel", seed=1)
    state = game.initial_state()
    for _ in range(4):
        action = actor.select_action(state)
        assert action in game.legal_actions(state)
        state = game.next_state(state, action)


def test_play_and_gtp_search_a_saved_model_with_gumbel():
    """play.model_tree_policy = "gumbel": the shipped Connect Four network with 16 search
    games beats random in play, and the 7x7 Hex network answers genmove over GTP."""
    cli = [sys.executable, str(ROOT / "cli.py")]
    played = subprocess.run(cli + ["play", "--game", "connect4", "--p1", str(shipped_model("connect4")),
                                   "--p2", "random", "--model-search-games", "16", "--set", "play.model_tree_policy=gumbel",
                                   "--games", "2", "--no-display", "--seed", "1"], capture_output=True, text=True, timeout=300)
    assert played.returncode == 0, played.stderr
    assert "score: player 1 2, player 2 0" in played.stdout and "+gumbel(16)" in played.stdout
    gtp = subprocess.run(cli + ["gtp", "--game", "hex", "--size", "7", "--p", str(shipped_model("hex7")),
                                "--model-search-games", "16", "--set", "play.model_tree_policy=gumbel"],
                         input="genmove b\ngenmove w\nquit\n", capture_output=True, text=True, timeout=300)
    answers = [line for line in gtp.stdout.splitlines() if line.startswith("=")]
    assert gtp.returncode == 0 and len(answers) == 3, gtp.stderr
    assert all(len(a.split()) == 2 for a in answers[:2]) and answers[0] != answers[1]


def test_a_model_player_refuses_a_tree_policy_without_priors():
    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "play", "--set", "play.model_tree_policy=uct",
                             "--no-display"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "play.model_tree_policy = 'uct'" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


class RandomNetwork(UniformEvaluator):
    """Random priors and values (seeded): nodes of every shape."""

    def __init__(self, game, seed):
        super().__init__(game)
        self.rng = np.random.default_rng(seed)

    def evaluate(self, states, with_priors=True):
        masks = np.stack([self.game.legal_mask(s) for s in states])
        priors = self.rng.random(masks.shape) ** 3 * masks
        return self.rng.random(len(states)), priors / priors.sum(axis=1, keepdims=True)


def reference_choice(policy, node):
    """The move pi' - N / (1 + sum N) picks at ``node``, from the paper's definitions with
    numpy over every move: (its child, or None and the untried action)."""
    children, untried = node.children, node.untried
    priors = np.array([ch.prior for ch in children] + [node.untried_prior(i) for i in range(len(untried))])
    visits = np.array([ch.visits for ch in children] + [0] * len(untried), dtype=float)
    known = np.array([ch.visits > 0 or ch.proven is not None for ch in children] + [False] * len(untried))
    q = np.array([(ch.proven if ch.proven is not None else ch.value / ch.visits) if k else 0.0
                  for ch, k in zip(children, known)] + [0.0] * len(untried))
    p = priors / priors.sum()
    mixed = ((node.stats + visits.sum() * (p[known] * q[known]).sum() / p[known].sum()) / (1 + visits.sum())
             if known.any() else node.stats)
    completed = np.where(known, q, mixed)
    completed = (completed - completed.min()) / max(np.ptp(completed), 1e-8)
    logits = np.log(np.maximum(priors, 1e-12)) + (policy.c_visit + visits.max()) * policy.c_scale * completed
    pi = np.exp(logits - logits.max())
    scores = pi / pi.sum() - visits / (1 + visits.sum())
    scores[[i for i, ch in enumerate(children) if ch.proven == 0.0]] = -np.inf
    i = int(np.argmax(scores))
    return (children[i], None) if i < len(children) else (None, untried[i - len(children)])


def test_the_selection_below_the_root_follows_the_improved_policy():
    """The plain-Python selection below the root picks what the paper's pi' - N / (1 + sum N)
    over every move picks, at every node of real trees; the root's target is pi' there."""
    game = mctsfw.make_game("connect4")
    compared = 0
    for seed in range(3):
        policy = make_tree_policy("gumbel")
        mcts = MCTS(game, policy, RandomNetwork(game, seed), seed=seed, batch_size=4)
        root = mcts.search(game.initial_state(), search_games=300)
        stack = list(root.children)
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if node.final or node.untried is None:
                continue
            if not (node.children or node.untried):
                continue
            if node.stats is None:
                node.stats = policy.own_value(node)
            child, action = reference_choice(policy, node)
            chosen = policy.select_child(node, mcts.rng)
            if child is None:  # an untried move: the one of highest prior
                assert chosen == NEW and action == node.untried[-1]
            else:
                assert chosen is child
            compared += 1
    assert compared > 100
    actions, _, pi = policy.improved(root)
    assert sum(pi) == pytest.approx(1.0) and len(actions) == 7
