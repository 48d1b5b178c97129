"""Two-headed nets (pv_mlp, pv_resnet): numpy passes equal to Keras, value scale, training, files, errors."""

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw import ModelFileError
from hexzero.mctsfw.game import Game
from hexzero.nets.anet import ANET
from hexzero.mctsfw.config import ConfigError
from hexzero.nets.twohead import (
    PolicyValueMLP, PolicyValueResNet, batch_precision, cpu_multiplies_bfloat16, value_targets, win_probability,
)
from tests.conftest import random_states


class Board6x7(Game):
    """A stand-in for a Connect-Four-shaped game: planes (6, 7, 3), 7 actions, 4 stones a game."""

    name = "board6x7"

    def __init__(self, num_actions=7):
        self.num_actions = num_actions

    def initial_state(self, starting_player=1):
        return (starting_player, ())

    def current_player(self, state):
        return state[0]

    def legal_actions(self, state):
        return [a for a in range(self.num_actions) if a not in state[1]]

    def next_state(self, state, action):
        return (3 - state[0], state[1] + (action,))

    def is_final(self, state):
        return len(state[1]) >= 4

    def winner(self, state):
        return None

    def encode(self, state):
        return self.encode_planes(state).ravel()

    def encode_planes(self, state):
        planes = np.zeros((6, 7, 3), dtype=np.float32)
        for i, action in enumerate(state[1]):
            planes[5 - i // 7, action % 7, i % 2] = 1.0
        planes[:, :, 2] = state[0] == 1
        return planes


@pytest.fixture(scope="module")
def nim():
    return mctsfw.make_game("nim", piles=[3, 4, 5], max_take=3)


def scramble(net, seed=0, scale=1.0):
    """Random weights (batch norm statistics too), so that no layer is an identity."""
    rng = np.random.default_rng(seed)
    weights = []
    for variable in net.model.weights:
        shape, path = tuple(variable.shape), variable.path
        if path.endswith("moving_variance"):
            weights.append(rng.uniform(0.5, 2.0, shape))
        elif path.endswith("gamma"):
            weights.append(rng.uniform(0.5, 1.5, shape))
        else:
            weights.append(rng.normal(0, scale, shape))
    net.model.set_weights([w.astype(np.float32) for w in weights])
    net.refresh()


def softmax(logits):
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def keras_outputs(net, x):
    probs, v = net.model(x, training=False)
    return np.asarray(probs), win_probability(np.asarray(v)[:, 0], net.value_head)


@pytest.fixture(scope="module")
def small_resnet(hex3):
    return PolicyValueResNet(hex3, blocks=1, filters=4, value_hidden=5, seed=3)


# ---- evaluation equals Keras ----------------------------------------------------------------------
@pytest.mark.parametrize("value_head", ["sigmoid", "tanh"])
@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_mlp_numpy_pass_equals_keras(hex3, value_head, activation):
    net = PolicyValueMLP(hex3, hidden_layers=[12, 7], activation=activation, value_head=value_head, seed=1)
    scramble(net, seed=2, scale=1.5)  # saturating activations, a peaked softmax, values near 0 and 1
    x = net.encode_batch(random_states(hex3, 20))
    x[-3:] = np.random.default_rng(3).normal(0, 3, x[-3:].shape)
    expected_p, expected_v = keras_outputs(net, x)
    probs, values = net.evaluate(x)
    assert probs.shape == (20, 9) and values.shape == (20,) and probs.dtype == values.dtype == np.float32
    np.testing.assert_allclose(probs, expected_p, atol=1e-5, rtol=0)
    np.testing.assert_allclose(values, expected_v, atol=1e-5, rtol=0)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert ((values >= 0) & (values <= 1)).all() and values.min() < 0.2 and values.max() > 0.8
    np.testing.assert_allclose(net.forward(x), expected_p, atol=1e-5, rtol=0)
    one_p, one_v = net.evaluate(x[0])
    assert one_p.shape == (1, 9) and one_v.shape == (1,)
    np.testing.assert_allclose(one_v, expected_v[:1], atol=1e-5)
    assert (net.scores(x).argmax(axis=1) == probs.argmax(axis=1)).all()


def test_mlp_without_hidden_layers_leaves_its_input_alone(hex3):
    net = PolicyValueMLP(hex3, hidden_layers=[], seed=0)
    x = net.encode(hex3.initial_state())
    before = x.copy()
    probs, values = net.evaluate(x)
    assert (x == before).all()
    np.testing.assert_allclose(probs, keras_outputs(net, x[None])[0], atol=1e-5)


@pytest.mark.parametrize("size", [3, 4, 5])
def test_resnet_evaluate_equals_keras_on_hex(size):
    game = mctsfw.make_game("hex", size=size)
    net = PolicyValueResNet(game, blocks=2, filters=6, policy_filters=2, value_filters=2, value_hidden=8, seed=size)
    scramble(net, seed=size, scale=0.5)
    x = net.encode_batch(random_states(game, 6, seed=size))
    assert x.shape == (6, size, size, 6)
    expected_p, expected_v = keras_outputs(net, x)
    logits, v = net.fast(x)  # the numpy pass on a whole batch
    np.testing.assert_allclose(softmax(logits), expected_p, atol=1e-5)
    np.testing.assert_allclose(v, np.asarray(net.model(x, training=False)[1])[:, 0], atol=1e-5)
    probs, values = net.evaluate(x)  # batched: the compiled Keras call
    np.testing.assert_allclose(probs, expected_p, atol=1e-5, rtol=0)
    np.testing.assert_allclose(values, expected_v, atol=1e-5, rtol=0)
    one_p, one_v = net.evaluate(x[2])  # one state: numpy
    np.testing.assert_allclose(one_p, expected_p[2:3], atol=1e-5, rtol=0)
    np.testing.assert_allclose(one_v, expected_v[2:3], atol=1e-5, rtol=0)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert ((values >= 0) & (values <= 1)).all() and probs.shape == (6, size * size)


def test_resnet_on_another_board_shape_with_a_tanh_head():
    game = Board6x7()
    net = PolicyValueResNet(game, blocks=1, filters=5, value_hidden=4, value_head="tanh", seed=0)
    scramble(net, seed=1)
    states = random_states(game, 5)
    x = net.encode_batch(states)
    assert x.shape == (5, 6, 7, 3) and net.input_kind == "planes"
    expected_p, expected_v = keras_outputs(net, x)
    for batch in (x, x[:1]):
        probs, values = net.evaluate(batch)
        np.testing.assert_allclose(probs, expected_p[: len(batch)], atol=1e-5, rtol=0)
        np.testing.assert_allclose(values, expected_v[: len(batch)], atol=1e-5, rtol=0)
    assert ((values >= 0) & (values <= 1)).all()
    p = net.policy(game.next_state(game.initial_state(), 3))
    assert p[3] == 0 and p.sum() == pytest.approx(1.0, abs=1e-6)


def test_resnet_with_no_blocks(hex3):
    net = PolicyValueResNet(hex3, blocks=0, filters=3, value_hidden=2, seed=0)
    x = net.encode_batch(random_states(hex3, 3))
    np.testing.assert_allclose(net.evaluate(x[:1])[0], keras_outputs(net, x[:1])[0], atol=1e-5)


def test_the_resnet_needs_a_2d_encoding(nim, tmp_path):
    with pytest.raises(ValueError, match=r"pv_resnet net needs a 2D encoding \(encode_planes\), which nim\(.*\) does not offer"):
        PolicyValueResNet(nim)


def test_inputs_of_the_wrong_shape(hex3, small_resnet):
    with pytest.raises(ValueError, match=r"shape \(B, 3, 3, 6\)"):
        small_resnet.evaluate(np.zeros((2, 20), dtype=np.float32))
    with pytest.raises(ValueError, match=r"shape \(B, 20\)"):
        PolicyValueMLP(hex3, hidden_layers=[], seed=0).evaluate(np.zeros((2, 3, 3, 4)))


# ---- the value scale ------------------------------------------------------------------------------
def test_value_scale_conversions():
    z = np.array([1.0, 0.5, 0.0], dtype=np.float32)
    assert value_targets(z, "tanh").tolist() == [1.0, 0.0, -1.0]
    assert value_targets(z, "sigmoid").tolist() == [1.0, 0.5, 0.0]
    assert win_probability(np.array([1.0, 0.0, -1.0]), "tanh").tolist() == [1.0, 0.5, 0.0]
    assert win_probability(np.array([0.25]), "sigmoid").tolist() == [0.25]


# ---- training -------------------------------------------------------------------------------------
def dataset(game, net, count=32, seed=3):
    """A fixed task: play the first legal action; the value is 1 when player 1 is to move."""
    states = [s for s in random_states(game, count, seed=seed) if not game.is_final(s)]
    x = net.encode_batch(states)
    pi = np.zeros((len(states), game.num_actions), dtype=np.float32)
    for i, s in enumerate(states):
        pi[i, game.legal_actions(s)[0]] = 1.0
    z = np.array([1.0 if game.current_player(s) == 1 else 0.0 for s in states], dtype=np.float32)
    return x, pi, z


@pytest.mark.parametrize(
    "make",
    [
        lambda game: PolicyValueMLP(game, hidden_layers=[32], learning_rate=0.01, value_head="sigmoid", seed=5),
        lambda game: PolicyValueMLP(game, hidden_layers=[32], learning_rate=0.01, value_head="tanh", l2=0, seed=5),
        lambda game: PolicyValueResNet(game, blocks=1, filters=8, value_hidden=8, learning_rate=0.01, value_head="tanh", seed=5),
        # AlphaGo Zero's loss and optimizer: MSE value + policy cross-entropy + L2, SGD with momentum
        lambda game: PolicyValueResNet(game, blocks=1, filters=8, value_hidden=8, optimizer="sgd", momentum=0.9,
                                       learning_rate=0.01, value_head="tanh", l2=1e-4, seed=5),
        lambda game: PolicyValueMLP(game, hidden_layers=[32], optimizer="sgd", momentum=0.9, learning_rate=0.01,
                                    value_head="tanh", seed=5),
    ],
    ids=["mlp-sigmoid", "mlp-tanh", "resnet-tanh", "resnet-sgd-momentum", "mlp-sgd-momentum"],
)
def test_fit_lowers_both_losses(hex3, make):
    net = make(hex3)
    x, pi, z = dataset(hex3, net)
    first = net.fit(x, pi, z, batch_size=8, epochs=1)
    assert set(first) >= {"loss", "policy_loss", "value_loss"}
    last = net.fit(x, pi, z, batch_size=8, epochs=12)
    assert last["policy_loss"] < 0.7 * first["policy_loss"]
    assert last["value_loss"] < 0.7 * first["value_loss"]
    assert last["loss"] < first["loss"]
    probs, values = net.evaluate(x)
    expected_p, expected_v = keras_outputs(net, x)  # the numpy pass follows the new weights
    np.testing.assert_allclose(probs, expected_p, atol=1e-5)
    np.testing.assert_allclose(values, expected_v, atol=1e-5)
    # the values learned are win probabilities, whatever the head
    assert values[z == 1].mean() > 0.6 and values[z == 0].mean() < 0.4


def test_fit_checks_its_arguments(hex3):
    net = PolicyValueMLP(hex3, hidden_layers=[4], seed=0)
    x, pi, z = dataset(hex3, net, count=8)
    with pytest.raises(ValueError, match="pi must have shape"):
        net.fit(x, pi[:, :4], z)
    with pytest.raises(ValueError, match="z must have shape"):
        net.fit(x, pi, z[:3])
    with pytest.raises(ValueError, match=r"z must hold win probabilities in \[0, 1\]"):
        net.fit(x, pi, 2 * z - 1)
    with pytest.raises(ValueError, match="x must have shape"):
        net.fit(x[:, :5], pi, z)
    with pytest.raises(ValueError, match="the pv_mlp net trains a value head: fit needs value targets z"):
        net.fit(x, pi)  # fit has one signature for every net; a policy-and-value net needs z


def test_seeded_nets_train_alike(hex3):
    def trained():
        net = PolicyValueMLP(hex3, hidden_layers=[8], seed=9)
        x, pi, z = dataset(hex3, net, count=16)
        net.fit(x, pi, z, batch_size=4, epochs=2)
        return net.evaluate(x)

    (pa, va), (pb, vb) = trained(), trained()
    assert (pa == pb).all() and (va == vb).all()


# ---- files --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def saved(hex3, small_resnet, tmp_path_factory):
    """An ANET, a pv_mlp and a pv_resnet for 3x3 Hex saved to files: {name: (net, path)}."""
    folder = tmp_path_factory.mktemp("models")
    mlp = PolicyValueMLP(
        hex3, hidden_layers=[6, 5], activation="tanh", optimizer="rmsprop", learning_rate=0.01, value_head="tanh", l2=0.001, seed=2
    )
    scramble(mlp, seed=4)
    scramble(small_resnet, seed=5, scale=0.5)
    nets = {"anet": ANET(hex3, hidden_layers=[4], seed=0), "pv_mlp": mlp, "pv_resnet": small_resnet}
    return {name: (net, net.save(folder / f"{name}.keras")) for name, net in nets.items()}


def test_save_and_load_give_the_same_net(hex3, saved):
    x_planes = saved["pv_resnet"][0].encode_batch(random_states(hex3, 5, seed=7))
    for cls in (PolicyValueMLP, PolicyValueResNet):
        net, path = saved[cls.name]
        loaded = cls.load(path, hex3)
        assert type(loaded) is cls and loaded.params() == net.params()
        x = loaded.encode_batch(random_states(hex3, 5, seed=7))
        for batch in (x, x[:1]):
            got, want = loaded.evaluate(batch), net.evaluate(batch)
            assert (got[0] == want[0]).all() and (got[1] == want[1]).all()
    assert saved["pv_mlp"][0].params() == {
        "hidden_layers": [6, 5], "activation": "tanh", "optimizer": "rmsprop", "learning_rate": 0.01,
        "value_head": "tanh", "l2": 0.001,
    }  # fmt: skip
    assert saved["pv_resnet"][0].params() == {
        "blocks": 1, "filters": 4, "policy_filters": 2, "value_filters": 1, "value_hidden": 5, "heads": "dense",
        "global_pooling": False, "ownership_weight": 0.0, "score_weight": 0.0,
        "optimizer": "adam", "learning_rate": 0.001, "value_head": "sigmoid", "l2": 0.0001,
    }  # fmt: skip
    assert x_planes.shape == (5, 3, 3, 6)


def test_load_net_picks_the_class_that_saved_the_file(hex3, saved):
    for name, (net, path) in saved.items():
        loaded = mctsfw.load_net(path, hex3)
        assert type(loaded) is type(net) and loaded.params() == net.params()
        assert [cls.can_load(path) for cls in (ANET, PolicyValueMLP, PolicyValueResNet)] == [
            cls.name == name for cls in (ANET, PolicyValueMLP, PolicyValueResNet)
        ]


def test_a_loaded_net_trains_on(hex3, saved, tmp_path):
    net = PolicyValueResNet.load(saved["pv_resnet"][1], hex3)
    x, pi, z = dataset(hex3, net, count=8)
    before = net.evaluate(x)[1]
    stats = net.fit(x, pi, z, epochs=2)
    assert np.isfinite(stats["loss"]) and not (net.evaluate(x)[1] == before).all()
    net.save(tmp_path / "again.keras")
    assert (PolicyValueResNet.load(tmp_path / "again.keras", hex3).evaluate(x)[0] == net.evaluate(x)[0]).all()


def test_save_wants_a_keras_name(hex3, tmp_path):
    with pytest.raises(ValueError, match=r"\.keras"):
        PolicyValueMLP(hex3, hidden_layers=[], seed=0).save(tmp_path / "net.h5")


def test_missing_and_foreign_files(hex3, saved, tmp_path):
    gone = tmp_path / "gone.keras"
    text = tmp_path / "text.keras"
    text.write_text("not a model")
    junk = tmp_path / "junk.keras"
    with zipfile.ZipFile(junk, "w") as archive:
        archive.writestr("config.json", "{not json")
    for cls in (PolicyValueMLP, PolicyValueResNet):
        assert not cls.can_load(gone) and not cls.can_load(text) and not cls.can_load(junk)
        with pytest.raises(ModelFileError, match=r"gone\.keras: no such model file"):
            cls.load(gone, hex3)
        with pytest.raises(ModelFileError, match=r"text\.keras: not a Keras model file \(not a zip archive\)"):
            cls.load(text, hex3)
        with pytest.raises(ModelFileError, match=r"junk\.keras: not a Keras model file \(no readable config.json"):
            cls.load(junk, hex3)
    with pytest.raises(ModelFileError, match=r"anet\.keras: the model 'anet' was not made by the pv_mlp net"):
        PolicyValueMLP.load(saved["anet"][1], hex3)
    with pytest.raises(ModelFileError, match=r"pv_mlp\.keras: the model 'pv_mlp' was not made by the pv_resnet net"):
        PolicyValueResNet.load(saved["pv_mlp"][1], hex3)


def test_a_file_with_a_config_but_no_weights(hex3, saved, tmp_path):
    _, good = saved["pv_resnet"]
    hollow = tmp_path / "hollow.keras"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(hollow, "w") as dst:
        for name in ("config.json", "metadata.json"):
            dst.writestr(name, src.read(name))
    assert PolicyValueResNet.can_load(hollow)
    with pytest.raises(ModelFileError, match=r"hollow\.keras: cannot be read as a Keras model"):
        PolicyValueResNet.load(hollow, hex3)


def test_a_pv_model_that_is_not_the_expected_network(hex3, saved, tmp_path):
    """A file named pv_mlp whose model is the ANET's (one head): refused, not run."""
    _, anet_file = saved["anet"]
    renamed = tmp_path / "renamed.keras"
    with zipfile.ZipFile(anet_file) as src, zipfile.ZipFile(renamed, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                config["config"]["name"] = "pv_mlp"
                data = json.dumps(config)
            dst.writestr(item, data)
    assert PolicyValueMLP.can_load(renamed)
    with pytest.raises(ModelFileError, match=r"renamed\.keras: (not a two-headed model|cannot be read)"):
        PolicyValueMLP.load(renamed, hex3)


def test_a_model_for_another_game(hex3, hex4, nim, saved, tmp_path):
    _, mlp_file = saved["pv_mlp"]
    _, resnet_file = saved["pv_resnet"]
    with pytest.raises(ModelFileError, match=r"pv_mlp\.keras: expects 20 inputs but hex\(size=4\) encodes 34"):
        PolicyValueMLP.load(mlp_file, hex4)
    shapes = r"expects planes of shape \(3, 3, 6\) but hex\(size=4\) encodes planes of shape \(4, 4, 6\)"
    with pytest.raises(ModelFileError, match=r"pv_resnet\.keras: " + shapes):
        PolicyValueResNet.load(resnet_file, hex4)
    # through load_net the file's own game is named beside the one asked for
    with pytest.raises(ModelFileError, match=r"pv_resnet\.keras: made for hex with size=3; cannot play size=4 \("
                                             + shapes + r"\)"):
        mctsfw.load_net(resnet_file, hex4)
    no_planes = r"the pv_resnet net needs a 2D encoding \(encode_planes\), which nim\(.*\) does not offer"
    with pytest.raises(ModelFileError, match=r"pv_resnet\.keras: " + no_planes):
        PolicyValueResNet.load(resnet_file, nim)
    with pytest.raises(ModelFileError, match=r"pv_resnet\.keras: a network for hex\(size=3\), not for nim$"):
        mctsfw.load_net(resnet_file, nim)
    # the same planes, another action space
    board_file = tmp_path / "board.keras"
    PolicyValueResNet(Board6x7(), blocks=0, filters=2, value_hidden=2, seed=0).save(board_file)
    with pytest.raises(ModelFileError, match=r"board\.keras: has 7 policy outputs but board6x7\(\) has 6 actions"):
        PolicyValueResNet.load(board_file, Board6x7(num_actions=6))


# ---- parameters ---------------------------------------------------------------------------------------
def test_param_problems():
    assert PolicyValueMLP.param_problems({}) == [] and PolicyValueResNet.param_problems({}) == []
    assert PolicyValueMLP.param_problems(
        {"hidden_layers": [], "activation": "TANH", "optimizer": "SGD", "learning_rate": 1, "value_head": "Tanh", "l2": 0,
         "seed": -1}  # fmt: skip
    ) == []
    problems = PolicyValueMLP.param_problems(
        {"hidden_layers": [0], "activation": "gelu", "optimizer": "lion", "learning_rate": 0, "value_head": "softmax", "l2": -1,
         "seed": 1.5, "blocks": 2}  # fmt: skip
    )
    assert [p.split(":")[0] for p in problems] == [
        "blocks", "hidden_layers", "activation", "optimizer", "learning_rate", "value_head", "l2", "seed",
    ]  # fmt: skip  (unknown names first, then the declared order)
    known = "hidden_layers, activation, optimizer, learning_rate, momentum, value_head, l2, seed"
    assert problems[0] == f"blocks: unknown parameter of pv_mlp (known: {known})"
    assert "value_head: must be one of sigmoid, tanh, not 'softmax'" in problems
    problems = PolicyValueResNet.param_problems(
        {"blocks": -1, "filters": 0, "policy_filters": 1.5, "value_filters": True, "value_hidden": "64", "l2": float("nan"),
         "hidden_layers": [8]}  # fmt: skip
    )
    assert [p.split(":")[0] for p in problems] == [
        "hidden_layers", "blocks", "filters", "policy_filters", "value_filters", "value_hidden", "l2",
    ]  # fmt: skip
    assert "blocks: must be a whole number >= 0 (residual blocks), not -1" in problems
    with pytest.raises(ValueError, match="pv_resnet: filters: must be a whole number >= 1"):
        PolicyValueResNet(mctsfw.make_game("hex", size=3), filters=0)


def test_sgd_momentum_is_used_saved_and_refused_when_bad(hex3, tmp_path):
    def trained(momentum):
        net = PolicyValueResNet(hex3, blocks=1, filters=4, value_hidden=4, optimizer="sgd", momentum=momentum,
                                learning_rate=0.01, value_head="tanh", seed=3)
        x, pi, z = dataset(hex3, net, count=16)
        net.fit(x, pi, z, batch_size=4, epochs=2)
        return net, x

    (still, x), (moving, _) = trained(0.0), trained(0.5)
    assert not np.allclose(still.evaluate(x)[0], moving.evaluate(x)[0])  # the momentum changes the steps
    assert moving.params()["optimizer"] == "sgd" and moving.params()["momentum"] == 0.5
    assert "momentum" not in PolicyValueResNet(hex3, blocks=0, filters=2, seed=1).params()  # adam has none
    loaded = PolicyValueResNet.load(moving.save(tmp_path / "sgd.keras"), hex3)
    assert loaded.params() == moving.params() and type(loaded.model.optimizer).__name__ == "SGD"
    assert (loaded.evaluate(x)[0] == moving.evaluate(x)[0]).all()
    x2, pi, z = dataset(hex3, loaded, count=16, seed=4)
    assert np.isfinite(loaded.fit(x2, pi, z, batch_size=4)["loss"])  # trains on with its own optimizer
    assert PolicyValueMLP.param_problems({"optimizer": "sgd", "momentum": 1.0}) == [
        "momentum: must be below 1 (1 never forgets a gradient), not 1.0"]
    assert PolicyValueMLP.param_problems({"momentum": -0.5}) == ["momentum: must be a number from 0 to 1, not -0.5"]
    with pytest.raises(ValueError, match="pv_resnet: momentum: must be below 1"):
        PolicyValueResNet(hex3, optimizer="sgd", momentum=1.0)


def test_the_nets_are_registered_and_the_config_checks_their_tables():
    from hexzero.mctsfw.config import ConfigError, load_config

    DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "hexzero.toml"

    registry = mctsfw.default_registries().nets
    assert registry.get("pv_mlp") is PolicyValueMLP and registry.get("pv_resnet") is PolicyValueResNet
    config = load_config(DEFAULT_CONFIG, overrides=["nets.pv_resnet.blocks=2", 'nets.pv_mlp.value_head="tanh"'])
    assert config["nets"]["pv_resnet"]["blocks"] == 2
    with pytest.raises(ConfigError) as error:
        load_config(DEFAULT_CONFIG, overrides=['nets.pv_mlp.value_head="relu"', "nets.pv_resnet.filters=0",
                                               'nets.pv_resnet.optimizer="sgd"', "nets.pv_resnet.momentum=1.5"])
    assert "nets.pv_resnet.momentum: must be a number from 0 to 1, not 1.5" in error.value.problems
    assert any(p.startswith("nets.pv_mlp.value_head: must be one of sigmoid, tanh") for p in error.value.problems)
    assert any(p.startswith("nets.pv_resnet.filters: must be a whole number >= 1") for p in error.value.problems)


def test_a_resnet_plays_raw_and_refuses_to_drive_rollouts(tmp_path):
    from hexzero import mctsfw
    from hexzero.mctsfw.evaluators import NetRolloutPolicy
    from hexzero.nets.twohead import PolicyValueResNet

    game = mctsfw.make_game("hex", size=3)
    path = tmp_path / "pv_resnet_gen0000.keras"
    PolicyValueResNet(game, blocks=1, filters=4, value_hidden=4, seed=0).save(path)
    raw = mctsfw.make_actor(str(path), game)
    assert raw.select_action(game.initial_state()) in range(9)
    with pytest.raises(ValueError, match="planes"):
        NetRolloutPolicy(game, raw.net)


# ---- KataGo's pieces: global pooling, the ownership and score heads ---------------------------------
def test_global_pooling_runs_alike_in_numpy_and_keras_and_the_aux_heads_survive_a_save(tmp_path):
    game = mctsfw.make_game("go", size=5)
    net = PolicyValueResNet(game, blocks=2, filters=6, value_hidden=8, global_pooling=True, ownership_weight=1.5,
                            score_weight=0.5, seed=2)
    assert net.aux_heads == ("ownership", "score")
    scramble(net, seed=2, scale=0.5)
    x = net.encode_batch(random_states(game, 6, seed=2))
    outputs = net.model(x, training=False)
    assert len(outputs) == 4 and np.asarray(outputs[2]).shape == (6, 25) and np.asarray(outputs[3]).shape == (6, 1)
    expected_p, expected_v = softmax(net.fast(x)[0]), net.fast(x)[1]
    np.testing.assert_allclose(np.asarray(outputs[0]), expected_p, atol=1e-5)
    np.testing.assert_allclose(np.asarray(outputs[1])[:, 0], expected_v, atol=1e-5)
    np.testing.assert_allclose(net.evaluate(x[0])[0], net.evaluate(x)[0][:1], atol=1e-5)  # one state: numpy; a batch: Keras
    net.save(tmp_path / "katago.keras")
    back = mctsfw.load_net(tmp_path / "katago.keras", game)
    assert back.params() == net.params() and back.aux_heads == ("ownership", "score")
    np.testing.assert_allclose(back.evaluate(x)[0], net.evaluate(x)[0], atol=1e-6)


# ---- HEXZERO_PRECISION: a batch's trunk in bfloat16 -----------------------------------------------
@pytest.mark.parametrize("heads, pooling", [("dense", False), ("convolutional", True)])
def test_a_batch_in_bfloat16_judges_as_float32_does_to_a_few_hundredths(monkeypatch, heads, pooling):
    game = mctsfw.make_game("go", size=5)
    net = PolicyValueResNet(game, blocks=2, filters=16, value_hidden=8, heads=heads, global_pooling=pooling, seed=4)
    x = net.encode_batch(random_states(game, 32, seed=4))
    exact_p, exact_v = net.evaluate(x)
    monkeypatch.setenv("HEXZERO_PRECISION", "bfloat16")
    net.refresh()  # (the precision is read when the numpy pass is made: after a load, a fit, a refresh)
    probs, values = net.evaluate(x)
    assert net._reduced_trunk() is not None  # the bfloat16 graph judged the batch, not the Keras model
    assert 0 < np.abs(values - exact_v).max() < 0.02 and np.abs(probs - exact_p).max() < 0.02
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(net.evaluate(x[3])[0], exact_p[3:4], atol=1e-5)  # one state: numpy, float32
    monkeypatch.setenv("HEXZERO_PRECISION", "float32")
    net.refresh()
    np.testing.assert_allclose(net.evaluate(x)[1], exact_v, atol=1e-5)


def test_the_precision_asked_for_is_checked_and_auto_follows_the_cpu(tmp_path, monkeypatch):
    assert batch_precision({}) == "float32" and batch_precision({"HEXZERO_PRECISION": "bfloat16"}) == "bfloat16"
    with pytest.raises(ConfigError, match="HEXZERO_PRECISION='half': one of float32, bfloat16, auto") as error:
        batch_precision({"HEXZERO_PRECISION": "half"})
    assert "\n" not in str(error.value)
    amx, old = tmp_path / "amx", tmp_path / "old"
    amx.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f amx_bf16 amx_tile\n")
    old.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2\n")
    assert cpu_multiplies_bfloat16(amx) and not cpu_multiplies_bfloat16(old)
    assert not cpu_multiplies_bfloat16(tmp_path / "missing")
    monkeypatch.setattr("hexzero.nets.twohead.cpu_multiplies_bfloat16", lambda: False)
    assert batch_precision({"HEXZERO_PRECISION": "auto"}) == "float32"
    monkeypatch.setattr("hexzero.nets.twohead.cpu_multiplies_bfloat16", lambda: True)
    assert batch_precision({"HEXZERO_PRECISION": "auto"}) == "bfloat16"


# ---- convolutional heads: one file, every board size -------------------------------------------------
def any_size_file(path, name, size, **params):
    """A small ResNet with convolutional heads made on one size of ``name``, trained a step
    (so batch norm's statistics are no identity), saved at ``path``."""
    game = mctsfw.make_game(name, size=size)
    net = PolicyValueResNet(game, blocks=2, filters=8, value_hidden=8, heads="convolutional", global_pooling=True,
                            seed=3, **params)
    states = random_states(game, 16, seed=3)
    pi = np.stack([game.legal_mask(state) / game.legal_mask(state).sum() for state in states])
    net.fit(net.encode_batch(states), pi, np.full(len(states), 0.5), batch_size=8)
    net.save(path)
    return path


@pytest.mark.parametrize("name, first, sizes", [("hex", 5, range(5, 14)), ("go", 9, range(9, 20, 2))])
def test_one_file_plays_every_board_size_with_legal_masked_policies(tmp_path, name, first, sizes):
    path = any_size_file(tmp_path / f"{name}.keras", name, first)
    for size in sizes:
        game = mctsfw.make_game(name, size=size)
        net = mctsfw.load_net(path, game)
        assert net.heads == "convolutional" and net.input_shape[:2] == (size, size)
        states = random_states(game, 5, seed=size)
        x = net.encode_batch(states)
        probs, values = net.evaluate(x)  # a batch: the Keras model
        assert probs.shape == (5, game.num_actions) and values.shape == (5,) and ((0 <= values) & (values <= 1)).all()
        one = np.concatenate([net.evaluate(x[i])[0] for i in range(5)])  # one state: the numpy pass
        np.testing.assert_allclose(one, probs, atol=1e-5)
        for state in states:
            policy = net.policy(state)
            assert abs(policy.sum() - 1) < 1e-5 and (policy[game.legal_mask(state) == 0] == 0).all()
    # a point's logit is its own: the policy is laid out as the actions are, row by row (and Go's pass last)
    game = mctsfw.make_game(name, size=first)
    net = mctsfw.load_net(path, game)
    empty = net.encode(game.initial_state())
    stone = net.encode(game.state_after([first + 1]))
    diff = np.abs(stone - empty)
    diff -= diff.min(axis=(0, 1))  # the planes of who moves change everywhere; the stone's only at its point
    assert list(np.flatnonzero(diff.sum(axis=2).ravel())) == [first + 1]


def test_what_the_any_size_heads_cannot_play_is_refused_with_the_reason(tmp_path):
    with pytest.raises(ValueError, match=r"heads = \"convolutional\" needs a game whose actions are its board's "
                                         r"points: connect4\(rows=6, columns=7\) has 7 actions on a 6x7 board"):
        PolicyValueResNet(mctsfw.make_game("connect4"), blocks=0, filters=2, heads="convolutional")
    path = any_size_file(tmp_path / "go.keras", "go", 9)
    with pytest.raises(ModelFileError, match=r"go\.keras: expects 3 planes a point \(any board size\) but "
                                             r"go\(size=13, .*history=4\) encodes 11"):
        PolicyValueResNet.load(path, mctsfw.make_game("go", size=13, history=4))
    with pytest.raises(ModelFileError, match=r"go\.keras: made for go with history=0, size=9; cannot play history=4, "
                                             r"size=13 \(expects 3 planes"):
        mctsfw.load_net(path, mctsfw.make_game("go", size=13, history=4))


def test_a_run_starts_from_a_network_of_another_size(tmp_path):
    from hexzero.mctsfw.selfplay import init_net_problem

    hex7 = mctsfw.make_game("hex", size=7)
    any_size = any_size_file(tmp_path / "any.keras", "hex", 5)
    assert init_net_problem(str(any_size), PolicyValueResNet, hex7) is None
    dense = tmp_path / "dense.keras"
    PolicyValueResNet(mctsfw.make_game("hex", size=5), blocks=0, filters=2, value_hidden=2, seed=0).save(dense)
    assert init_net_problem(str(dense), PolicyValueResNet, hex7).startswith("made for hex with size=5; cannot play "
                                                                            "size=7 (expects planes of shape (5, 5, 6)")


def test_the_aux_heads_train_on_their_targets_and_are_not_trained_without_them():
    game = mctsfw.make_game("go", size=5)
    net = PolicyValueResNet(game, blocks=1, filters=8, ownership_weight=1.0, score_weight=1.0, seed=4)
    states = random_states(game, 48, seed=4)
    x = net.encode_batch(states)
    pi = np.full((len(x), game.num_actions), 1 / game.num_actions, np.float32)
    z = np.full(len(x), 0.5, np.float32)
    # the owner of each point: its stone's colour, from the mover's view (a rule a convolution learns)
    owned = np.stack([game.ownership(s) * (1 if game.current_player(s) == 1 else -1) for s in states])
    score = owned.sum(axis=1)
    first = net.fit(x, pi, z, batch_size=16, aux={"ownership": owned, "score": score})
    for _ in range(30):
        last = net.fit(x, pi, z, batch_size=16, aux={"ownership": owned, "score": score})
    assert last["ownership_loss"] < 0.5 * first["ownership_loss"] and last["score_loss"] < first["score_loss"]
    with pytest.raises(ValueError, match="trains the ownership and score head"):
        net.fit(x, pi, z)


def test_self_play_teaches_the_ownership_of_the_final_board_in_every_symmetry(tmp_path):
    """The replay buffer's ownership targets: at a game's last position the stones stand as
    they will be counted, so every own stone of the input is owned (+1) and every opponent
    stone is the opponent's (-1), in each of the 8 symmetric copies; the score target is
    the final area score for the player to move."""
    from hexzero.mctsfw.config import load_config
    from hexzero.mctsfw.selfplay import SelfPlayTrainer
    from tests.test_training import DEFAULTS

    run_dir = tmp_path / "run"
    config = load_config(DEFAULTS, None, [
        'game="go"', "games.go.size=5", 'selfplay.net="pv_resnet"', "nets.pv_resnet.blocks=1",
        "nets.pv_resnet.filters=8", "nets.pv_resnet.ownership_weight=1.5", "nets.pv_resnet.score_weight=0.5",
        "nets.pv_resnet.global_pooling=true", "selfplay.generations=1", "selfplay.games_per_generation=2",
        "selfplay.search_games=16", "selfplay.average_positions=false", f'selfplay.run_dir="{run_dir}"'])
    trainer = SelfPlayTrainer(config, run_dir, progress=False)
    trainer.train()
    step = [r for r in trainer.run.read_metrics() if r["kind"] == "generation"][0]
    assert step["ownership_loss"] > 0 and step["score_loss"] > 0
    game = trainer.game
    x, _, _, owned, score = trainer.buffer.cases(aux=True)
    record = trainer.buffer.records[-1]
    final = game.state_after(record.moves.tolist(), record.starting_player)
    before_last = game.state_after(record.moves.tolist()[:-1], record.starting_player)  # the last position learnt
    sign = 1 if game.current_player(before_last) == 1 else -1
    last = np.flatnonzero(np.all(x.reshape(len(x), -1)[:, None] == np.stack(
        [c[0] for c in game.symmetries(game.encode_planes(before_last), np.zeros(game.num_actions))]).reshape(8, -1),
        axis=2).any(axis=1))
    assert len(last) >= 8
    for i in last:
        own_stones, their_stones = x[i, :, :, 0].reshape(-1), x[i, :, :, 1].reshape(-1)
        assert (owned[i, :25][own_stones == 1] == 1).all() and (owned[i, :25][their_stones == 1] == -1).all()
        assert score[i] == sign * game.score(final)
    assert game.is_final(final)


def test_the_aux_heads_need_a_game_with_territory(tmp_path):
    from tests.test_imitation import cli

    done = cli("selfplay", "--game", "hex", "--run-dir", tmp_path / "run", "--set", 'selfplay.net="pv_resnet"',
               "--set", "nets.pv_resnet.ownership_weight=1")
    assert done.returncode == 2 and "hex has no territory (Go has)" in done.stderr


def test_a_random_symmetry_at_inference_turns_the_priors_back():
    """With ``random_symmetry`` each judgement is the network's on one of the 8 turned
    boards, its priors turned back onto the position's own points; without it, the plain one."""
    from hexzero.mctsfw.evaluators import NetValue

    game = mctsfw.make_game("go", size=5)
    net = PolicyValueResNet(game, blocks=1, filters=6, value_hidden=8, seed=5)
    scramble(net, seed=5, scale=0.5)
    state = game.state_after([0, 7, 13])
    x = net.encode(state)
    index = np.arange(game.num_actions)
    mask = game.legal_mask(state)
    expected = []
    for turned, moved in game.symmetries(x, index):
        probs, value = net.evaluate(turned)
        back = np.empty(game.num_actions, dtype=np.float32)
        back[moved] = probs[0]
        expected.append((value[0], back * mask / (back * mask).sum()))
    plain = NetValue(game, net).evaluate([state])
    np.testing.assert_allclose(plain[1][0], expected[0][1], atol=1e-5)
    judge = NetValue(game, net, random_symmetry=True, seed=1)
    seen = set()
    for _ in range(40):
        values, priors = judge.evaluate([state, state])
        for v, p in zip(values, priors):
            k = [i for i, (ev, ep) in enumerate(expected) if abs(ev - v) < 1e-5 and np.allclose(ep, p, atol=1e-5)]
            assert k, "a judgement that is none of the 8 turned ones"
            seen.add(k[0])
    assert len(seen) >= 6


def test_the_mean_of_the_symmetries_at_inference_averages_the_turned_judgements():
    """With ``mean_symmetry`` each judgement is the mean of the network's on the 8 turned
    boards (the priors turned back first), in one network call for the whole batch; asked
    together with ``random_symmetry`` it is refused, in the evaluator and in the config."""
    from hexzero.mctsfw import make_tree_policy
    from hexzero.mctsfw.evaluators import NetValue

    game = mctsfw.make_game("go", size=5)
    net = PolicyValueResNet(game, blocks=1, filters=6, value_hidden=8, seed=5)
    scramble(net, seed=5, scale=0.5)
    states = [game.state_after([0, 7, 13]), game.state_after([12, 3])]
    index = np.arange(game.num_actions)
    judge = NetValue(game, net, mean_symmetry=True)
    values, priors = judge.evaluate(states)
    assert judge.calls == 1
    for state, value, prior in zip(states, values, priors):
        turned_values, turned_priors = [], []
        for turned, moved in game.symmetries(net.encode(state), index):
            probs, v = net.evaluate(turned)
            back = np.empty(game.num_actions, dtype=np.float32)
            back[moved] = probs[0]
            turned_values.append(v[0])
            turned_priors.append(back)
        mask = game.legal_mask(state)
        mean = np.mean(turned_priors, axis=0) * mask
        assert value == pytest.approx(np.mean(turned_values), abs=1e-5)
        np.testing.assert_allclose(prior, mean / mean.sum(), atol=1e-5)
        assert abs(np.mean(turned_values) - turned_values[0]) > 1e-4  # the mean is not the plain judgement
    with pytest.raises(ValueError, match="random_symmetry and mean_symmetry: choose one"):
        NetValue(game, net, random_symmetry=True, mean_symmetry=True)
    with pytest.raises(ValueError, match="choose one"):
        make_tree_policy("puct", random_symmetry=True, mean_symmetry=True)


JAX_CHECK = """
import numpy as np
import keras
from hexzero import mctsfw
from hexzero.nets.twohead import PolicyValueResNet
from tests.conftest import random_states

assert keras.backend.backend() == "jax"
game = mctsfw.make_game("hex", size=4)
net = PolicyValueResNet(game, blocks=1, filters=6, policy_filters=2, value_filters=2, value_hidden=8, seed=0)
x = net.encode_batch(random_states(game, 5, seed=0))
for _ in range(2):  # untrained, then after a training step: the compiled call reads the weights of the moment
    probs, values = net.evaluate(x)  # 5 states: jax.jit, padded to 8
    logits, v = net.fast(x)          # the numpy pass
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(probs, exp / exp.sum(axis=1, keepdims=True), atol=1e-5)
    np.testing.assert_allclose(values, v, atol=1e-5)
    assert probs.shape == (5, 16) and values.shape == (5,)
    net.fit(x, np.full((5, 16), 1 / 16, dtype=np.float32), np.ones(5, dtype=np.float32), epochs=3)
print("ok")
"""


def test_on_keras_jax_backend_the_resnets_batches_are_compiled_by_jax_and_equal_numpy():
    """KERAS_BACKEND=jax: the ResNet's batches go through ``jax.jit`` (padded to a power of
    two) and answer what the numpy pass answers, before and after training (skipped where
    JAX is not installed, as in CI)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("jax")
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "KERAS_BACKEND": "jax", "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
           "JAX_DEFAULT_MATMUL_PRECISION": "highest"}  # a GPU's TensorFloat-32 products differ from numpy's by 1e-3
    proc = subprocess.run([sys.executable, "-c", JAX_CHECK], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-2000:]
