"""The network server (mctsfw.netserver): one process judges every worker's positions."""

import multiprocessing

import numpy as np
import pytest

from hexzero.mctsfw.config import load_config
from hexzero.mctsfw.netserver import NetServer, NetServerError, ServedNet
from hexzero.mctsfw.runs import RunDir
from hexzero.mctsfw.selfplay import SelfPlaySettings, SelfPlayTrainer, _server_pieces, uses_server
from tests.test_selfplay import tiny
from tests.test_training import DEFAULTS


def games_of(run_dir):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in RunDir(run_dir).read_metrics()
            if r["kind"] == "game"]


def test_served_workers_play_the_run_that_workers_with_their_own_networks_play(tmp_path):
    """The same games, cases and networks with the server as with a network in each
    worker (the MLP's answers do not depend on the batch they come in); the server and
    its socket are gone when the run is over."""
    runs = {}
    for mode in ("off", "on"):
        run_dir = tmp_path / mode
        trainer = SelfPlayTrainer(tiny(run_dir, extra=["selfplay.workers=2", "selfplay.lockstep=2",
                                                       f'selfplay.net_server="{mode}"']), run_dir, progress=False)
        trainer.train()
        runs[mode] = games_of(run_dir), trainer.buffer
        assert not multiprocessing.active_children()
    (games_off, buffer_off), (games_on, buffer_on) = runs["off"], runs["on"]
    assert games_on == games_off and len(games_on) == 6
    assert buffer_on.records == buffer_off.records


def test_a_served_run_on_two_board_sizes_judges_each_with_its_view(tmp_path):
    run_dir = tmp_path / "run"
    config = load_config(DEFAULTS, None, [
        "games.hex.size=3", "selfplay.sizes=[3, 4]", 'selfplay.net="pv_resnet"', "nets.pv_resnet.blocks=1",
        "nets.pv_resnet.filters=8", 'nets.pv_resnet.heads="convolutional"', "selfplay.games_per_generation=4",
        "selfplay.search_games=16", "selfplay.batch_size=4", "selfplay.epochs=1", "selfplay.generations=1",
        "selfplay.workers=2", "selfplay.lockstep=2", 'selfplay.net_server="on"', f'selfplay.run_dir="{run_dir}"'])
    SelfPlayTrainer(config, run_dir, progress=False).train()
    games = games_of(run_dir)
    assert len(games) == 4
    from hexzero.games.hex import Hex

    for record in games:  # each game legal to its end on its own board
        for size in (3, 4):
            game = Hex(size)
            try:
                state = game.state_after(record["moves"], record["starting_player"])
            except ValueError:
                continue
            if game.is_final(state):
                break
        else:
            pytest.fail(f"game {record['game']} is a finished game on neither board")


def _ask(address: str, seed: int, start, answers) -> None:
    """A worker's questions (run in a process of its own): 20 rounds of 5 positions, put on
    ``answers`` with the answers; the first before ``start`` (a barrier), so that both
    workers are busy (the server waits for each) before the other 19 rounds, however
    late a process on a loaded machine starts."""
    net_class, game, _ = _server_pieces(_config())
    served = ServedNet(net_class, game, address)
    rng = np.random.default_rng(seed)
    asked = []
    for round_ in range(20):
        x = rng.random((5, *served.input_shape), dtype=np.float32)
        asked.append((x, *served.evaluate(x)))
        if round_ == 0:
            start.wait()
    served.idle()
    answers.put(asked)


def _config():
    return load_config(DEFAULTS, None, ['game="connect4"', "nets.pv_mlp.hidden_layers=[16]"])


@pytest.fixture
def server(tmp_path):
    config = _config()
    net_class, game, _ = _server_pieces(config)
    net = net_class(game, hidden_layers=[16], seed=3)
    path = tmp_path / "net.keras"
    net.save(path)
    server = NetServer(_server_pieces, (config,), batch=64, wait_ms=200)  # a late worker on a busy machine still joins
    try:
        server.load(str(path), "v1")
        yield server, net, game
    finally:
        server.close()


def test_the_server_answers_each_worker_as_its_own_network_would_in_shared_calls(server):
    server, net, _ = server
    context = multiprocessing.get_context("spawn")
    start, answers = context.Barrier(2), context.Queue()
    workers = [context.Process(target=_ask, args=(server.address, seed, start, answers)) for seed in (1, 2)]
    for worker in workers:
        worker.start()
    asked = [answers.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join()
    for answers in asked:
        for x, probs, values in answers:
            expected_probs, expected_values = net.evaluate(x)
            assert np.allclose(probs, expected_probs, atol=1e-6) and np.allclose(values, expected_values, atol=1e-6)
    stats = server.stats()
    assert stats["positions"] == 2 * 20 * 5
    assert stats["calls"] < 30  # the two workers' rounds were judged together (not one call each)


def test_a_network_file_the_server_cannot_read_is_named_in_one_line(server, tmp_path):
    server, _, _ = server
    broken = tmp_path / "broken.keras"
    broken.write_bytes(b"not a network")
    with pytest.raises(NetServerError, match="could not load .*broken.keras") as error:
        server.load(str(broken), "v2")
    assert "\n" not in str(error.value)


def test_a_worker_whose_server_is_gone_stops_with_one_line(server):
    server, net, game = server
    served = ServedNet(type(net), game, server.address)
    x = net.encode_batch([game.initial_state()])
    assert np.allclose(served.evaluate(x)[0], net.evaluate(x)[0], atol=1e-6)
    server.close()
    assert not server.process.is_alive()
    with pytest.raises(NetServerError, match="network server stopped answering"):
        served.evaluate(x)
    with pytest.raises(NetServerError, match="no network server answers"):
        served.evaluate(x)


@pytest.mark.parametrize("mode, device, served", [
    ("auto", "CPU", False), ("auto", "NVIDIA H200", True), ("on", "CPU", True), ("off", "NVIDIA H200", False)])
def test_auto_serves_the_network_where_it_computes_on_a_gpu(mode, device, served):
    class Net:
        name = "fake"

        @classmethod
        def encode_states(cls, game, states):
            return np.zeros((len(states), 1))

        @staticmethod
        def device():
            return device

    settings = SelfPlaySettings.from_config(load_config(DEFAULTS, None, [f'selfplay.net_server="{mode}"']))
    assert uses_server(settings, Net) is served
