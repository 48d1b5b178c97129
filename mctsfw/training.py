"""On-policy MCTS learning (the assignment's pseudocode), generic over game and network.

For each episode: play an actual game; before every actual move run MCTS from the
current state with the network as rollout policy (epsilon-greedy, the same network
for both players), add (state, visit distribution D) to the replay buffer, choose the
actual move from D and keep the subtree under it. After the episode, train the network
on a minibatch from the buffer. Every save interval cache the network (episode 0 =
untrained). After every episode the network, buffer and progress are committed to the
run directory, so a run killed at any moment resumes without repeating or losing an
episode.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import numpy as np

from mctsfw.config import plugin_params
from mctsfw.evaluators import NetRollouts
from mctsfw.hookspecs import hookimpl
from mctsfw.mcts import MCTS
from mctsfw.plugin_manager import Registries, default_registries
from mctsfw.replay import ReplayBuffer
from mctsfw.runs import RunDir, load_progress, save_progress
from mctsfw.schema import Section, SectionSettings, Setting


def _checkpoint_problems(config: dict, registries) -> list[str]:
    train = config["train"]
    if train["checkpoints"] > train["episodes"] + 1:
        return [f"train.checkpoints: must be at most episodes + 1 = {train['episodes'] + 1}, not {train['checkpoints']}"]
    return []


#: ``[train]``: on-policy MCTS learning (``cli.py train``)
TRAIN_SECTION = Section("train", "cli.py train: on-policy MCTS learning", [
    Setting("run_dir", "runs/hex5", "the run directory (relative to the current one); an unfinished run there is resumed",
            resumable=True),
    Setting("episodes", 200, "actual games played", low=1, resumable=True),
    Setting("search_games", 500, "MCTS search games (ANET rollouts) before every actual move", low=1),
    Setting("checkpoints", 5, "K cached networks, the first before episode 1 (untrained), the last at the end", low=2),
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
    Setting("rollout_selection", "greedy",
            'rollout moves off epsilon: the net\'s most probable ("greedy") or drawn from it ("sample")',
            choices=("greedy", "sample")),
    Setting("augment", True, "also train on the game's symmetric cases (Hex: the board turned 180 degrees)"),
    Setting("display", False, "draw the actual games while training", resumable=True),
    Setting("seed", 0, "random seed of the run; -1 = a new seed every run", low=-1),
], checks=[_checkpoint_problems])


@hookimpl
def mctsfw_config_sections():
    return [TRAIN_SECTION]


class TrainSettings(SectionSettings):
    """The ``[train]`` values as attributes (``settings.episodes``)."""

    section = TRAIN_SECTION

    def checkpoint_episodes(self) -> list[int]:
        """K episodes spread evenly from 0 (untrained) to the last one."""
        k = self.checkpoints
        return sorted({round(i * self.episodes / (k - 1)) for i in range(k)})

    def epsilon_at(self, episode: int) -> float:
        return max(self.epsilon_min, self.epsilon * self.epsilon_decay**episode)


class Trainer:
    """Runs (or resumes) the training run in ``run_dir`` for a validated config."""

    def __init__(self, config: dict, run_dir: str | Path, registries: Registries | None = None, progress: bool = True):
        self.config = config
        self.run = RunDir(run_dir)
        self.registries = registries or default_registries()
        self.settings = TrainSettings.from_config(config)
        self.progress = progress
        game_name, net_name = config["game"], config["net"]
        self.game = self.registries.games.get(game_name)(**plugin_params(config, "games", game_name))
        self.net_class = self.registries.nets.get(net_name)
        self.net_name = net_name
        self.tree_policy = self.registries.tree_policies.get(config["tree_policy"])(
            **plugin_params(config, "tree_policies", config["tree_policy"])
        )
        self.display = None
        if self.settings.display:
            self.display = self.registries.displays.get(config["display"])(delay=config["show"]["delay"])

    # ---- starting and resuming ---------------------------------------------------------------
    def _fresh(self) -> None:
        s = self.settings
        seed = s.seed if s.seed >= 0 else random.SystemRandom().randrange(2**31)
        self.seed = seed
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        params = plugin_params(self.config, "nets", self.net_name)
        params.setdefault("seed", seed)
        self.net = self.net_class(self.game, **params)
        x = self.game.encode(self.game.initial_state())
        self.buffer = ReplayBuffer(s.replay_size, len(x), self.game.num_actions)
        self.episode = 0
        self.run.write_config(self.config)
        self.run.keep_metrics_upto(0)
        self.run.checkpoints_dir.mkdir(parents=True, exist_ok=True)
        self._save_checkpoint()  # episode 0: the untrained network
        self._commit()

    def _resume(self, episode: int, directory: Path) -> None:
        progress, self.rng, self.np_rng = load_progress(directory)
        self.seed = progress["seed"]
        self.net = self.net_class.load(directory / "net.keras", self.game)
        self.buffer = ReplayBuffer.load(directory / "replay.npz")
        self.episode = episode
        self.run.keep_metrics_upto(episode)

    def _commit(self) -> None:
        def write(directory: Path) -> None:
            self.net.save(directory / "net.keras")
            self.buffer.save(directory / "replay.npz")
            save_progress(directory, {"episode": self.episode, "seed": self.seed}, self.rng, self.np_rng)

        self.run.commit(self.episode, write)

    def _save_checkpoint(self) -> None:
        self.net.save(self.run.checkpoint_path(self.net_name, self.episode))

    # ---- the loop ----------------------------------------------------------------------------------
    def train(self) -> dict[str, Any]:
        """Run the episodes that are left; return a summary of the run."""
        latest = self.run.latest()
        if latest is None:
            self._fresh()
        else:
            self._resume(*latest)
        s = self.settings
        checkpoint_at = set(s.checkpoint_episodes())
        started = time.perf_counter()
        first = self.episode
        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=s.episodes, initial=self.episode, unit="episode", dynamic_ncols=True)
        try:
            while self.episode < s.episodes:
                record = self.play_episode(self.episode + 1)
                self.episode += 1
                if self.episode in checkpoint_at:
                    self._save_checkpoint()
                    self.plot()
                self.run.append_metrics(record)
                self._commit()
                if bar:
                    bar.update(1)
                    bar.set_postfix(loss=f"{record['loss']:.3f}", buffer=record["buffer_size"])
        finally:
            if bar:
                bar.close()
        self.plot()
        return {
            "run_dir": str(self.run.path),
            "episodes": self.episode,
            "this_time": self.episode - first,
            "seconds": time.perf_counter() - started,
            "checkpoints": [str(p) for _, p in self.run.checkpoints()],
        }

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
        moves = 0
        search_games = 0
        search_seconds = 0.0
        while not game.is_final(state):
            t = time.perf_counter()
            root = mcts.search(state, search_games=s.search_games)
            search_seconds += time.perf_counter() - t
            search_games += mcts.last_search_games
            distribution = mcts.visit_distribution(root)
            cases = game.symmetries(game.encode(state), distribution) if s.augment else [(game.encode(state), distribution)]
            for x, target in cases:
                self.buffer.add(x, target)
            action = self.choose(distribution)
            mcts.advance(action)
            mover = game.current_player(state)
            state = game.next_state(state, action)
            moves += 1
            if self.display:
                self.display.show(game, state, action, mover)
        x, y = self.buffer.sample(s.minibatch, self.np_rng)
        stats = self.net.fit(x, y, batch_size=min(len(x), 64), epochs=s.epochs)
        return {
            "episode": number,
            "starting_player": starter,
            "winner": game.winner(state),
            "moves": moves,
            "epsilon": round(epsilon, 5),
            "loss": float(stats["loss"]),
            "accuracy": float(stats.get("accuracy", float("nan"))),
            "buffer_size": len(self.buffer),
            "search_games_per_second": round(search_games / max(search_seconds, 1e-9)),
            "seconds": round(time.perf_counter() - started, 3),
        }

    def choose(self, distribution: np.ndarray) -> int:
        if self.settings.move_selection == "greedy":
            return int(np.argmax(distribution))
        return int(self.np_rng.choice(len(distribution), p=distribution / distribution.sum()))

    def plot(self) -> None:
        records = self.run.read_metrics()
        if not records:
            return
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from mctsfw.checkpoints import atomic_path

        episodes = [r["episode"] for r in records]
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.plot(episodes, [r["loss"] for r in records], label="cross-entropy loss (minibatch)")
        if len(records) >= 10:
            window = max(5, len(records) // 20)
            smooth = np.convolve([r["loss"] for r in records], np.ones(window) / window, mode="valid")
            ax.plot(episodes[window - 1 :], smooth, label=f"mean of {window}")
        ax.set_xlabel("episode")
        ax.set_ylabel("loss")
        ax2 = ax.twinx()
        ax2.plot(episodes, [r["accuracy"] for r in records], color="tab:green", alpha=0.4, label="accuracy")
        ax2.set_ylabel("top-1 accuracy vs. D")
        ax2.set_ylim(0, 1)
        ax.set_title(f"{self.game!r}, {self.net_name}")
        fig.legend(loc="upper right")
        fig.tight_layout()
        with atomic_path(self.run.plot_path) as tmp:
            fig.savefig(tmp, format="png")
        plt.close(fig)
