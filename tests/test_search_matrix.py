"""Any tree policy with any leaf evaluator, refused pairs named when the search is built,
search budgets and actor parameters checked at construction."""

import math

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw import MCTS, make_tree_policy
from hexzero.mctsfw.evaluators import MixedEvaluator, NetRollouts, NetValue, RandomRollouts, value_evaluator
from hexzero.mctsfw.search import TreePolicy
from hexzero.mctsfw.roles import RoleError
from benchmarks.shipped import shipped_model
from tests.test_hex import place

WIN = 2 * 4 + 1  # player 1 has column 1 but for (2, 1)


@pytest.fixture(scope="module")
def game():
    return mctsfw.make_game("hex", size=4)


@pytest.fixture(scope="module")
def nets(game):
    """Tiny untrained nets: a policy net (ANET) and a policy-and-value net (pv_mlp)."""
    registry = mctsfw.default_registries().nets
    return registry.get("anet")(game, hidden_layers=(8,), seed=0), registry.get("pv_mlp")(game, hidden_layers=(8,), seed=0)


EVALUATORS = {
    "random rollouts": lambda game, anet, pv: RandomRollouts(game, seed=1),
    "net rollouts": lambda game, anet, pv: NetRollouts(game, anet, epsilon=0.1, seed=1),
    "value head": lambda game, anet, pv: NetValue(game, pv),
    "mix": lambda game, anet, pv: MixedEvaluator(NetValue(game, pv), RandomRollouts(game, seed=1), 0.5),
}


@pytest.mark.parametrize("evaluator", list(EVALUATORS))
@pytest.mark.parametrize("tree_policy", ["uct", "puct"])
def test_every_tree_policy_searches_with_every_evaluator(game, nets, tree_policy, evaluator):
    state = place(game, [(0, 1), (1, 1), (3, 1)], [(0, 0), (3, 3), (1, 3)], 1)
    mcts = MCTS(game, make_tree_policy(tree_policy), EVALUATORS[evaluator](game, *nets), seed=2)
    root = mcts.search(state, search_games=300)
    distribution = mcts.visit_distribution(root)
    assert root.visits == mcts.last_search_games <= 300 and distribution.sum() == pytest.approx(1.0)
    assert root.result == 1.0 and root.depth == 1  # the win is proven: the search stopped there
    legal = set(game.legal_actions(state))
    assert set(np.flatnonzero(distribution)) <= legal
    assert mcts.best_action(root) == WIN, (tree_policy, evaluator, distribution.reshape(4, 4))
    # a second search from the kept subtree goes on
    mcts.advance(WIN)
    assert mcts.root is not None and mcts.root.final


def test_uct_over_a_policy_and_value_network_plays():
    """It died with ZeroDivisionError: whole-leaf expansion left UCT children without visits."""
    game = mctsfw.make_game("hex", size=5)
    actor = mctsfw.make_actor(shipped_model("hex5-az"), game, search_games=50, tree_policy="uct", seed=0)
    state = game.initial_state()
    for _ in range(3):
        action = actor.select_action(state)
        assert action in game.legal_actions(state)
        assert actor.last_distribution.sum() == pytest.approx(1.0)
        state = game.next_state(state, action)


def test_model_actors_choose_the_evaluator_by_role(game, nets, tmp_path):
    anet, pv = nets
    anet_path, pv_path = tmp_path / "anet_ep0000.keras", tmp_path / "pv_mlp_gen0000.keras"
    anet.save(anet_path)
    pv.save(pv_path)
    rollouts = mctsfw.make_actor(str(anet_path), game, search_games=20)
    assert isinstance(rollouts.mcts.evaluator, NetRollouts) and rollouts.mcts.tree_policy.name == "uct"
    values = mctsfw.make_actor(str(pv_path), game, search_games=20)
    assert isinstance(values.mcts.evaluator, NetValue) and values.mcts.tree_policy.name == "puct"
    mixed = mctsfw.make_actor(str(pv_path), game, search_games=20, tree_policy="uct", value_weight=0.25)
    assert isinstance(mixed.mcts.evaluator, MixedEvaluator) and mixed.mcts.evaluator.weight == 0.25
    assert mixed.mcts.tree_policy.name == "uct"
    puct_rollouts = mctsfw.make_actor(str(anet_path), game, search_games=20, tree_policy="puct")
    assert puct_rollouts.select_action(game.initial_state()) in range(16)
    with pytest.raises(ValueError, match="value_weight"):
        mctsfw.make_actor(str(anet_path), game, search_games=20, value_weight=0.5)


class NeedsNetPriors(TreePolicy):
    name = "needs_net_priors"
    uses_priors = True
    needs_informed_priors = True


