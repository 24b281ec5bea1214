"""The released data the tests use: the copies shipped inside the package (``ptrnet/data``)."""

from ptrnet.data import PAPER_DIR, TSPLIB_DIR

PAPER_DATA = PAPER_DIR
TSPLIB = TSPLIB_DIR
