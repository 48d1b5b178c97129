"""The replay buffer of recorded games: the cases it rebuilds are the encoded cases a buffer
of encodings held (same cases, same order, same minibatches), it keeps the newest
positions, and its file round-trips."""

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw import MCTS, make_tree_policy
from hexzero.mctsfw.evaluators import RandomRollouts
from hexzero.mctsfw.search import target_counts
from hexzero.mctsfw.records import GameStore, RecordedGame, shares
from hexzero.mctsfw.replay import ReplayBuffer, ReplayFileError, game_result
from hexzero.mctsfw.sampling import sample_action


def played_games(game, count, search_games=30, seed=0, temperature=1.0):
    """``count`` games of UCT with random rollouts, moves drawn from the visits: for each,
    (starting player, moves, visit counts, visit distributions, winner)."""
    rng = np.random.default_rng(seed)
    games = []
    for number in range(count):
        mcts = MCTS(game, make_tree_policy("uct"), RandomRollouts(game, seed=seed + number), seed=seed + number)
        starter = 1 + number % 2
        state = game.initial_state(starter)
        moves, counts, distributions = [], [], []
        while not game.is_final(state):
            root = mcts.search(state, search_games=search_games)
            distributions.append(mcts.visit_distribution(root))
            counts.append(target_counts(root, game.num_actions))
            action = sample_action(distributions[-1], temperature, rng)
            moves.append(action)
            mcts.advance(action)
            state = game.next_state(state, action)
        games.append((starter, moves, counts, distributions, game.winner(state)))
    return games


def recorded(game, starter, moves, counts, winner):
    values = [game_result(winner, game.current_player(s)) for s in states_along(game, starter, moves)]
    return RecordedGame.from_targets(game.num_actions, starter, moves, counts, values, winner)


def states_along(game, starter, moves):
    state = game.initial_state(starter)
    for action in moves:
        yield state
        state = game.next_state(state, action)


class EncodedRing:
    """The replay buffer as it was: a ring of encoded cases (x, distribution, value),
    symmetric copies included, the newest overwriting the oldest."""

    def __init__(self, capacity, shape, num_actions):
        self.x = np.zeros((capacity, *shape), np.float32)
        self.y = np.zeros((capacity, num_actions), np.float32)
        self.z = np.zeros(capacity, np.float32)
        self.capacity, self.size, self.next = capacity, 0, 0

    def add(self, x, y, z):
        self.x[self.next], self.y[self.next], self.z[self.next] = x, y, z
        self.next = (self.next + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, count, rng):
        chosen = rng.choice(self.size, size=min(count, self.size), replace=False)
        return self.x[chosen], self.y[chosen], self.z[chosen]

    def cases(self, average_positions=False):
        x, y, z = self.x[: self.size], self.y[: self.size], self.z[: self.size]
        if not average_positions:
            return x, y, z
        seen = {}  # each distinct position where it first occurs
        group = np.array([seen.setdefault(row.tobytes(), len(seen)) for row in x.reshape(self.size, -1)])
        first = np.array([list(group).index(g) for g in range(len(seen))])
        counts = np.bincount(group).astype(np.float32)
        y_mean = np.zeros((len(first), y.shape[1]), np.float32)
        np.add.at(y_mean, group, y)
        y_mean /= counts[:, None]
        return x[first], y_mean, (np.bincount(group, weights=z) / counts).astype(np.float32)


def encoder(game, planes):
    encode = game.encode_planes if planes else game.encode
    return lambda states: np.stack([encode(s) for s in states]).astype(np.float32)


def test_recorded_targets_are_the_searchs_visit_distributions_bit_for_bit():
    game = mctsfw.make_game("connect4")
    for starter, moves, counts, distributions, winner in played_games(game, 2):
        record = recorded(game, starter, moves, counts, winner)
        for i, distribution in enumerate(distributions):
            assert np.array_equal(record.distribution(i, game.num_actions), distribution)
            assert record.distribution(i, game.num_actions).dtype == np.float32
        assert np.array_equal(shares(np.zeros(3)), np.zeros(3))
        final = record.final_state(game)
        assert game.is_final(final) and game.winner(final) == winner
        assert [game.current_player(s) for s in record.states(game)] == \
            [game.current_player(s) for s in states_along(game, starter, moves)]


