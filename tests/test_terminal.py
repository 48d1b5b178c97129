"""cli.py play for people: the commands at the prompt (help, undo, hint, swap, resign,
quit), the pie rule, the thinking indicator, colours on a terminal and none into a pipe,
the Hex board's labels, "game N of M" and --record. Through the CLI with piped input, as
a person's session is; a pseudo-terminal where the output must be one."""

import os
import pty
import re
import select
import subprocess
import sys

import numpy as np
import pytest

from hexzero import mctsfw
from hexzero.mctsfw.actors import HumanActor, MCTSActor, NetActor, Quit, RandomActor
from hexzero.mctsfw.game import IllegalMoveError
from hexzero.mctsfw.match import play_game
from hexzero.mctsfw.records import read_game_lines
from hexzero.mctsfw.sgf import read_sgf_file
from tests.test_plugins import ROOT, run_cli

ANSI = re.compile(r"\033\[[0-9;]*m")
PROMPT = "your move"


def play(*args, stdin=""):
    return run_cli("play", *args, stdin=stdin)


def test_help_lists_the_commands_and_the_move_syntax():
    result = play("--size", "3", "--p1", "human", "--p2", "random", stdin="help\nquit\n")
    assert result.returncode == 0, result.stderr
    for command in ("help", "undo", "hint", "swap", "resign", "quit"):
        assert re.search(rf"^  {command} +\S", result.stdout, re.M), command
    assert "a move: a column letter and a row number like 'b3'" in result.stdout


def test_undo_takes_back_your_move_and_the_answer_and_is_refused_before_you_moved(tmp_path):
    record = tmp_path / "games.jsonl"
    result = play("--size", "3", "--p1", "human", "--p2", "mcts", "--search-games", "30", "--seed", "1",
                  "--record", record, stdin="undo\nb1\nundo\nundo\nc1\nquit\n")
    assert result.returncode == 0, result.stderr
    assert "refused: nothing to undo: you have not moved yet" in result.stdout
    taken = result.stdout.split("taken back: back to move 1, player 1 to move")
    assert len(taken) == 2, result.stdout  # the second undo had nothing left to take back
    assert "refused: nothing to undo" in taken[1]
    [game] = read_game_lines(record)
    assert game["moves"][0] == 2 and 1 not in game["moves"][:1]  # c1, not the b1 taken back
    assert len(game["moves"]) == 2 and game["quit"] == 1 and game["winner"] is None


def test_hint_is_the_searching_agents_suggestion_with_its_share():
    result = play("--size", "4", "--p1", "human", "--p2", "mcts", "--search-games", "200", "--seed", "3",
                  stdin="hint\nquit\n")
    hint = re.search(r"hint \(mcts\(200 games\) thinks\): ([a-d][1-4]), (\d+)% of (\d+) visits; your win estimate (\d+)%",
                     result.stdout)
    assert hint, result.stdout[-1500:]
    assert int(hint.group(3)) == 200 and 0 < int(hint.group(2)) <= 100


def test_without_a_searching_agent_the_hint_says_so_and_searches_with_the_configs_budget():
    result = play("--size", "4", "--p1", "human", "--p2", "random", "--search-games", "50", "--seed", "3",
                  stdin="hint\nquit\n")
    assert re.search(r"hint \(no searching agent here: mcts\(50 games\) thinks\): [a-d][1-4], \d+% of 50 visits",
                     result.stdout), result.stdout[-1500:]


def test_resign_records_the_game_as_lost_by_the_person(tmp_path):
    sgf = tmp_path / "game.sgf"
    result = play("--size", "5", "--p1", "human", "--p2", "random", "--seed", "1", "--record", sgf,
                  stdin="c3\nresign\n")
    assert result.returncode == 0, result.stderr
    assert "player 2 (random) wins: player 1 resigned" in result.stdout
    game = read_sgf_file(sgf)
    assert game.result == "W+R" and len(game.moves) == 2


