"""Self-play games in lock-step: several searches, one network call per round.

A group of games (``selfplay.lockstep``) is played together: every game keeps its own
search and random numbers, and the leaves of all of them are judged in one call. The
tests check what a user would: the games are legal, complete and reproducible, a group
of one is the game played alone by the ordinary search, and a group makes far fewer
network calls than its games alone.
"""

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw import MCTS, make_tree_policy
from hexzero.mctsfw import selfplay
from hexzero.mctsfw.config import load_config, plugin_params
from hexzero.mctsfw.evaluators import NetValue, RandomRollouts, evaluate_together
from hexzero.mctsfw.search import search_together
from hexzero.mctsfw.runs import RunDir
from hexzero.mctsfw.sampling import sample_action
from hexzero.mctsfw.selfplay import SelfPlayTrainer, searcher, self_play_game, self_play_games, self_play_pieces
from tests.conftest import random_states
from tests.test_training import DEFAULTS

SMALL = ["games.hex.size=4", "selfplay.search_games=16", "selfplay.batch_size=4", "nets.pv_mlp.hidden_layers=[16]",
         "selfplay.games_per_generation=8"]


def pieces(*extra):
    config = load_config(DEFAULTS, None, SMALL + list(extra))
    s, game, net_class, policy = self_play_pieces(config, mctsfw.default_registries())
    net = net_class(game, **plugin_params(config, "nets", s.net), seed=3)
    return s, game, net, policy


def without_seconds(results):
    return [({k: v for k, v in record.items() if k != "seconds"}, recorded) for record, recorded in results]


@pytest.mark.parametrize("extra", [[], ["tree_policies.puct.value_weight=0.5"],
                                   ["selfplay.resign_threshold=0.45", "selfplay.no_resign_share=0.5"]],
                         ids=["value-head", "half-rollouts", "resignation"])
def test_lockstep_games_are_legal_complete_and_the_same_for_the_same_seed(extra):
    s, game, net, policy = pieces(*extra)
    numbers = [1, 2, 3, 4, 5, 6]
    first = without_seconds(self_play_games(game, net, policy, s, numbers, seed=7))
    again = without_seconds(self_play_games(game, net, policy, s, numbers, seed=7))
    assert [r["game"] for r, _ in first] == numbers
    for (record, recorded), (record2, recorded2) in zip(first, again):
        assert record == record2 and recorded == recorded2
        state = game.initial_state(record["starting_player"])
        for action in record["moves"]:  # every move legal (next_state refuses an illegal one)
            assert action in game.legal_actions(state)
            state = game.next_state(state, action)
        if record.get("resigned") is None:  # complete: played to the end, the winner the final position's
            assert game.is_final(state) and record["winner"] == game.winner(state)
        else:
            assert record["winner"] == 3 - record["resigned"]
        assert recorded.moves.tolist() == record["moves"] and len(recorded.values) == len(record["moves"])
        visits = np.diff(recorded.policy_offsets)
        assert len(visits) == len(record["moves"])
    other_seed = without_seconds(self_play_games(game, net, policy, s, numbers, seed=8))
    assert [r["moves"] for r, _ in other_seed] != [r["moves"] for r, _ in first]


def test_a_group_of_one_is_the_game_the_ordinary_search_plays():
    """The lock-step driver and ``MCTS.search`` run the same loop: a group of one game
    gives, move for move, what a search of its own gives (here replayed by hand)."""
    s, game, net, policy = pieces("selfplay.temperature_moves=3")
    for number in (1, 2):
        (record, recorded), = self_play_games(game, net, policy, s, [number], seed=11)
        rng = np.random.default_rng([11, number])
        starter = 1 if number % 2 else 2
        mcts = searcher(game, net, policy, int(rng.integers(2**31)), s.batch_size, root_noise=True)
        state, moves = game.initial_state(starter), []
        while not game.is_final(state):
            root = mcts.search(state, search_games=s.search_games)
            tau = s.temperature if len(moves) < s.temperature_moves else s.temperature_final
            action = sample_action(mcts.visit_distribution(root), tau, rng)
            moves.append(int(action))
            mcts.advance(action)
            state = game.next_state(state, action)
        assert record["moves"] == moves and record["starting_player"] == starter
        assert record == self_play_game(game, net, policy, s, number, seed=11)[0] | {"seconds": record["seconds"]}


