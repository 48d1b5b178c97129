"""``python -m hexzero ARGS`` is the ``hexzero`` command."""

import sys

from hexzero.cli import main

if __name__ == "__main__":
    sys.exit(main())