def test_quit_ends_the_session_at_once_and_keeps_what_was_played(tmp_path):
    record = tmp_path / "nim.jsonl"  # NIM has no SGF: JSON lines
    result = play("--game", "nim", "--p1", "human", "--p2", "random", "--games", "3", "--seed", "2",
                  "--record", record, stdin="1 1\nquit\n")
    assert result.returncode == 0, result.stderr
    assert "unfinished: player 1 quit" in result.stdout and "game 2 of 3" not in result.stdout
    [game] = read_game_lines(record)
    assert game["game"] == "nim" and game["quit"] == 1 and len(game["moves"]) == 2
    assert "(0 of 3 games finished)" in result.stdout


def test_a_multi_game_session_says_which_game_is_on():
    result = play("--size", "3", "--p1", "random", "--p2", "random", "--games", "3", "--no-display")
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if " of 3: " in line] == [
        f"game {n} of 3: player 1 starts" for n in (1, 2, 3)]


# ---- the pie rule ---------------------------------------------------------------------------------
def test_hex_swap_mirrors_the_first_stone_and_is_offered_only_when_on():
    on, off = mctsfw.make_game("hex", size=5, swap=True), mctsfw.make_game("hex", size=5)
    assert on.swap_offered(1, [1]) and not on.swap_offered(1, []) and not on.swap_offered(1, [1, 2])
    assert not off.swap_offered(1, [1]) and "games.hex.swap" in off.swap_problem(1, [1])
    assert on.swapped(1, [1]) == (2, [5])  # b1 (row 0, column 1) -> a2 (row 1, column 0), player 2's
    assert off.swapped(2, [6]) == (1, [6])  # on the long diagonal it stays where it is
    with pytest.raises(IllegalMoveError, match="second player's first move"):
        on.swapped(1, [1, 2])
    assert not mctsfw.make_game("connect4").swap_offered(1, [3])
    assert on.params() == {"size": 5, "swap": True} and off.params() == {"size": 5}


def test_a_person_swaps_undoes_the_swap_and_the_sgf_is_hexguis(tmp_path):
    sgf = tmp_path / "swap.sgf"
    result = play("--size", "5", "--p1", "mcts", "--p2", "human", "--search-games", "100", "--seed", "1",
                  "--set", "games.hex.swap=true", "--record", sgf, stdin="swap\nundo\nswap\nquit\n")
    assert result.returncode == 0, result.stderr
    assert "you may swap (the pie rule)" in result.stdout
    assert result.stdout.count("player 2 swaps: the first stone") == 2
    assert "taken back: back to move 2, player 2 to move" in result.stdout
    text = sgf.read_text()
    assert re.search(r";B\[[a-e][1-5]\];W\[swap-pieces\];B\[[a-e][1-5]\]\)", text), text
    game = read_sgf_file(sgf)
    first = re.search(r";B\[([a-e][1-5])\]", text).group(1)
    hex5 = mctsfw.make_game("hex", size=5)
    row, col = divmod(hex5.parse_action(first, hex5.initial_state()), 5)
    assert game.starting_player == 2 and game.moves[0] == col * 5 + row  # the stone mirrored, White's


def test_swap_is_refused_with_the_reason_when_not_offered():
    result = play("--size", "5", "--p1", "human", "--p2", "random", stdin="swap\nquit\n")
    assert "refused: no swap now: the pie rule is off (games.hex.swap = false)" in result.stdout
    # seeded: an unseeded random opener took c3 one time in 25, and "c3" then "swap" made the swap
    result = play("--size", "5", "--p1", "random", "--p2", "human", "--set", "games.hex.swap=true", "--seed", "1",
                  stdin="c3\nswap\nquit\n")
    assert "refused: no swap now: the swap is the second player's first move" in result.stdout


def test_a_searching_agent_swaps_a_winning_opening_and_answers_a_losing_one():
    hex3 = mctsfw.make_game("hex", size=3, swap=True)
    # on 3x3 the centre wins for whoever has it; b1 (next to player 1's own side) loses
    assert MCTSActor(hex3, search_games=2000, seed=3).consider_swap(1, [4])
    assert not MCTSActor(hex3, search_games=2000, seed=3).consider_swap(1, [1])
    assert not RandomActor(hex3).consider_swap(1, [4])


