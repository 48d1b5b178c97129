"""The ANET plugin: numpy forward pass equal to Keras, policy masking, training, files, errors."""

import json
import pickle
import zipfile

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw import ModelFileError
from hexzero.mctsfw.checkpoints import atomic_path
from hexzero.nets.anet import ANET, NumpyMLP
from tests.conftest import random_states


@pytest.fixture(scope="module")
def saved(hex3, tmp_path_factory):
    """A small trained-looking ANET for 3x3 Hex saved to a file: (net, path)."""
    net = ANET(hex3, hidden_layers=[16, 8], activation="tanh", optimizer="rmsprop", learning_rate=0.01, seed=4)
    path = tmp_path_factory.mktemp("models") / "small.keras"
    net.save(path)
    return net, path


# ---- the numpy fast path ---------------------------------------------------------------------
@pytest.mark.parametrize("activation", ["linear", "sigmoid", "tanh", "relu"])
def test_numpy_forward_equals_keras_with_random_weights(hex3, activation):
    net = ANET(hex3, hidden_layers=[12, 7], activation=activation, seed=1)
    rng = np.random.default_rng(2)
    # larger weights than the initial ones: saturating activations and a peaked softmax
    net.model.set_weights([rng.normal(0, 1.5, w.shape).astype(np.float32) for w in net.model.get_weights()])
    net.refresh()
    x = np.stack([hex3.encode(s) for s in random_states(hex3, 20)])
    x[-3:] = rng.normal(0, 3, x[-3:].shape)  # arbitrary real inputs too
    expected = np.asarray(net.model(x))
    got = net.forward(x)
    assert got.shape == (20, hex3.num_actions) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)
    np.testing.assert_allclose(net.forward(x[0]), expected[:1], atol=1e-5, rtol=0)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("activation", ["linear", "sigmoid", "tanh", "relu"])
def test_logits_in_reused_buffers_equal_the_full_pass(hex3, activation):
    """``NumpyMLP.logits`` (greedy rollouts' path, buffers kept between calls) gives the
    old pass's pre-softmax values, whatever the batch sizes before it; softmax of them is Keras."""
    net = ANET(hex3, hidden_layers=[12, 7], activation=activation, seed=1)
    rng = np.random.default_rng(3)
    net.model.set_weights([rng.normal(0, 1.5, w.shape).astype(np.float32) for w in net.model.get_weights()])
    net.refresh()
    x = np.stack([hex3.encode(s) for s in random_states(hex3, 70, seed=4)])
    expected = np.asarray(net.model(x))
    for rows in (20, 5, 70, 1, 33):  # growing and shrinking batches reuse and regrow the buffers
        logits = net.scores(x[:rows])
        assert logits.shape == (rows, hex3.num_actions) and logits.dtype == np.float32
        np.testing.assert_allclose(logits, net.fast(x[:rows], final_activation=False), atol=1e-5, rtol=0)
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        np.testing.assert_allclose(shifted / shifted.sum(axis=1, keepdims=True), expected[:rows], atol=1e-5, rtol=0)
    np.testing.assert_allclose(net.fast.logits(x[0]), net.fast(x[:1], final_activation=False), atol=1e-5, rtol=0)
    before = x.copy()
    net.scores(x)
    assert (x == before).all()  # the input is never written
    copy = pickle.loads(pickle.dumps(net.fast))  # as sent to a worker: without the buffers
    assert copy._buffers == [] and copy._passes == {}
    np.testing.assert_allclose(copy.logits(x[:9]), net.fast(x[:9], final_activation=False), atol=1e-5, rtol=0)


