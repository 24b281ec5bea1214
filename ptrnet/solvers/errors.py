"""Errors the reference solvers raise (re-exported by :mod:`ptrnet.tasks`)."""


class DegenerateInstanceError(ValueError):
    """Raised when an instance has no well-defined reference solution (e.g. all collinear)."""


class SearchBoundError(ValueError):
    """Raised when an exact solver reaches its stated bound on work before it has proved an
    answer optimal; ``solver`` names the task's solver that answers such instances within a
    stated distance of the optimum."""

    def __init__(self, message: str, solver: str) -> None:
        super().__init__(message)
        self.solver = solver
