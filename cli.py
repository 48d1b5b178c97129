"""The ``hexzero`` command from a checkout: ``python cli.py ARGS`` is ``hexzero ARGS``
(the command itself is hexzero/cli.py)."""

import sys

from hexzero.cli import main

if __name__ == "__main__":
    sys.exit(main())
