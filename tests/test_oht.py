"""The OHT client adapter: its exact names, state checks, and the local series runner."""

import inspect

import pytest

from hexzero import mctsfw
from hexzero.mctsfw.actors import Actor, HumanActor, MCTSActor, NetActor, RandomActor
from hexzero.plugins.oht import IllegalAnswerError, OHTClient, play_oht_series

#: the tournament client's methods and their keyword parameters: the contract
PROTOCOL = {
    "handle_series_start": ["unique_id", "series_id", "player_map", "num_games", "game_params"],
    "handle_game_start": ["start_player"],
    "handle_get_action": ["state"],
    "handle_game_over": ["winner", "end_state"],
    "handle_series_over": ["stats"],
    "handle_tournament_over": ["score"],
}


@pytest.fixture(scope="module")
def hex4():
    return mctsfw.make_game("hex", size=4)


def test_method_and_keyword_names_are_those_of_the_tournament_client():
    for method, names in PROTOCOL.items():
        parameters = inspect.signature(getattr(OHTClient, method)).parameters
        assert list(parameters) == ["self", *names], method


@pytest.mark.parametrize("cls", [Actor, RandomActor, MCTSActor, HumanActor, NetActor])
def test_the_core_actors_know_no_tournament_protocol(cls):
    assert not any(hasattr(cls, method) for method in PROTOCOL)
    assert {"select_action", "reset", "label"} <= set(dir(cls))


def test_any_actor_is_wrapped_but_only_for_a_game_with_flat_states(hex4):
    client = OHTClient(mctsfw.make_actor("mcts", hex4, search_games=10, seed=1))
    assert client.game is hex4 and client.label == client.actor.label
    assert client.handle_get_action(state=(1,) + (0,) * 16) in {divmod(a, 4) for a in range(16)}
    nim = mctsfw.make_game("nim", piles=[1, 2])
    with pytest.raises(TypeError, match="flat states; nim has no size, from_flat, to_flat"):
        OHTClient(RandomActor(nim))


class SpyActor(OHTClient):
    """A random player's client that records every protocol call and refuses positional arguments."""

    def __init__(self, game, seed):
        super().__init__(RandomActor(game, seed=seed))
        self.calls = []

    def _record(self, method, args, kwargs):
        assert not args, f"{method} was called with positional arguments {args}"
        self.calls.append((method, kwargs))
        return getattr(super(), method)(**kwargs)

    def handle_series_start(self, *args, **kwargs):
        return self._record("handle_series_start", args, kwargs)

    def handle_game_start(self, *args, **kwargs):
        return self._record("handle_game_start", args, kwargs)

    def handle_get_action(self, *args, **kwargs):
        return self._record("handle_get_action", args, kwargs)

    def handle_game_over(self, *args, **kwargs):
        return self._record("handle_game_over", args, kwargs)

    def handle_series_over(self, *args, **kwargs):
        return self._record("handle_series_over", args, kwargs)

    def handle_tournament_over(self, *args, **kwargs):
        return self._record("handle_tournament_over", args, kwargs)


def test_the_runner_makes_the_servers_calls_in_order_with_keywords_and_flat_states(hex4):
    a, b = SpyActor(hex4, seed=1), SpyActor(hex4, seed=2)
    result = play_oht_series(hex4, a, b, num_games=3, unique_ids=(17, 42))
    assert result.start_players == [1, 2, 1]
    assert sum(result.stats[0][2:]) == 3 and result.stats[0][2] == result.stats[1][3]
    for series_id, spy in ((1, a), (2, b)):
        methods = [m for m, _ in spy.calls]
        assert methods[0] == "handle_series_start" and methods[-2:] == ["handle_series_over", "handle_tournament_over"]
        assert methods.count("handle_game_start") == methods.count("handle_game_over") == 3
        start = spy.calls[0][1]
        assert start == {
            "unique_id": (17, 42)[series_id - 1],
            "series_id": series_id,
            "player_map": [(17, 1), (42, 2)],
            "num_games": 3,
            "game_params": [4],
        }
        assert [kw["start_player"] for m, kw in spy.calls if m == "handle_game_start"] == [1, 2, 1]
        for method, kwargs in spy.calls:
            if method == "handle_get_action":
                state = kwargs["state"]
                assert isinstance(state, tuple) and len(state) == 17 and state[0] == series_id
                assert all(v in (0, 1, 2) for v in state[1:])
        overs = [kw for m, kw in spy.calls if m == "handle_game_over"]
        assert [kw["winner"] for kw in overs] == result.winners
        assert all(hex4.is_final(hex4.from_flat(kw["end_state"])) for kw in overs)
        assert spy.calls[-2][1] == {"stats": result.stats}
        assert spy.calls[-1][1] == {"score": result.wins(series_id)}
    # each game alternates moves from its start player, and the answers are legal moves
    for start, moves in zip(result.start_players, result.moves):
        state = hex4.initial_state(start)
        for row, col in moves:
            state = hex4.next_state(state, row * 4 + col)
        assert hex4.is_final(state)