def test_searches_in_lockstep_grow_the_trees_they_grow_alone(hex4):
    """With evaluators of their own (random rollouts), searches run together give exactly
    the trees they give alone: each keeps its own seed, batch and virtual loss."""
    states = [s for s in random_states(hex4, 12, seed=2) if not hex4.is_final(s)][:4]

    def searches():
        return [MCTS(hex4, make_tree_policy("uct"), seed=i, batch_size=1 + i % 3) for i in range(len(states))]

    alone = [mcts.search(state, search_games=60) for mcts, state in zip(searches(), states)]
    together_searches = searches()
    together = search_together(list(zip(together_searches, states)), 60)
    for mcts, a, b in zip(together_searches, alone, together):
        assert mcts.last_search_games == 60 and b.visits == a.visits == 60
        assert {ch.action: (ch.visits, ch.value) for ch in a.children} == \
               {ch.action: (ch.visits, ch.value) for ch in b.children}


def test_a_shared_network_judges_every_search_in_one_call(hex4):
    s, game, net, policy = pieces()
    states = [st for st in random_states(game, 20, seed=4) if not game.is_final(st)][:9]
    batches = [states[:2], states[2:7], states[7:]]
    shared = NetValue(game, net)
    answers = evaluate_together([shared] * 3, batches, True)
    assert shared.calls == 1 and shared.states_evaluated == len(states)
    for batch, (values, priors) in zip(batches, answers):
        alone_values, alone_priors = NetValue(game, net).evaluate(batch, True)
        assert np.allclose(values, alone_values, atol=1e-6) and np.allclose(priors, alone_priors, atol=1e-6)
    mixed = [RandomRollouts(game, seed=1), shared]  # evaluators of other kinds answer on their own
    rollouts, (values, _) = evaluate_together(mixed, [states[:3], states[3:5]], True)
    assert rollouts[1] is None and len(rollouts[0]) == 3 and len(values) == 2 and shared.calls == 2


def test_a_group_makes_far_fewer_network_calls_than_its_games_alone(monkeypatch):
    made = []

    class CountingNetValue(NetValue):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(selfplay, "NetValue", CountingNetValue)
    s, game, net, policy = pieces()
    numbers = list(range(1, 9))
    alone = [self_play_games(game, net, policy, s, [n], seed=5)[0] for n in numbers]
    calls_alone = sum(v.calls for v in made)
    made.clear()
    together = self_play_games(game, net, policy, s, numbers, seed=5)
    (group,) = made
    longest = max(len(r["moves"]) for r, _ in together)
    # one call per round: the root's priors, then search_games / batch_size rounds per move
    assert group.calls <= longest * (1 + s.search_games // s.batch_size)
    assert group.calls * 4 < calls_alone, (group.calls, calls_alone)
    assert len(together) == len(alone) == 8


def test_the_run_depends_on_lockstep_not_on_the_workers(tmp_path):
    """Games are grouped by number: workers = 1 or 2 give the same run with lockstep = 3."""
    runs = {}
    for workers in (1, 2):
        run_dir = tmp_path / f"w{workers}"
        config = load_config(DEFAULTS, None, [
            "games.hex.size=3", "selfplay.games_per_generation=5", "selfplay.search_games=12", "selfplay.batch_size=4",
            "nets.pv_mlp.hidden_layers=[16]", "selfplay.seed=1", "selfplay.epochs=1", "selfplay.generations=1",
            "selfplay.lockstep=3", f"selfplay.workers={workers}", f'selfplay.run_dir="{run_dir}"'])
        SelfPlayTrainer(config, run_dir, progress=False).train()
        runs[workers] = [{k: v for k, v in r.items() if k != "seconds"} for r in RunDir(run_dir).read_metrics()
                         if r["kind"] == "game"]
    assert runs[1] == runs[2] and [r["game"] for r in runs[1]] == [1, 2, 3, 4, 5]


def test_searches_in_lock_step_prove_what_they_prove_alone():
    """Wins in three moves of Connect Four (generated by play, classified by brute force),
    searched three at a time in lock-step: each root is proven as its search alone proves
    it, and plays a solving move."""
    from hexzero.mctsfw.tactics import collect, play_positions, random_players
    from tests.test_puct import UniformEvaluator

    game = mctsfw.make_game("connect4")
    tactics = collect(game, play_positions(game, random_players(game), 200, seed=3), 3, kinds=("win in 3",))["win in 3"]
    assert len(tactics) == 3

    def search(seed):
        return MCTS(game, make_tree_policy("puct"), UniformEvaluator(game), seed=seed, batch_size=4)

    together = [search(i) for i in range(3)]
    roots = search_together([(mcts, t.state) for mcts, t in zip(together, tactics)], 200)
    for i, (mcts, root, tactic) in enumerate(zip(together, roots, tactics)):
        alone = search(i)
        alone_root = alone.search(tactic.state, search_games=200)
        assert root.result == alone_root.result == 1.0 and root.depth == alone_root.depth == 3
        assert mcts.best_action(root) in tactic.solutions