@pytest.mark.parametrize("game_name, size, conv, hidden", [
    ("hex", 3, [6, 5], []),  # one action a cell: each cell's logit from a 1x1 convolution
    ("hex", 3, [4], [7]),  # the board's features flattened into hidden layers
    ("connect4", None, [5, 3], []),  # an action a column: a dense policy layer over the features
    ("hex", 9, [16, 16], []),  # the second convolution too big as a dense layer: run as one
    ("hex", 5, [16, 16, 16], []),  # Hex's default ANET: the second and third as the dense matrix's row bands
])
def test_convolutions_numpy_forward_equals_keras(game_name, size, conv, hidden):
    """conv_layers: the flat encoding laid out as the board's planes, 3x3 convolutions over
    the board, then the head; the numpy pass runs each convolution as the dense layer it
    equals on a small board (as a convolution on a bigger one) and answers as Keras does."""
    game = mctsfw.make_game(game_name, **({"size": size} if size else {}))
    net = ANET(game, conv_layers=conv, hidden_layers=hidden, activation="tanh", seed=2)
    rng = np.random.default_rng(3)
    for variable in net.model.trainable_weights:  # not the fixed planes layer
        variable.assign(rng.normal(0, 0.8, variable.shape).astype(np.float32))
    net.refresh()
    x = np.stack([game.encode(s) for s in random_states(game, 20)])
    expected = np.asarray(net.model(x))
    np.testing.assert_allclose(net.forward(x), expected, atol=1e-5, rtol=0)
    probs = np.exp(net.scores(x))
    np.testing.assert_allclose(probs / probs.sum(axis=1, keepdims=True), expected, atol=1e-5, rtol=0)
    assert [board for *_, board in net.fast.layers] == ([None] * len(net.fast.layers) if size != 9 else
                                                         [None, (9, 9), None])
    for rows in (20, 3, 1, 20):  # greedy rollouts' pass (buffers kept between calls) answers alike
        np.testing.assert_allclose(net.fast.logits(x[:rows]), net.fast(x[:rows], final_activation=False),
                                   atol=1e-5, rtol=0)
    banded = [type(W).__name__ == "RowBands" for W, *_ in net.fast.layers]
    assert banded == ([False] + [True] * (len(conv) - 1) + [False] * (len(net.fast.layers) - len(conv))
                      if size != 9 else [False] * len(net.fast.layers))  # (9x9: each a convolution)
    # the planes the convolutions read are the game's own planes of its flat encoding
    flat = np.stack([game.encode(s) for s in random_states(game, 5)])
    planes = game.planes_of_encoded(flat)
    assert (flat @ net.planes.reshape(len(flat[0]), -1) == planes.reshape(5, -1)).all()


def test_a_convolutional_net_trains_saves_and_loads(hex3, tmp_path):
    net = ANET(hex3, conv_layers=[4, 4], hidden_layers=[], seed=5)
    x = np.stack([hex3.encode(s) for s in random_states(hex3, 8, seed=8)])
    before = net.forward(x)
    net.fit(x, np.full((8, 9), 1 / 9, dtype=np.float32), epochs=2)
    assert not (net.forward(x) == before).all()
    path = net.save(tmp_path / "conv.keras")
    loaded = ANET.load(path, hex3)
    assert (loaded.forward(x) == net.forward(x)).all()
    assert loaded.params() == net.params() == {"conv_layers": [4, 4], "hidden_layers": [], "activation": "relu",
                                               "optimizer": "adam", "learning_rate": 0.001}
    with pytest.raises(ModelFileError, match=r"conv\.keras: expects 20 inputs but hex\(size=4\) encodes 34"):
        ANET.load(path, mctsfw.make_game("hex", size=4))


def test_convolutions_need_a_board():
    nim = mctsfw.make_game("nim", piles=[3, 4, 5])
    with pytest.raises(ValueError, match="anet: conv_layers needs the board's planes of the flat encoding; nim offers no planes"):
        ANET(nim, conv_layers=[8])


def test_no_hidden_layer_and_extreme_inputs(hex3):
    net = ANET(hex3, hidden_layers=[], seed=0)
    x = np.full((2, len(hex3.encode(hex3.initial_state()))), 1e4, dtype=np.float32)
    x[1] *= -1
    probs = net.forward(x)
    assert np.isfinite(probs).all()
    np.testing.assert_allclose(probs, np.asarray(net.model(x)), atol=1e-5)


def test_forward_leaves_its_input_alone(hex3):
    net = ANET(hex3, hidden_layers=[4], seed=0)
    x = hex3.encode(hex3.initial_state())
    before = x.copy()
    net.forward(x)
    assert (x == before).all()


def test_numpy_mlp_refuses_an_unknown_activation():
    with pytest.raises(ValueError, match="gelu"):
        NumpyMLP([(np.zeros((2, 2)), np.zeros(2), "gelu")])


def test_policy_zeroes_illegal_moves_and_sums_to_one(hex3):
    net = ANET(hex3, hidden_layers=[8], seed=3)
    for state in random_states(hex3, 10, seed=1):
        if hex3.is_final(state):
            continue
        p = net.policy(state)
        mask = hex3.legal_mask(state)
        assert p.shape == (9,)
        assert (p[mask == 0] == 0).all() and (p[mask == 1] > 0).all()
        assert p.sum() == pytest.approx(1.0, abs=1e-6)