CASES = [("hex", {"size": 4}, False), ("connect4", {}, False), ("connect4", {}, True),
         ("gomoku", {"size": 7, "history": 1}, True)]


@pytest.mark.parametrize("name, params, planes", CASES)
@pytest.mark.parametrize("augment", [True, False])
@pytest.mark.parametrize("capacity", [10_000, 64])
def test_rebuilt_cases_are_the_encoded_cases_in_the_same_order(name, params, planes, augment, capacity):
    """The buffer of records gives what the buffer of encodings gave: every case with its
    symmetric copies, in the ring's order once it has wrapped, the same duplicates
    averaged, and the same minibatch for the same random numbers."""
    game = mctsfw.make_game(name, **params)
    encode = encoder(game, planes)
    buffer = ReplayBuffer(capacity, game, encode, augment=augment)
    ring = EncodedRing(capacity, encode([game.initial_state()]).shape[1:], game.num_actions)
    for starter, moves, counts, distributions, winner in played_games(game, 8, temperature=2.0):
        buffer.add(recorded(game, starter, moves, counts, winner))
        for state, distribution in zip(states_along(game, starter, moves), distributions):
            z = game_result(winner, game.current_player(state))
            x = encode([state])[0]
            for xs, ys in game.symmetries(x, distribution) if augment else [(x, distribution)]:
                ring.add(xs, ys, z)
    assert len(buffer) == ring.size
    assert (ring.size == capacity) == (capacity == 64)  # the small buffer has wrapped
    for average in (False, True):
        for mine, theirs in zip(buffer.cases(average_positions=average), ring.cases(average_positions=average)):
            assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs)
    x_all = buffer.cases()[0]
    if capacity > 64:  # every game opens from the same position: duplicates to average
        assert len(buffer.cases(average_positions=True)[0]) < len(x_all)
    for seed in range(3):
        for mine, theirs in zip(buffer.sample(16, np.random.default_rng(seed)), ring.sample(16, np.random.default_rng(seed))):
            assert np.array_equal(mine, theirs)


def synthetic_record(game, length, starter=1, seed=0):
    """A game of ``length`` random legal moves (not necessarily finished), uniform visits."""
    rng = np.random.default_rng(seed)
    state, moves, counts = game.initial_state(starter), [], []
    for _ in range(length):
        legal = game.legal_actions(state)
        visits = np.zeros(game.num_actions, np.int64)
        visits[legal] = rng.integers(1, 5, size=len(legal))
        counts.append(visits)
        moves.append(int(rng.choice(legal)))
        state = game.next_state(state, moves[-1])
    return RecordedGame.from_targets(game.num_actions, starter, moves, counts, rng.random(length), None)


