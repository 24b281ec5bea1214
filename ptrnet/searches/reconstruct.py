"""Random Re-Construct (RRC): a tour improved by letting a heavy-decoder model rebuild its pieces.

Luo et al. 2023 (LEHD, "Neural Combinatorial Optimization with Heavy Decoder", Sec. 4.3) improve
a constructed tour by repeatedly taking a random segment ``a, s_1, ..., s_k, b`` of it and asking
the model for a new path from ``a`` through the ``s_i`` to ``b``; the new path replaces the old
one when it is shorter. The heavy decoder (:mod:`ptrnet.model.heavy`) is made for this: its state
is "the first and the last chosen input and what remains", so a path from ``a`` to ``b`` is a
tour started at ``b`` whose last chosen input is ``a``, with the ``s_i`` remaining.

Here each iteration draws one segment length ``L`` and one offset for every row and cuts the
whole tour into ``n // L`` consecutive segments of ``L`` cities (the rest stays as it is), so one
batched pass rebuilds all of them at once: each iteration reworks the whole tour, not one piece.
Each segment is rescaled to fill the unit square, as the training instances did, and decoded by
the model that the folder routes ``L`` cities to (:meth:`ptrnet.inference.LoadedModel.for_size`
picks it; here a ``model_for(L)`` callable). A segment is kept only if it shortens the tour, so
the tour length never grows. This is a search with the tour length in the loop, reported apart
from the model-only decodings.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ptrnet.model.heavy import HeavyPointer
from ptrnet.model.light import LightPointer

PathModel = HeavyPointer | LightPointer

MIN_SEGMENT = 4  # a, b and at least two cities between them: fewer has one path only


def tour_lengths(points: torch.Tensor, tours: torch.Tensor) -> torch.Tensor:
    """Closed tour lengths: points (B, n, 2), tours (B, n) long (a permutation each) -> (B,)."""
    ordered = points.gather(1, tours[..., None].expand(-1, -1, points.shape[2]))  # (B, n, 2)
    return (ordered - ordered.roll(-1, dims=1)).norm(dim=2).sum(dim=1)


def path_lengths(coords: torch.Tensor) -> torch.Tensor:
    """Open path lengths: coords (R, L, 2) in path order -> (R,)."""
    return (coords[:, 1:] - coords[:, :-1]).norm(dim=2).sum(dim=1)


def matrix_path_lengths(
    distances: torch.Tensor, owner: torch.Tensor, cities: torch.Tensor
) -> torch.Tensor:
    """Open path lengths on distance matrices: distances (B, n, n), owner (R, 1) the instance
    of each row, cities (R, L) in path order -> (R,)."""
    return distances[owner, cities[:, :-1], cities[:, 1:]].sum(dim=1)


def fill_unit_square(coords: torch.Tensor) -> torch.Tensor:
    """(R, L, 2) -> the same shapes shifted and scaled (one factor for both axes) into [0, 1]^2
    per row; a row without extent stays at the origin."""
    low = coords.amin(dim=1, keepdim=True)  # (R, 1, 2)
    extent = (coords.amax(dim=1, keepdim=True) - low).amax(dim=2, keepdim=True)  # (R, 1, 1)
    return (coords - low) / extent.clamp(min=torch.finfo(coords.dtype).tiny)


@torch.inference_mode()
def rebuild_paths(model: PathModel, coords: torch.Tensor) -> torch.Tensor:
    """The model's greedy path from the first to the last city of each row through the others.

    The path is decoded through the model's own ``encode`` / ``step``, as a tour that started
    at the last city and has just chosen the first: the state's first token is b, its last a,
    the cities between remain; the end token is never taken.

    Args:
        model: a heavy- or light-decoder pointer model on 2-d points (their state is the chosen
            set and the first token: :func:`ptrnet.model.heavy.advance`).
        coords: (R, L, 2) float, L >= 3, each row a segment in the model's frame (unit square).

    Returns:
        (R, L) long: a permutation of 0..L-1 per row that starts at 0 and ends at L-1.
    """
    rows, length, _ = coords.shape
    device = coords.device
    lengths = torch.full((rows,), length, dtype=torch.long, device=device)
    memory = model.encode(coords.to(next(model.parameters()).dtype), lengths)
    chosen = torch.zeros(1, rows, length + 1, dtype=torch.bool, device=device)  # tokens 0..L
    chosen[0, :, length] = True  # token L = city L-1 (b), where the "tour" started
    first = torch.full((1, rows), length, dtype=torch.long, device=device)
    state = (chosen, first)
    last = torch.ones(rows, dtype=torch.long, device=device)  # token 1 = city 0 (a)
    path = [last - 1]
    for _ in range(length - 2):
        logits, state = model.step(memory, last, state)  # (R, L+1)
        logits[:, 0] = float("-inf")  # never the end token: every city must be placed
        last = logits.argmax(dim=1)  # (R,)
        path.append(last - 1)
    path.append(first[0] - 1)
    return torch.stack(path, dim=1)  # (R, L)


def improve_tours(
    model_for: Callable[[int], PathModel],
    points: torch.Tensor,
    tours: torch.Tensor,
    iterations: int,
    generator: torch.Generator,
    max_segment: int = 100,
    distances: torch.Tensor | None = None,
) -> torch.Tensor:
    """RRC (module docstring) on a batch of instances of one size.

    Args:
        model_for: the heavy- or light-decoder model to rebuild segments of a given length
            with.
        points: (B, n, 2) float, the instances in the model's frame (the unit square).
        tours: (B, n) long, a permutation of 0..n-1 per row (the closing return implied).
        iterations: rounds of rebuilding; 0 returns ``tours`` unchanged.
        generator: the only source of randomness (segment lengths and offsets): the same
            generator state gives the same result.
        max_segment: the longest segment drawn (cities, both ends included).
        distances: (B, n, n) the lengths a rebuilt segment must shorten (great-circle km for
            cities on the sphere, whose ``points`` are then their projection); None: the
            Euclidean lengths of ``points``.

    Returns:
        (B, n) long: tours no longer than the given ones, each still a permutation.

    Raises:
        ValueError: shapes that disagree, or a row of ``tours`` that is not a permutation.
    """
    batch, n, _ = points.shape
    if tours.shape != (batch, n):
        raise ValueError(f"tours must be (B, n) = {(batch, n)}, got {tuple(tours.shape)}")
    device = tours.device
    if not torch.equal(tours.sort(dim=1).values, torch.arange(n, device=device).expand(batch, n)):
        raise ValueError("every row of tours must be a permutation of 0..n-1")
    longest = min(n, max_segment)
    if n < MIN_SEGMENT or iterations <= 0:
        return tours.clone()
    tours = tours.clone()
    rows = torch.arange(batch, device=device)[:, None, None]  # (B, 1, 1)
    cities = torch.arange(n, device=device)
    for _ in range(iterations):
        length = int(torch.randint(MIN_SEGMENT, longest + 1, (1,), generator=generator))
        offsets = torch.randint(0, n, (batch,), generator=generator).to(device)  # (B,)
        pieces = n // length
        turned = tours.gather(1, (cities + offsets[:, None]) % n)  # (B, n)
        segments = turned[:, : pieces * length].reshape(batch, pieces, length)  # (B, k, L)
        coords = points[rows, segments]  # (B, k, L, 2)
        flat = coords.view(batch * pieces, length, 2)  # (R, L, 2)
        order = rebuild_paths(model_for(length), fill_unit_square(flat))  # (R, L)
        old = segments.reshape(-1, length)  # (R, L) city ids
        new = old.gather(1, order)  # (R, L)
        if distances is None:
            rebuilt = flat.gather(1, order[..., None].expand(-1, -1, 2))  # (R, L, 2)
            better = path_lengths(rebuilt) < path_lengths(flat) - 1e-9  # (R,)
        else:
            owner = rows.expand(-1, pieces, 1).reshape(-1, 1)  # (R, 1) instance of each row
            before = matrix_path_lengths(distances, owner, old)  # (R,)
            better = matrix_path_lengths(distances, owner, new) < before * (1 - 1e-12)
        kept = torch.where(better[:, None], new, old)
        turned[:, : pieces * length] = kept.view(batch, pieces * length)
        tours = turned.gather(1, (cities - offsets[:, None]) % n)
    return tours
