import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as mctsfw sets it, in case numpy loads first

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the tests run from a checkout whether or not it is installed
    sys.path.insert(0, str(ROOT))