# ---- training -----------------------------------------------------------------------------
def test_fit_lowers_the_loss_and_refreshes_the_numpy_path(hex3):
    net = ANET(hex3, hidden_layers=[32], learning_rate=0.01, seed=5)
    states = [s for s in random_states(hex3, 48, seed=3) if not hex3.is_final(s)]
    x = np.stack([hex3.encode(s) for s in states])
    # a fixed target: always the first legal cell
    targets = np.zeros((len(states), 9), dtype=np.float32)
    for i, s in enumerate(states):
        targets[i, hex3.legal_actions(s)[0]] = 1.0
    first = net.fit(x, targets, batch_size=16, epochs=1)
    assert set(first) >= {"loss", "accuracy"} and 0 <= first["accuracy"] <= 1
    last = net.fit(x, targets, batch_size=16, epochs=30)
    assert last["loss"] < 0.6 * first["loss"]
    assert last["accuracy"] > first["accuracy"]
    np.testing.assert_allclose(net.forward(x), np.asarray(net.model(x)), atol=1e-5)
    with pytest.raises(ValueError, match="targets"):
        net.fit(x, targets[:, :4])


@pytest.mark.parametrize("cases", [48, 40])  # 40: the last batch of each epoch a smaller one
def test_fit_trains_exactly_as_keras_fit_does(hex3, cases):
    """The compiled steps (TensorFlow) take the batches Keras's fit takes, in its order,
    and report its loss and accuracy: the same weights after, the same figures."""
    x = np.stack([hex3.encode(s) for s in random_states(hex3, cases, seed=4)])
    targets = np.random.default_rng(1).random((len(x), 9)).astype(np.float32)
    targets /= targets.sum(axis=1, keepdims=True)
    ours, keras_fit = (ANET(hex3, conv_layers=[4], hidden_layers=[16], seed=2) for _ in range(2))
    keras_fit._train_step = lambda: None  # Keras's own loop
    for _ in range(2):
        a, b = ours.fit(x, targets, batch_size=16, epochs=3), keras_fit.fit(x, targets, batch_size=16, epochs=3)
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-5) and a["accuracy"] == pytest.approx(b["accuracy"])
    for mine, theirs in zip(ours.model.get_weights(), keras_fit.model.get_weights()):
        np.testing.assert_allclose(mine, theirs, atol=1e-6)


def test_the_same_seed_builds_the_same_net(hex3):
    x = hex3.encode(hex3.initial_state())
    a, b = ANET(hex3, hidden_layers=[8], seed=9), ANET(hex3, hidden_layers=[8], seed=9)
    assert (a.forward(x) == b.forward(x)).all()
    assert not (a.forward(x) == ANET(hex3, hidden_layers=[8], seed=10).forward(x)).all()


# ---- files ------------------------------------------------------------------------------------
def test_save_and_load_give_the_same_net(hex3, saved):
    net, path = saved
    assert ANET.can_load(path) and [p.name for p in path.parent.iterdir()] == ["small.keras"]
    loaded = ANET.load(path, hex3)
    x = np.stack([hex3.encode(s) for s in random_states(hex3, 8, seed=7)])
    assert (loaded.forward(x) == net.forward(x)).all()
    assert loaded.params() == net.params() == {
        "conv_layers": [], "hidden_layers": [16, 8], "activation": "tanh", "optimizer": "rmsprop", "learning_rate": 0.01,
    }
    assert mctsfw.load_net(path, hex3).params() == net.params()  # through the registry


def test_a_loaded_net_trains_on(hex3, saved, tmp_path):
    _, path = saved
    net = ANET.load(path, hex3)
    x = np.stack([hex3.encode(s) for s in random_states(hex3, 8, seed=8)])
    before = net.forward(x)
    net.fit(x, np.full((8, 9), 1 / 9, dtype=np.float32), epochs=2)
    assert not (net.forward(x) == before).all()
    net.save(tmp_path / "again.keras")
    assert (ANET.load(tmp_path / "again.keras", hex3).forward(x) == net.forward(x)).all()


def test_save_wants_a_keras_name(hex3, tmp_path):
    with pytest.raises(ValueError, match=r"\.keras"):
        ANET(hex3, hidden_layers=[], seed=0).save(tmp_path / "net.h5")


def test_missing_file(hex3, tmp_path):
    path = tmp_path / "gone.keras"
    assert not ANET.can_load(path)
    with pytest.raises(ModelFileError, match=r"gone\.keras: no such model file"):
        ANET.load(path, hex3)
    with pytest.raises(ModelFileError, match=r"gone\.keras: no such model file"):
        mctsfw.make_actor(path, hex3)


