"""What a network reads of its instance rows: the rows themselves, or features computed from them.

* ``raw`` (the paper's and every bundled model before this option): the rows as given,
  ``input_dim`` numbers each.
* ``capacity``: rows (weight, value, capacity), a knapsack instance that states its capacity
  (:mod:`ptrnet.tasks.knapsack`). The network reads two numbers per item, weight / capacity and
  value / the instance's largest value: the capacity enters every item's features, and neither
  the unit of weight nor that of value changes what it reads (an instance and its rescaled copy
  have one optimal set).
* ``demand``: rows (x, y, demand, capacity) of a routing instance whose first row is its depot
  (demand 0; vehicle routing, :mod:`ptrnet.tasks.cvrp`). The network reads four numbers per
  input: x, y, demand / capacity, and 1 for the depot (0 for a customer): every customer's
  demand as the share of a vehicle it fills, the depot told apart.

Shapes: ``B`` batch, ``n`` inputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch loads where a network reads rows; the CLI imports the names above
    import torch

FEATURES = ("raw", "capacity", "demand")
#: Rows each feature set reads (None: any).
ROW_WIDTH = {"raw": None, "capacity": 3, "demand": 4}


def feature_dim(features: str, input_dim: int) -> int:
    """Numbers per input element the network itself reads, for rows of ``input_dim``."""
    return input_dim - 1 if features == "capacity" else input_dim


def model_inputs(points: torch.Tensor, features: str) -> torch.Tensor:
    """(B, n, input_dim) rows, zero-padded -> (B, n, feature_dim) what the network reads.

    ``capacity``: (B, n, 3) rows (weight, value, capacity) -> (B, n, 2) (weight / capacity,
    value / the row's largest value); padding (capacity 0) and an instance worth nothing read
    0, never NaN.
    """
    if features == "raw":
        return points
    import torch  # here, not at the top: `ptrnet --help` must not load torch

    if features == "demand":
        return depot_and_demands(points)

    weight, value, cap = points.unbind(-1)  # (B, n) each
    top = value.amax(dim=1, keepdim=True)  # (B, 1): padding is 0, values are >= 0
    relative = torch.where(cap > 0, weight / cap.clamp(min=torch.finfo(cap.dtype).tiny), 0)
    scaled = torch.where(top > 0, value / top.clamp(min=torch.finfo(top.dtype).tiny), 0)
    return torch.stack([relative, scaled], dim=-1)


def depot_and_demands(points: torch.Tensor) -> torch.Tensor:
    """``demand``: (B, n, 4) rows (x, y, demand, capacity), the depot first -> (B, n, 4)
    (x, y, demand / capacity, 1 at the depot); padding (capacity 0) reads demand 0, never NaN."""
    import torch

    x, y, demand, cap = points.unbind(-1)  # (B, n) each
    share = torch.where(cap > 0, demand / cap.clamp(min=torch.finfo(cap.dtype).tiny), 0)
    depot = torch.zeros_like(x)
    depot[:, :1] = 1
    return torch.stack([x, y, share, depot], dim=-1)