def test_pairs_that_cannot_work_are_refused_when_the_search_is_built(game, nets):
    anet, pv = nets
    with pytest.raises(ValueError, match="needs priors from a network; the random_rollouts evaluator gives uniform"):
        MCTS(game, NeedsNetPriors(), RandomRollouts(game))
    MCTS(game, NeedsNetPriors(), NetValue(game, pv))  # informed priors: fine
    with pytest.raises(ValueError, match="root noise perturbs priors, which the uct tree policy does not read"):
        MCTS(game, make_tree_policy("uct"), root_noise=True)
    with pytest.raises(ValueError, match="LeafEvaluator"):
        MCTS(game, make_tree_policy("uct"), lambda state: 0)  # an old-style default policy
    with pytest.raises(RoleError, match="value-head leaf evaluation needs a policy-and-value network"):
        NetValue(game, anet)
    with pytest.raises(RoleError):
        value_evaluator(game, anet, 0.5)
    with pytest.raises(ValueError, match="batch_size"):
        MCTS(game, make_tree_policy("uct"), batch_size=0)


def test_a_planes_net_is_refused_for_rollouts():
    from hexzero.nets.twohead import PolicyValueResNet

    game = mctsfw.make_game("hex", size=3)
    resnet = PolicyValueResNet(game, blocks=1, filters=4, value_hidden=4, seed=0)
    with pytest.raises(ValueError, match="planes"):
        NetRollouts(game, resnet)
    MCTS(game, make_tree_policy("uct"), NetValue(game, resnet)).search(game.initial_state(), search_games=10)


def test_puct_without_a_network_has_declared_uniform_priors(game):
    assert RandomRollouts.informed_priors is False
    mcts = MCTS(game, make_tree_policy("puct"), seed=0)
    root = mcts.search(game.initial_state(), search_games=50)
    assert root.priors is None and {child.prior for child in root.children} == {1 / 16}


@pytest.mark.parametrize("search_games, time_limit, problem", [
    (-5, None, "search_games must be a whole number >= 0, not -5"),
    (2.5, None, "search_games must be a whole number"),
    (None, math.nan, "time_limit must be a finite number of seconds > 0"),
    (None, math.inf, "time_limit must be a finite number"),
    (None, -1.0, "time_limit must be"),
    (0, None, "give search_games > 0 or a time_limit"),
    (None, None, "give search_games > 0 or a time_limit"),
])
def test_bad_budgets_are_refused(game, search_games, time_limit, problem):
    with pytest.raises(ValueError, match=problem):
        mctsfw.make_actor("mcts", game, search_games=search_games, time_limit=time_limit)
    mcts = MCTS(game, make_tree_policy("uct"), seed=0)
    with pytest.raises(ValueError, match=problem):
        mcts.search(game.initial_state(), search_games=search_games, time_limit=time_limit)  # nan hung here
    assert mcts.root is None  # refused before anything was built


def test_mcts_actor_parameters(game):
    puct_actor = mctsfw.make_actor("mcts", game, search_games=10, tree_policy="puct", c=2.5)
    assert puct_actor.mcts.tree_policy.c_puct == 2.5
    assert mctsfw.make_actor("mcts", game, search_games=10, c=0.7).mcts.tree_policy.c == 0.7
    for bad in (math.nan, -1, math.inf, "hot"):
        with pytest.raises(ValueError, match="temperature"):
            mctsfw.make_actor("mcts", game, search_games=10, temperature=bad)
    # a player never adds root noise, whatever the tree policy's noise parameters say
    noisy_params = mctsfw.make_actor("mcts", game, search_games=40, tree_policy="puct", seed=1,
                                     policy_params={"dirichlet_epsilon": 0.5, "dirichlet_alpha": 0.3})
    assert noisy_params.select_action(game.initial_state()) in range(16)
    search = noisy_params.mcts.search(game.initial_state(), search_games=40)  # (on the array tree)
    t, start = search.tree, search.tree.edge_first[0, 0]
    assert set(t.edge_prior[0, start:start + t.edge_count[0, 0]].tolist()) == {1 / 16}


def test_time_limited_search_stops(game):
    mcts = MCTS(game, make_tree_policy("puct"), seed=0)
    mcts.search(game.initial_state(), time_limit=0.05)
    assert mcts.last_search_games > 10


class CountingEvaluator(RandomRollouts):
    def __init__(self, game):
        super().__init__(game, seed=0)
        self.batches = []

    def evaluate(self, states, with_priors=False):
        self.batches.append(len(states))
        return super().evaluate(states, with_priors)


def test_batches_of_leaves_go_to_the_evaluator_in_one_call(game):
    evaluator = CountingEvaluator(game)
    mcts = MCTS(game, make_tree_policy("uct"), evaluator, seed=0, batch_size=8)
    root = mcts.search(game.initial_state(), search_games=100)
    assert root.visits == 100 and sum(ch.visits for ch in root.children) == 100
    assert max(evaluator.batches) > 1 and sum(evaluator.batches) <= 101  # the root's own + at most one per game


class GcWatcher(RandomRollouts):
    def __init__(self, game):
        super().__init__(game, seed=0)
        self.collecting = set()

    def evaluate(self, states, with_priors=False):
        import gc

        self.collecting.add(gc.isenabled())
        return super().evaluate(states, with_priors)


def test_garbage_collection_pauses_during_a_search_only(game):
    import gc

    watcher = GcWatcher(game)
    assert gc.isenabled()
    MCTS(game, make_tree_policy("uct"), watcher, seed=0).search(game.initial_state(), search_games=30)
    assert watcher.collecting == {False} and gc.isenabled()