def test_play_game_judges_requests_the_same_people_keep_their_player_numbers():
    hex3 = mctsfw.make_game("hex", size=3, swap=True)
    said = []
    typed = iter(["b2", "a1"])  # player 1 opens in the centre; after the agent's swap, a1
    person = HumanActor(hex3, input_fn=lambda prompt: next(typed), output_fn=said.append)
    agent = MCTSActor(hex3, search_games=2000, seed=3)
    with pytest.raises(StopIteration):  # the person runs out of moves after a1 and the answer
        play_game(hex3, {1: person, 2: agent})
    assert any("player 2 swaps: the first stone, b2, becomes player 2's at b2" in line for line in said)


# ---- what the terminal shows ------------------------------------------------------------------------
def test_hex_board_is_labelled_on_all_four_sides_and_marks_the_last_move():
    hex5 = mctsfw.make_game("hex", size=5)
    lines = hex5.render(hex5.state_after([12]), last_action=12).splitlines()
    board = lines[1:10]  # between N and S
    assert [line.split()[0] for line in board] == ["1", "2", "3", "4", "5", "b", "c", "d", "e"]  # west sides
    assert [line.split()[-1] for line in board] == ["a", "b", "c", "d", "e", "2", "3", "4", "5"]  # east sides
    assert "(X)" in board[4] and board[4].count("(") == 1


def test_into_a_pipe_one_thought_line_per_searched_move_and_no_colours():
    result = play("--size", "3", "--p1", "mcts", "--p2", "mcts", "--search-games", "40", "--seed", "1")
    assert result.returncode == 0, result.stderr
    moves = int(re.search(r"(\d+) moves", result.stdout).group(1))
    # 40 search games a move, fewer once the position is proven (which the line then says)
    thoughts = re.findall(r"^player [12] thought: (?:40|[0-3]?\d) search games, [\d.]+ s, "
                          r"(?:win estimate \d+%|proven: (?:wins|loses) in \d+), best [a-c][1-3] "
                          r"\(\d+% of visits\)$", result.stdout, re.M)
    assert len(thoughts) == moves
    assert "\033[" not in result.stdout and "\r" not in result.stdout


def run_on_a_terminal(processes, *args, stdin="", env=None):
    """``cli.py play ARGS`` with its output on a pseudo-terminal (its input piped): all it wrote."""
    master, slave = pty.openpty()
    process = processes.start([sys.executable, ROOT / "cli.py", "play", *args], stdin=subprocess.PIPE,
                              stdout=slave, stderr=slave, env={**os.environ, "TERM": "xterm", **(env or {})})
    os.close(slave)
    process.stdin.write(stdin.encode())
    process.stdin.close()
    out = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the other end closed: the process has ended
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
    process.wait(timeout=30)
    return process.returncode, out.decode(errors="replace")


def test_on_a_terminal_the_thinking_line_is_rewritten_and_the_stones_are_coloured(processes):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    code, out = run_on_a_terminal(processes, "--size", "7", "--p1", "human", "--p2", "mcts", "--time-limit", "0.5",
                                  "--search-games", "0", "--seed", "1", stdin="b2\nquit\n",
                                  env={"NO_COLOR": ""} if "NO_COLOR" in env else None)
    assert code == 0, out
    assert re.search(r"\r\033\[Kthinking: \d+ search games, [\d.]+ s, win estimate \d+%", out), out[-2000:]
    assert out.count("thinking: ") >= 2  # rewritten in place while the agent searched half a second (unproven on 7x7)
    assert "thought:" not in out
    assert "\033[31m" in out and "\033[34m" in out  # player 1's stones red, player 2's blue
    marked = [line for line in out.splitlines() if "\033[1;7m" in line]  # the last move, bright
    assert marked and all(" . " in line for line in marked)  # on the board, not in "player 1 (X) to move"
    assert "player 1 (\033[31mX\033[0m) to move" in out


