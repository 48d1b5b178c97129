"""The networks shipped under ``models/``, named by their folder (``connect4``, ``hex7``, ...).

Each folder holds one training run's networks, its ``config.toml`` and its reports; the
network a folder ships is its last ``.keras`` file by name (the highest generation or
episode). The benchmarks, scripts and tests ask here for it, so a network trained on
and shipped again needs no edit anywhere else.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"


def shipped_model(folder: str) -> Path:
    """The network ``models/FOLDER`` ships: its last ``.keras`` file by name."""
    nets = sorted((MODELS / folder).glob("*.keras"))
    if not nets:
        raise FileNotFoundError(f"{MODELS / folder}: no shipped network (.keras) there")
    return nets[-1]


def shipped_game(folder: str):
    """The game (with its settings) that the run of ``models/FOLDER/config.toml`` played."""
    from hexzero import mctsfw
    from hexzero.mctsfw.config import load_config

    return mctsfw.make_config_game(load_config(ROOT / "hexzero.toml", MODELS / folder / "config.toml"))


def shipped_folders() -> list[str]:
    """The folders of ``models/`` that ship a network with its run's config."""
    return [folder.name for folder in sorted(MODELS.iterdir())
            if any(folder.glob("*.keras")) and (folder / "config.toml").exists()]
