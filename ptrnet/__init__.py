"""ptrnet: Pointer Networks (Vinyals, Fortunato & Jaitly, NeurIPS 2015) done right.

Importing the package is cheap: numpy only. scipy, shapely and torch load where they are used.
"""

__version__ = "0.1.0"