@pytest.mark.parametrize("how", ["--no-color", "NO_COLOR"])
def test_no_color_and_NO_COLOR_turn_the_colours_off_on_a_terminal(how, processes):
    args = ("--size", "3", "--p1", "human", "--p2", "random", "--seed", "1")
    code, out = run_on_a_terminal(processes, *args, *(["--no-color"] if how == "--no-color" else []), stdin="b2\nquit\n",
                                  env={"NO_COLOR": "1"} if how == "NO_COLOR" else None)
    assert code == 0, out
    assert "(X)" in out and not ANSI.search(out)


class ValueByPlayer:
    """A stand-in policy-and-value net whose value for the player to move depends only on who that is."""

    roles = ("policy", "policy_value")

    def __init__(self, game, value_of):
        self.game, self.value_of = game, value_of

    def forward(self, x):
        return np.full((len(x), self.game.num_actions), 1 / self.game.num_actions, dtype=np.float32)

    def evaluate(self, x):
        movers = np.where(x[:, -2] == 1, 1, 2)
        return self.forward(x), np.array([self.value_of[m] for m in movers], dtype=np.float32)


@pytest.mark.parametrize("value_of, swaps", [({1: 0.4, 2: 0.3}, True), ({1: 0.8, 2: 0.3}, False)])
def test_a_raw_policy_value_network_swaps_when_its_value_head_prefers_the_swapped_position(value_of, swaps):
    hex3 = mctsfw.make_game("hex", size=3, swap=True)
    # answering: player 2 to move, worth value_of[2]; swapped: player 1 to move, worth 1 - value_of[1] to player 2
    assert NetActor(hex3, ValueByPlayer(hex3, value_of)).consider_swap(1, [4]) is swaps


def test_an_agent_swaps_the_persons_centre_opening_through_the_cli(tmp_path):
    record = tmp_path / "games.jsonl"
    result = play("--size", "3", "--p1", "human", "--p2", "mcts", "--search-games", "2000", "--seed", "3",
                  "--set", "games.hex.swap=true", "--record", record, stdin="b2\nquit\n")
    assert result.returncode == 0, result.stderr
    assert "player 2 swaps: the first stone, b2, becomes player 2's at b2; player 1 to move" in result.stdout
    assert "thought:" not in result.stdout  # weighing the swap is no move: nothing to sum up
    [game] = read_game_lines(record)
    assert game["starting_player"] == 2 and game["moves"] == [4] and game["swapped_first_move"] == 4
    assert game["params"] == {"size": 3, "swap": True}


def test_where_the_swap_is_offered_the_hint_weighs_it():
    # two people on 3x3: player 1 opens in the centre, which wins; player 2 asks
    result = play("--size", "3", "--p1", "human", "--p2", "human", "--search-games", "2000", "--seed", "3",
                  "--set", "games.hex.swap=true", stdin="b2\nhint\nquit\n")
    assert re.search(r"hint \(no searching agent here: mcts\(2000 games\) thinks\): swap: your win estimate (\d+)% "
                     r"after the swap, (\d+)% answering with [a-c][1-3]", result.stdout), result.stdout[-1500:]


@pytest.mark.parametrize("name, params", [("hex", {"size": 19}), ("gomoku", {"size": 20}), ("go", {"size": 19}),
                                          ("connect4", {}), ("nim", {})])
def test_the_prompt_fits_a_narrow_terminal_and_an_empty_line_asks_again(name, params):
    """How to type a move is said once (and by help): the prompt itself never wraps, and
    Enter alone asks again instead of being refused."""
    game = mctsfw.make_game(name, **params)
    prompts, said = [], []
    answers = iter(["", "   ", "quit"])

    def ask(prompt):
        prompts.append(prompt)
        return next(answers)

    with pytest.raises(Quit):
        HumanActor(game, input_fn=ask, output_fn=said.append).select_action(game.initial_state())
    assert len(prompts) == 3 and all(len(p) <= 60 for p in prompts), prompts
    assert said == []  # nothing refused


def test_play_says_how_to_type_a_move_once_at_the_start():
    result = play("--size", "3", "--p1", "human", "--p2", "random", stdin="\nquit\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("a column letter and a row number like 'b3'") == 1
    assert "refused" not in result.stdout
