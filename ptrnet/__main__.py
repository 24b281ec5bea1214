"""``python -m ptrnet``: the ``ptrnet`` command, also as ``torchrun -m ptrnet train ...``."""

import sys

from ptrnet.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