def test_the_buffer_keeps_the_newest_positions_and_drops_the_oldest_games():
    game = mctsfw.make_game("connect4")
    buffer = ReplayBuffer(10, game, encoder(game, False))
    games = [synthetic_record(game, 4, seed=i) for i in range(4)]
    for record in games[:2]:
        buffer.add(record)
    assert len(buffer) == 8 and buffer.records == games[:2]
    buffer.add(games[2])  # 12 positions: the oldest game's first two go
    assert len(buffer) == 10 and buffer.records == games[:3] and buffer.first == 2
    assert buffer.index()[0].tolist() == [0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    assert buffer.index()[1].tolist() == [2, 3, 0, 1, 2, 3, 0, 1, 2, 3]
    buffer.add(games[3])  # and now the whole oldest game, and the next one's first two
    assert len(buffer) == 10 and buffer.records == games[1:] and buffer.first == 2
    x, y, z = buffer.cases()
    # the ring has turned by 14 cases (4 * 4 added, 10 kept): slot 0 holds the 7th oldest kept case
    kept = [(g, p) for g in range(1, 4) for p in range(4)][2:]
    chronological = [games[g].values[p] for g, p in kept]
    assert np.array_equal(z, np.roll(chronological, 16 % 10))
    # with symmetric copies the capacity counts cases: 10 cases are 5 positions of Connect Four
    mirrored = ReplayBuffer(10, game, encoder(game, False), augment=True)
    for record in games[:2]:
        mirrored.add(record)
    assert len(mirrored) == 10 and mirrored.positions == 5 and mirrored.records == games[:2] and mirrored.first == 3
    # whole positions only: 11 cases hold 5 positions with their mirror images (the ring kept 11 cases)
    odd = ReplayBuffer(11, game, encoder(game, False), augment=True)
    for record in games[:2]:
        odd.add(record)
    assert len(odd) == 10 and odd.max_positions == 5
    # a single game longer than the buffer keeps its last positions
    short = ReplayBuffer(3, game, encoder(game, False))
    short.add(games[0])
    assert len(short) == 3 and short.first == 1


def without_targets(record, positions):
    """``record`` with no policy target at ``positions`` (moves searched too little to learn)."""
    counts = [np.zeros(7, np.int64) if i in positions else record.counts(i, 7) for i in range(len(record))]
    return RecordedGame.from_targets(7, record.starting_player, record.moves, counts, record.values, record.winner)


def test_positions_without_targets_are_played_but_never_cases(tmp_path):
    """Playout cap randomization: a move searched fast keeps its place in the game (the
    positions after it are rebuilt along the moves) but is no case: the buffer counts,
    drops, rebuilds, saves and loads the targeted positions alone."""
    game = mctsfw.make_game("connect4")
    games = [without_targets(synthetic_record(game, 6, seed=i), {0, 2, 3}) for i in range(3)]
    assert games[0].targeted().tolist() == [1, 4, 5] and len(games[0]) == 6
    buffer = ReplayBuffer(7, game, encoder(game, False))
    for record in games[:2]:
        buffer.add(record)
    assert len(buffer) == 6 and buffer.index()[1].tolist() == [1, 4, 5, 1, 4, 5]
    buffer.add(games[2])  # 9 targeted positions: the oldest game's first two go
    assert len(buffer) == 7 and buffer.first == 2 and buffer.records == games
    assert buffer.index()[0].tolist() == [0, 1, 1, 1, 2, 2, 2] and buffer.index()[1].tolist() == [5, 1, 4, 5, 1, 4, 5]
    x, y, z = buffer.cases()
    assert np.allclose(y.sum(axis=1), 1.0) and sorted(z.tolist()) == sorted(
        [games[0].values[5]] + [g.values[p] for g in games[1:] for p in (1, 4, 5)])
    states = list(games[2].states(game))
    assert any(np.array_equal(row, encoder(game, False)([states[4]])[0]) for row in x)  # rebuilt along every move
    buffer.save(tmp_path / "replay.npz")
    again = ReplayBuffer.load(tmp_path / "replay.npz", game, encoder(game, False))
    assert (again.first, again.positions, len(again)) == (2, 7, 7) and again.records == games


def test_the_buffer_file_round_trips_without_pickles(tmp_path):
    game = mctsfw.make_game("connect4")
    buffer = ReplayBuffer(25, game, encoder(game, True), augment=True)
    for starter, moves, counts, _, winner in played_games(game, 4):
        buffer.add(recorded(game, starter, moves, counts, winner))
    assert buffer.first > 0
    buffer.save(tmp_path / "replay.npz")
    with np.load(tmp_path / "replay.npz", allow_pickle=False) as data:  # plain arrays only
        assert all(data[key].dtype != object for key in data.files)
        assert data["moves"].dtype == np.uint8 and data["policy_actions"].dtype == np.uint8
    again = ReplayBuffer.load(tmp_path / "replay.npz", game, encoder(game, True))
    assert again.records == buffer.records and (again.first, again.added, again.positions) == \
        (buffer.first, buffer.added, buffer.positions)
    assert again.capacity == 25 and again.augment and len(again) == len(buffer)
    for mine, theirs in zip(again.cases(average_positions=True), buffer.cases(average_positions=True)):
        assert np.array_equal(mine, theirs)
    # an empty buffer too
    ReplayBuffer(5, game, encoder(game, False)).save(tmp_path / "empty.npz")
    empty = ReplayBuffer.load(tmp_path / "empty.npz", game, encoder(game, False))
    assert len(empty) == 0 and empty.records == []
    assert [len(a) for a in empty.cases()] == [0, 0, 0]
    assert [a.shape for a in ReplayBuffer(5, game, encoder(game, True), augment=True).cases(True)] == \
        [(0, 6, 7, 4), (0, 7), (0,)]
    # the store keeps draws (winner None), and visit counts of 255 and more beside the byte per count
    store = GameStore(game.num_actions)
    large = RecordedGame.from_targets(game.num_actions, 2, [3, 3], [np.array([0, 0, 0, 70000, 0, 0, 1]),
                                                                     np.array([5, 0, 0, 255, 0, 0, 254])], [0.5, 0.5], None)
    small = RecordedGame.from_targets(game.num_actions, 1, [3], [np.array([0, 0, 0, 7, 0, 0, 1])], [1.0], 1)
    for record in (large, small, large):
        store.append(record)
    assert store.policy_visits.dtype == np.uint8 and store.policy_visits.tolist() == [255, 1, 5, 255, 254, 7, 1, 255, 1, 5, 255, 254]
    assert store.large_visits.tolist() == [70000, 255, 70000, 255] and store.large_game_offsets.tolist() == [0, 2, 2, 4]
    assert store.records() == [large, small, large]
    assert GameStore.from_arrays(store.arrays(), game.num_actions).records() == [large, small, large]
    store.drop_oldest()
    assert store.records() == [small, large] and store.positions() == 3
    assert store.large_game_offsets.tolist() == [0, 0, 2]


def test_a_buffer_file_of_encoded_cases_is_refused_with_one_line(tmp_path):
    game = mctsfw.make_game("hex", size=3)
    np.savez(tmp_path / "replay.npz", x=np.zeros((2, 22), np.float32), y=np.zeros((2, 9), np.float32),
             next=2, capacity=10)
    with pytest.raises(ReplayFileError, match="older hexzero.*cannot be resumed"):
        ReplayBuffer.load(tmp_path / "replay.npz", game, encoder(game, False))
    buffer = ReplayBuffer(10, game, encoder(game, False))
    buffer.save(tmp_path / "hex3.npz")
    with pytest.raises(ReplayFileError, match="9 actions"):
        ReplayBuffer.load(tmp_path / "hex3.npz", mctsfw.make_game("hex", size=4), encoder(game, False))


def test_a_stored_position_takes_ten_times_less_than_its_encoded_cases():
    """scripts/record_memory.py on a few real Connect Four games: the figures it reports."""
    from scripts.record_memory import encoded_bytes, measured_row, play_records

    game = mctsfw.make_game("connect4")
    records = play_records(game, 4, search_games=50)
    positions = sum(len(r) for r in records)
    for encoding, floats in (("flat", 86), ("planes", 6 * 7 * 4)):
        row = measured_row("c4", game, encoding, records)
        assert row["positions"] == positions and row["copies"] == 2
        assert row["encoded"] == encoded_bytes(floats, 2, 7) == 2 * 4 * (floats + 7 + 1)
        assert row["records"] < row["records_in_memory"] < row["records_file"]
        assert row["ratio"] >= 10 and row["encoded"] / row["records_file"] >= 10


@pytest.mark.parametrize("colliding", [False, True])
def test_equal_rows_groups_equal_rows_in_the_order_they_first_occur(monkeypatch, colliding):
    from hexzero.mctsfw import replay

    if colliding:  # every row hashes alike: the check against the group's first row must catch it
        monkeypatch.setattr(replay, "hash", lambda data: 0, raising=False)
    rows = np.array([[3, 1], [0, 0], [3, 1], [2, 2], [0, 0], [0, 1]], dtype=np.float32)
    first, group = replay.equal_rows(rows)
    assert first.tolist() == [0, 1, 3, 5] and group.tolist() == [0, 1, 0, 2, 1, 3]