def test_a_file_that_is_not_a_zip(hex3, tmp_path):
    path = tmp_path / "text.keras"
    path.write_text("not a model")
    assert not ANET.can_load(path)
    with pytest.raises(ModelFileError, match=r"text\.keras: not a Keras model file \(not a zip archive\)"):
        ANET.load(path, hex3)
    with pytest.raises(ModelFileError, match=r"text\.keras: not a model file that a registered net can load \(nets: .*anet"):
        mctsfw.make_actor(str(path), hex3)


def test_a_zip_with_bad_contents(hex3, saved, tmp_path):
    junk = tmp_path / "junk.keras"
    with zipfile.ZipFile(junk, "w") as archive:
        archive.writestr("config.json", "{not json")
    with pytest.raises(ModelFileError, match=r"junk\.keras: not a Keras model file \(no readable config.json"):
        ANET.load(junk, hex3)
    # an ANET config whose weights are missing
    _, good = saved
    hollow = tmp_path / "hollow.keras"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(hollow, "w") as dst:
        for name in ("config.json", "metadata.json"):
            dst.writestr(name, src.read(name))
    assert ANET.can_load(hollow)
    with pytest.raises(ModelFileError, match=r"hollow\.keras: cannot be read as a Keras model"):
        ANET.load(hollow, hex3)


