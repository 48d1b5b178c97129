import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as mctsfw sets it, in case numpy loads first

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the tests run from a checkout whether or not it is installed
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

import mctsfw  # noqa: E402


@pytest.fixture(scope="module")
def hex3():
    return mctsfw.make_game("hex", size=3)


@pytest.fixture(scope="module")
def hex4():
    return mctsfw.make_game("hex", size=4)
