"""Errors the reference solvers raise (re-exported by :mod:`ptrnet.tasks`)."""


class DegenerateInstanceError(ValueError):
    """Raised when an instance has no well-defined reference solution (e.g. all collinear)."""
