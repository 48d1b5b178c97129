"""The search: Monte Carlo Tree Search over any ``Game``, on one of two trees.

- ``nodes``: the object tree (a ``Node`` a position reached) and what reads it;
- ``policy``: what a tree policy is (``TreePolicy``; UCT, PUCT, RAVE, Gumbel are plugins);
- ``object_search``: the search loop on the object tree (``MCTS``), for any game and policy;
- ``arrays``: the tree of a lock-step group of games as preallocated arrays, and its
  compiled phases (selection, expansion, backup, proofs, tree reuse);
- ``kernels``: what a game gives the array tree (``GameKernels``: its rules compiled);
- ``array_search``: the search loop on the array tree (``ArrayMCTS``), and
  ``make_search``, which picks the array tree wherever it can run.
"""

from hexzero.mctsfw.search.nodes import NOTHING_PLAYED, TARGET_SCALE, Node, SearchProgress, best_child, target_counts
from hexzero.mctsfw.search.policy import NEW, TreePolicy, pairing_problem, search_problem
from hexzero.mctsfw.search.object_search import MCTS, budget_problem, paused_gc, search_together
from hexzero.mctsfw.search.array_search import ArrayMCTS, array_problem, make_search, share_tree

__all__ = ["NOTHING_PLAYED", "TARGET_SCALE", "Node", "SearchProgress", "best_child", "target_counts", "NEW",
           "TreePolicy", "pairing_problem", "search_problem", "MCTS", "budget_problem", "paused_gc",
           "search_together", "ArrayMCTS", "array_problem", "make_search", "share_tree"]
