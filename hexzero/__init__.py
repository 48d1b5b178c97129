"""hexzero: a plugin-based, multi-game MCTS framework that trains Keras game-playing networks.

Everything installs under this one name (``pip install .`` adds ``hexzero`` and nothing else
to site-packages): ``hexzero.mctsfw`` (the core), ``hexzero.games``, ``hexzero.nets``,
``hexzero.plugins`` and ``hexzero.cli`` (the ``hexzero`` command). In a checkout the first
four keep their own folders at the top of the repository (``mctsfw/``, ``games/``, ...), and
this package reaches them from there, so ``python cli.py`` runs with nothing installed.
"""

from pathlib import Path

_here = Path(__file__).resolve().parent
if not (_here / "mctsfw").is_dir():  # a checkout: the subpackages are the repository's folders
    __path__.append(str(_here.parent))