def test_a_keras_model_not_made_by_anet(hex3, saved, tmp_path):
    _, good = saved
    other = tmp_path / "other.keras"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(other, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                config["config"]["name"] = "resnet"
                data = json.dumps(config)
            dst.writestr(item, data)
    assert not ANET.can_load(other)
    with pytest.raises(ModelFileError, match=r"other\.keras: the model 'resnet' was not made by the anet net"):
        ANET.load(other, hex3)


def test_a_model_for_another_game(hex3, hex4, saved, tmp_path):
    _, path = saved
    with pytest.raises(ModelFileError, match=r"small\.keras: expects 20 inputs but hex\(size=4\) encodes 34"):
        ANET.load(path, hex4)
    nim = mctsfw.make_game("nim", piles=[3, 4, 5], max_take=3)
    with pytest.raises(ModelFileError, match=r"expects 20 inputs but nim\(piles=\[3, 4, 5\].*\) encodes 5"):
        ANET.load(path, nim)
    with pytest.raises(ModelFileError, match=r"small\.keras: a network for hex\(size=3\), not for nim$"):
        mctsfw.make_actor(path, nim)
    # the same input size, another action space
    nim_path = tmp_path / "nim.keras"
    ANET(nim, hidden_layers=[], seed=0).save(nim_path)
    other_nim = mctsfw.make_game("nim", piles=[3, 4, 5], max_take=2)
    with pytest.raises(ModelFileError, match=rf"nim\.keras: has {nim.num_actions} outputs but nim\(.*\) has {other_nim.num_actions} actions"):
        ANET.load(nim_path, other_nim)
    with pytest.raises(ModelFileError, match=r"nim\.keras: made for nim with max_take=3; cannot play max_take=2 \(has "):
        mctsfw.load_net(nim_path, other_nim)


# ---- actors from saved models ------------------------------------------------------------------
def test_actors_from_a_saved_model(hex3, saved):
    net, path = saved
    greedy = mctsfw.make_actor(path, hex3)
    state = hex3.initial_state()
    assert isinstance(greedy, mctsfw.NetActor) and greedy.label == "small"
    assert greedy.select_action(state) == int(net.policy(state).argmax())
    sampler = mctsfw.make_actor(path, hex3, selection="sample", seed=1)
    picks = {sampler.select_action(state) for _ in range(200)}
    assert len(picks) > 3 and picks <= set(hex3.legal_actions(state))
    taken = hex3.next_state(state, 4)
    assert all(sampler.select_action(taken) != 4 for _ in range(50))
    searching = mctsfw.make_actor(path, hex3, search_games=30, seed=1)
    assert searching.label == "small+uct(30)" and searching.select_action(state) in hex3.legal_actions(state)
    with pytest.raises(ValueError, match="unknown parameter.*: depth"):
        mctsfw.make_actor(path, hex3, depth=3)
    with pytest.raises(ValueError, match="selection"):
        mctsfw.make_actor(path, hex3, selection="best")


def test_an_unknown_actor_spec_mentions_model_paths(hex3):
    with pytest.raises(ValueError, match=r"unknown actor 'alphago'; available: human, mcts, random, or the path of a saved model"):
        mctsfw.make_actor("alphago", hex3)


# ---- parameters ---------------------------------------------------------------------------
def test_param_problems():
    assert ANET.param_problems({}) == []
    assert ANET.param_problems(
        {"hidden_layers": [], "activation": "TANH", "optimizer": "RMSProp", "learning_rate": 1, "seed": -1}
    ) == []
    problems = ANET.param_problems(
        {"hidden_layers": [64, 0], "activation": "gelu", "optimizer": "lion", "learning_rate": 0, "seed": 1.5, "dropout": 0.1}
    )
    assert [p.split(":")[0] for p in problems] == ["dropout", "hidden_layers", "activation", "optimizer", "learning_rate", "seed"]
    assert "dropout: unknown parameter of anet (known: conv_layers, hidden_layers, activation, optimizer, learning_rate, seed)" in problems
    assert "activation: must be one of linear, sigmoid, tanh, relu, not 'gelu'" in problems
    for bad in (128, [True], ["8"], "128,128"):
        assert ANET.param_problems({"hidden_layers": bad})[0].startswith("hidden_layers:")
        assert ANET.param_problems({"conv_layers": bad})[0].startswith("conv_layers:")
    assert ANET.param_problems({"conv_layers": [0]})[0].startswith("conv_layers:")
    for bad in (-0.1, True, "0.01", float("nan")):
        assert ANET.param_problems({"learning_rate": bad})[0].startswith("learning_rate:")


def test_bad_parameters_raise(hex3):
    with pytest.raises(ValueError, match="anet: optimizer: must be one of adagrad, sgd, rmsprop, adam"):
        ANET(hex3, optimizer="adamax")


def test_the_net_is_registered_and_the_config_checks_its_table():
    from hexzero.mctsfw.config import ConfigError, load_config

    DEFAULT_CONFIG = None  # the declared defaults alone

    assert mctsfw.default_registries().nets.get("anet") is ANET
    config = load_config(DEFAULT_CONFIG, overrides=["nets.anet.hidden_layers=[64]", 'nets.anet.activation="sigmoid"'])
    assert config["nets"]["anet"]["hidden_layers"] == [64]
    with pytest.raises(ConfigError) as error:
        load_config(DEFAULT_CONFIG, overrides=['nets.anet.activation="gelu"', "nets.anet.learning_rate=-1"])
    assert any(p.startswith("nets.anet.activation: must be one of") for p in error.value.problems)
    assert any(p.startswith("nets.anet.learning_rate: must be a number > 0") for p in error.value.problems)


# ---- atomic writes ------------------------------------------------------------------------------
def test_atomic_path_replaces_only_a_complete_file(tmp_path):
    target = tmp_path / "sub" / "data.json"
    with atomic_path(target) as tmp:
        assert tmp.parent == target.parent and tmp.suffix == ".json" and tmp != target
        tmp.write_text("good")
    assert target.read_text() == "good"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("crash while writing")
    assert target.read_text() == "good"
    with pytest.raises(FileNotFoundError, match="nothing was written"):
        with atomic_path(target):
            pass
    assert target.read_text() == "good"
    assert [p.name for p in target.parent.iterdir()] == ["data.json"]


def test_anet_plays_the_whole_policy_role(hex3):
    """Every net offers the policy role's interface: encode_batch, and one fit signature
    whose value targets a policy net accepts and ignores (it has no value head)."""
    from hexzero.mctsfw.roles import POLICY, POLICY_VALUE, PolicyNet, has_role

    nets = [ANET(hex3, hidden_layers=[8], seed=3) for _ in range(2)]
    assert isinstance(nets[0], PolicyNet) and has_role(nets[0], POLICY) and not has_role(nets[0], POLICY_VALUE)
    states = random_states(hex3, 12, seed=5)
    x = nets[0].encode_batch(states)
    assert x.dtype == np.float32 and np.array_equal(x, np.stack([hex3.encode(s) for s in states]))
    pi = nets[0].forward(x)[:, ::-1].copy()
    pi /= pi.sum(axis=1, keepdims=True)
    with_z = nets[0].fit(x, pi, np.ones(len(x)), batch_size=4, epochs=2)
    without_z = nets[1].fit(x, pi, batch_size=4, epochs=2)
    assert with_z["loss"] == without_z["loss"]
    np.testing.assert_array_equal(nets[0].forward(x), nets[1].forward(x))
