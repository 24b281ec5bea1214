"""The paper's reported numbers (Vinyals et al. 2015, Tables 1-2 and Sec. 4.3), for comparison.

Each task holds its own (``Task.paper_results``); this module reads them by task name. Rates are
fractions in [0, 1]; TSP entries are mean closed-tour lengths. Keys are ``(task, model, n)``
with ``model`` naming what the paper trained: ``"ptr 5-50"`` is the one hull Ptr-Net trained on
n = 5..50, ``"ptr 5-20"`` the one TSP Ptr-Net trained on n = 5..20, ``"ptr n"`` a Ptr-Net
trained at the tested n.
"""

from __future__ import annotations

from ptrnet.tasks import POINT_TASKS, get_point_task

PAPER_RESULTS: dict[tuple[str, str, int], dict[str, float]] = {
    (name, model, n): dict(values)
    for name, task in POINT_TASKS.items()
    for (model, n), values in task.paper_results.items()
}


def paper_result(task: str, model: str, n: int) -> dict[str, float]:
    """The paper's numbers for ``(task, model, n)``; empty when the paper reports none."""
    return dict(get_point_task(task).paper_results.get((model, n), {}))