def test_mcts_beats_random_through_the_protocol(hex4):
    rand = mctsfw.make_actor("random", hex4, seed=5)
    mcts = mctsfw.make_actor("mcts", hex4, search_games=200, seed=5)
    client = OHTClient(mcts)
    result = play_oht_series(hex4, rand, client, num_games=4)  # a bare actor is wrapped
    assert result.wins(2) >= 3, result.as_dict()
    assert client.series["score"] == result.wins(2)
    assert result.stats == [(1, 1, result.wins(1), result.wins(2)), (2, 2, result.wins(2), result.wins(1))]
    assert result.match.tally().losses == result.wins(2)  # the match runner's view of the same games
    assert result.match.mean_seconds_per_move()["b"] > result.match.mean_seconds_per_move()["a"]


def test_a_saved_anet_plays_through_the_protocol(hex4, tmp_path):
    from hexzero.nets.anet import ANET

    path = tmp_path / "tiny.keras"
    ANET(hex4, hidden_layers=[16], seed=0).save(path)
    raw = mctsfw.make_actor(path, hex4)
    assert isinstance(raw, NetActor) and raw.label == "tiny"
    searching = mctsfw.make_actor(str(path), hex4, search_games=20, seed=3, epsilon=0.1)
    assert isinstance(searching, MCTSActor) and searching.label == "tiny+uct(20)"
    result = play_oht_series(hex4, raw, searching, num_games=2)
    assert len(result.winners) == 2 and set(result.winners) <= {1, 2}
    row, col = OHTClient(raw).handle_get_action(state=(2,) + (0,) * 16)
    assert 0 <= row < 4 and 0 <= col < 4


class FixedAnswer(OHTClient):
    def __init__(self, game, answer, label=None):
        super().__init__(RandomActor(game))
        self.actor.label = label
        self.answer = answer

    def handle_get_action(self, state):
        return self.answer


@pytest.mark.parametrize(
    "answer, reason",
    [((9, 0), r"off the 4x4 board"), ("a1", r"\(row, col\) pair"), ((0.5, 1), r"\(row, col\) pair"), (None, r"pair")],
)
def test_an_illegal_answer_names_the_actor_and_the_move(hex4, answer, reason):
    cheat = FixedAnswer(hex4, answer, label="cheater")
    with pytest.raises(IllegalAnswerError, match=rf"cheater \(player 1, unique id 1\) answered .*{reason}"):
        play_oht_series(hex4, cheat, RandomActor(hex4, seed=0), num_games=1)


def test_answering_a_taken_cell_is_reported(hex4):
    cheat = FixedAnswer(hex4, (0, 0))
    with pytest.raises(IllegalAnswerError, match=r"random \(player 2, unique id 8\) answered \(0, 0\) in game 1 of 2: cell \(0, 0\) is already taken"):
        play_oht_series(hex4, RandomActor(hex4, seed=0), cheat, num_games=2, unique_ids=(7, 8), first_start=2)


@pytest.mark.parametrize(
    "state, message",
    [
        ((1,) + (0,) * 15, r"17 values .* not 16"),
        ((1,) + (0,) * 17, r"not 18"),
        ((3,) + (0,) * 16, r"player to move .* 1 or 2, not 3"),
        ((0,) + (0,) * 16, r"1 or 2, not 0"),
        ((1, 3) + (0,) * 15, r"cell 0 holds 3"),
        ((1,) + (0,) * 15 + (-1,), r"cell 15 holds -1"),
        ((2, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0), r"over \(player 1 has won\)"),
        (None, r"flat tuple"),
        (5, r"flat tuple"),
        ("1000000000000000", r"flat tuple"),
    ],
)
def test_malformed_states_are_refused_with_a_clear_error(hex4, state, message):
    actor = OHTClient(mctsfw.make_actor("random", hex4, seed=0))
    with pytest.raises(ValueError, match=message):
        actor.handle_get_action(state=state)


def test_series_and_game_start_are_checked(hex4):
    actor = OHTClient(mctsfw.make_actor("random", hex4))
    with pytest.raises(ValueError, match="size 4, the series asks for size 5"):
        actor.handle_series_start(unique_id=1, series_id=1, player_map=[(1, 1), (2, 2)], num_games=2, game_params=[5])
    with pytest.raises(ValueError, match="start_player is 1 or 2"):
        actor.handle_game_start(start_player=3)


def test_the_runner_needs_a_game_with_flat_states():
    nim = mctsfw.make_game("nim", piles=[1, 2])
    with pytest.raises(TypeError, match="flat states"):
        play_oht_series(nim, RandomActor(nim), RandomActor(nim), num_games=1)


def test_the_series_is_a_match_of_the_one_runner(hex4):
    """Seats, openers and tallies come from mctsfw.match: series id 1 is A, openers alternate."""
    result = play_oht_series(hex4, RandomActor(hex4, seed=3), RandomActor(hex4, seed=4), num_games=4, first_start=2)
    match = result.match
    assert match.a_players == [1, 1, 1, 1] and result.start_players == [2, 1, 2, 1]
    assert [r.starting_player for r in match.records] == result.start_players
    assert (match.wins_a, match.wins_b) == (result.wins(1), result.wins(2))
    assert [len(r.actions) for r in match.records] == [len(m) for m in result.moves]
