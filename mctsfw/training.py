"""On-policy MCTS learning (the assignment's pseudocode), generic over game and network.

For each episode: play an actual game; before every actual move run MCTS from the
current state with the network as rollout policy (epsilon-greedy, the same network
for both players), note the visit distribution D, choose the actual move from D and
keep the subtree under it. When the game ends, it goes into the replay buffer as its
moves with each position's D and value target z, the result for the player to move (a
policy-and-value net learns it; a policy net ignores it). After the episode, train the
network on a minibatch from the buffer, which rebuilds the chosen positions' encodings
(and symmetric copies) from the moves. Every save interval cache the network (episode 0 =
untrained). After every episode the network, buffer and progress are committed to the
run directory, so a run killed at any moment resumes without repeating or losing an
episode.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from hexzero.mctsfw.config import plugin_params
from hexzero.mctsfw.game import offers_planes_of_encoded
from hexzero.mctsfw.evaluators import NetRollouts
from hexzero.mctsfw.hookspecs import hookimpl
from hexzero.mctsfw.search import MCTS, pairing_problem
from hexzero.mctsfw.plugin_manager import Registries, default_registries
from hexzero.mctsfw.records import RecordedGame
from hexzero.mctsfw.replay import ReplayBuffer, game_result
from hexzero.mctsfw.roles import POLICY, RoleError, input_problem, role_problem
from hexzero.mctsfw.runs import ResumableRun
from hexzero.mctsfw.sampling import sample_action
from hexzero.mctsfw.schema import Section, SectionSettings, Setting


#: ``[train]``: on-policy MCTS learning (``cli.py train``)
def net_problems(net_class: type, name: str) -> list[str]:
    """Why the net ``name`` cannot learn on-policy, if it cannot: the rollouts play with its
    policy (any net with the policy role) and feed it the flat encoding."""
    purpose = "on-policy training (its MCTS rollouts)"
    problems = [role_problem(net_class, POLICY, purpose), input_problem(net_class, "flat", purpose)]
    return [f"net = {name!r}: {p}" for p in problems if p]


def train_config_problems(config: dict, registries: Registries) -> list[str]:
    """The problems of a (well-formed) config for ``train``, found before anything is written:
    the net's role, and convolutions (``conv_layers``) on a game without a board's planes."""
    name, game = config["net"], config["game"]
    problems = net_problems(registries.nets.get(name), name)
    if config.get("nets", {}).get(name, {}).get("conv_layers") and game in registries.games \
            and not offers_planes_of_encoded(registries.games.get(game)):
        problems.append(f"nets.{name}.conv_layers: {game} offers no board to convolve over "
                        "(no planes_of_encoded; Hex and Connect Four have one): set it to []")
    return problems



TRAIN_SECTION = Section("train", "cli.py train: on-policy MCTS learning", [
    Setting("run_dir", "runs/hex5", "the run directory (relative to the current one); an unfinished run there is resumed",
            resumable=True),
    Setting("episodes", 200, "actual games played", low=1, resumable=True),
    Setting("search_games", 500, "MCTS search games (ANET rollouts) before every actual move", low=1),
    Setting("checkpoints", 9, "K cached networks, the first before episode 1 (untrained), the last at the end "
            "(9: the TOPP's ladder shows the climb, each agent meeting 8 others and random play); a run of fewer "
            "episodes caches one after each", low=2),
    Setting("replay_size", 4000, "replay buffer capacity (cases); the oldest go first", low=1),
    Setting("minibatch", 512, "cases drawn from the buffer to train on after each episode", low=1),
    Setting("epochs", 5, "passes over that minibatch", low=1),
    Setting("epsilon", 0.5, "rollout exploration: a random move with this probability ...", low=0, high=1),
    Setting("epsilon_decay", 0.99, "... multiplied by this after every episode ...", low=0, high=1),
    Setting("epsilon_min", 0.05, "... down to this", low=0, high=1),
    Setting("starting_player", "alternate", 'who starts each episode: "alternate" or "random"',
            choices=("alternate", "random")),
    Setting("move_selection", "greedy",
            'the actual move from the visit distribution: "greedy" (most visited) or "sample"',
            choices=("greedy", "sample")),
    Setting("temperature_moves", 4, "the first N moves of each episode drawn from the visit distribution whatever "
            "move_selection says (AlphaZero's opening temperature, as selfplay.temperature_moves: varied openings); "
            "0 = none", low=0),
    Setting("rollout_selection", "greedy",
            'rollout moves off epsilon: the net\'s most probable ("greedy") or drawn from it ("sample")',
            choices=("greedy", "sample")),
    Setting("augment", True, "also train on the game's symmetric cases (Hex: turned 180 degrees, mirrored with colours swapped)"),
    Setting("display", False, "draw the actual games while training", resumable=True),
    Setting("seed", 0, "random seed of the run; -1 = a new seed every run", low=-1),
], checks=[train_config_problems])


@hookimpl
def mctsfw_config_sections():
    return [TRAIN_SECTION]


class TrainSettings(SectionSettings):
    """The ``[train]`` values as attributes (``settings.episodes``)."""

    section = TRAIN_SECTION

    def checkpoint_episodes(self) -> list[int]:
        """K episodes spread evenly from 0 (untrained) to the last one (every episode when
        there are fewer than K - 1)."""
        k = min(self.checkpoints, self.episodes + 1)
        return sorted({round(i * self.episodes / (k - 1)) for i in range(k)})

    def epsilon_at(self, episode: int) -> float:
        return max(self.epsilon_min, self.epsilon * self.epsilon_decay**episode)


class Trainer(ResumableRun):
    """Runs (or resumes) the training run in ``run_dir`` for a validated config.

    The net is any policy network that reads the flat encoding (``anet``, ``pv_mlp``); a
    policy-and-value net rolls out with its policy head and also learns the value of
    each case: the episode's result for the player to move.
    """

    counter = "episode"
    checkpoint_tag = "ep"
    length_key = "episodes"
    unit = "episode"

    def __init__(self, config: dict, run_dir: str | Path, registries: Registries | None = None, progress: bool = True):
        super().__init__(config, run_dir, progress)
        self.registries = registries or default_registries()
        self.settings = TrainSettings.from_config(config)
        game_name, net_name = config["game"], config["net"]
        self.net_class = self.registries.nets.get(net_name)
        self.net_name = net_name
        problems = net_problems(self.net_class, net_name)
        if problems:
            raise RoleError("; ".join(problems))
        self.game = self.registries.games.get(game_name)(**plugin_params(config, "games", game_name))
        self.tree_policy = self.registries.tree_policies.get(config["tree_policy"])(
            **plugin_params(config, "tree_policies", config["tree_policy"])
        )
        self.display = None
        if self.settings.display:
            self.display = self.registries.displays.get(config["display"])(delay=config["show"]["delay"])

    @classmethod
    def config_problems(cls, config: dict) -> list[str]:
        """A tree policy that cannot search with the net's rollouts (RAVE reads random
        playouts' moves), refused before the run starts; other commands may still use it."""
        policy = default_registries().tree_policies.get(config["tree_policy"])
        pairing = pairing_problem(policy, NetRollouts)
        return [f"tree_policy = {config['tree_policy']!r}: {pairing}; train searches with the net's rollouts"] \
            if pairing else []

    @property
    def episode(self) -> int:
        """Episodes finished (and committed)."""
        return self.step

    # ---- the run's state -----------------------------------------------------------------------
    def new_state(self) -> None:
        params = plugin_params(self.config, "nets", self.net_name)
        params.setdefault("seed", self.seed)
        self.net = self.net_class(self.game, **params)
        self.buffer = ReplayBuffer(self.settings.replay_size, self.game, self.net.encode_batch,
                                   augment=self.settings.augment)

    def load_state(self, directory: Path, progress: dict[str, Any]) -> None:
        self.net = self.net_class.load(directory / "net.keras", self.game)
        self.buffer = ReplayBuffer.load(directory / "replay.npz", self.game, self.net.encode_batch)

    def save_state(self, directory: Path) -> None:
        self.net.save(directory / "net.keras")
        self.buffer.save(directory / "replay.npz")

    def progress_state(self) -> dict[str, Any]:
        return {"episode": self.episode}

    # ---- the loop ----------------------------------------------------------------------------------
    def steps(self) -> Iterator[tuple[dict[str, Any], bool]]:
        s = self.settings
        checkpoint_at = set(s.checkpoint_episodes())
        while self.episode < s.episodes:
            number = self.episode + 1
            record = self.play_episode(number)
            if number in checkpoint_at:
                self.save_checkpoint(number)
                self.plot()
            yield record, True

    def bar_counts(self) -> tuple[int, int]:
        return self.episode, self.settings.episodes

    def bar_postfix(self, record: dict[str, Any]) -> dict[str, Any]:
        return {"loss": f"{record['loss']:.3f}", "buffer": record["buffer_size"]}

    def finish(self) -> None:
        self.plot()

    def play_episode(self, number: int) -> dict[str, Any]:
        """One actual game with MCTS at every move, then one training step on a minibatch."""
        s, game = self.settings, self.game
        started = time.perf_counter()
        if s.starting_player == "alternate":
            starter = 1 if number % 2 == 1 else 2
        else:
            starter = self.rng.choice((1, 2))
        epsilon = s.epsilon_at(number - 1)
        rollouts = NetRollouts(
            game, self.net, epsilon=epsilon, sample=s.rollout_selection == "sample", seed=self.rng.randrange(2**31)
        )
        mcts = MCTS(game, self.tree_policy, rollouts, seed=self.rng.randrange(2**31))
        state = game.initial_state(starter)
        if self.display:
            self.display.show(game, state)
        moves, counts, movers = [], [], []
        search_games = 0
        search_seconds = 0.0
        while not game.is_final(state):
            t = time.perf_counter()
            root = mcts.search(state, search_games=s.search_games)
            search_seconds += time.perf_counter() - t
            search_games += mcts.last_search_games
            distribution = mcts.visit_distribution(root)
            mover = game.current_player(state)
            counts.append(mcts.targets(root))
            movers.append(mover)
            action = self.choose(distribution, len(moves))
            moves.append(int(action))
            mcts.advance(action)
            state = game.next_state(state, action)
            if self.display:
                self.display.show(game, state, action, mover)
        winner = game.winner(state)
        values = [game_result(winner, mover) for mover in movers]  # the episode's result for the player to move
        self.buffer.add(RecordedGame.from_targets(game.num_actions, starter, moves, counts, values, winner))
        x, pi, z = self.buffer.sample(s.minibatch, self.np_rng)
        stats = self.net.fit(x, pi, z, batch_size=min(len(x), 64), epochs=s.epochs)
        losses = {key: float(stats[key]) for key in ("loss", "accuracy", "policy_loss", "value_loss", "learning_rate")
                  if key in stats}
        return {
            "episode": number,
            "starting_player": starter,
            "winner": winner,
            "moves": moves,
            "epsilon": round(epsilon, 5),
            **losses,
            "buffer_size": len(self.buffer),
            "search_games_per_second": round(search_games / max(search_seconds, 1e-9)),
            "seconds": round(time.perf_counter() - started, 3),
        }

    def choose(self, distribution: np.ndarray, ply: int) -> int:
        """The actual move at ``ply`` (0: the first): the most visited (greedy) or drawn
        from the visits (sample, and every move of the first ``temperature_moves``)."""
        greedy = self.settings.move_selection == "greedy" and ply >= self.settings.temperature_moves
        return sample_action(distribution, 0.0 if greedy else 1.0, self.np_rng)

    def plot(self) -> None:
        records = self.run.read_metrics()
        if not records:
            return
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from hexzero.mctsfw.checkpoints import atomic_path

        episodes = [r["episode"] for r in records]
        fig, ax = plt.subplots(figsize=(7, 4))
        label = "cross-entropy loss (minibatch)" if "accuracy" in records[-1] else "loss: policy + value (minibatch)"
        ax.plot(episodes, [r["loss"] for r in records], label=label)
        if len(records) >= 10:
            window = max(5, len(records) // 20)
            smooth = np.convolve([r["loss"] for r in records], np.ones(window) / window, mode="valid")
            ax.plot(episodes[window - 1 :], smooth, label=f"mean of {window}")
        ax.set_xlabel("episode")
        ax.set_ylabel("loss")
        if all("accuracy" in r for r in records):
            ax2 = ax.twinx()
            ax2.plot(episodes, [r["accuracy"] for r in records], color="tab:green", alpha=0.4, label="accuracy")
            ax2.set_ylabel("top-1 accuracy vs. D")
            ax2.set_ylim(0, 1)
        elif all("value_loss" in r for r in records):
            ax.plot(episodes, [r["value_loss"] for r in records], alpha=0.6, label="value loss (minibatch)")
        ax.set_title(f"{self.game!r}, {self.net_name}")
        fig.legend(loc="upper right")
        fig.tight_layout()
        with atomic_path(self.run.plot_path) as tmp:
            fig.savefig(tmp, format="png")
        plt.close(fig)
