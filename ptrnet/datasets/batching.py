"""Padded batches of instances and target token sequences.

Instances of different sizes share one batch: points are zero-padded to the largest n and
``lengths`` records each row's real size. Targets use the model-token convention of
:mod:`ptrnet.tasks.base` (0 = end symbol, ``j >= 1`` = input ``j - 1``), end symbol included,
padded with :data:`IGNORE_INDEX` so ``F.cross_entropy(..., ignore_index=IGNORE_INDEX)`` skips the
pads (a common slip in public implementations: pads must be masked in the loss too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ptrnet.tasks.base import to_tokens

IGNORE_INDEX = -100


@dataclass(frozen=True)
class Batch:
    """A padded batch.

    Attributes:
        points: (B, n, dim) float32, rows zero-padded after their real length.
        lengths: (B,) long, real input count per row (>= 1).
        targets: (B, T) long model tokens incl. the final end token 0, padded with
            ``IGNORE_INDEX``; None for inference batches.
    """

    points: torch.Tensor
    lengths: torch.Tensor
    targets: torch.Tensor | None = None

    @property
    def size(self) -> int:
        """Number of rows B."""
        return self.points.shape[0]

    def to(self, device: torch.device | str) -> Batch:
        """The same batch on ``device``.

        Host-to-GPU copies go through pinned (page-locked) memory and do not block the host, so
        the next batch is prepared while the GPU copies and computes; other copies block (a
        non-blocking copy to the host could be read before it lands).
        """
        device = torch.device(device)
        pinned = device.type == "cuda" and self.points.device.type == "cpu"

        def move(tensor: torch.Tensor) -> torch.Tensor:
            source = tensor.pin_memory() if pinned else tensor
            return source.to(device, non_blocking=pinned)

        targets = None if self.targets is None else move(self.targets)
        return Batch(move(self.points), move(self.lengths), targets)


def _pad(
    rows: Sequence[np.ndarray], lengths: np.ndarray, fill: float | int, dtype: type
) -> np.ndarray:
    """Stack variable-length rows (each (len_b, ...)) into (B, max_len, ...) padded by ``fill``."""
    tail = rows[0].shape[1:]
    out = np.full((len(rows), int(lengths.max()), *tail), fill, dtype=dtype)
    real = np.arange(out.shape[1])[None, :] < lengths[:, None]  # (B, max_len)
    out[real] = np.concatenate(rows, axis=0)  # row-major fill matches concatenation order
    return out


def collate(
    points_list: Sequence[np.ndarray], seqs_list: Sequence[np.ndarray] | None = None
) -> Batch:
    """Pad instances (and optionally their 0-based target sequences) into one :class:`Batch`.

    Args:
        points_list: B arrays of shape (n_b, dim), n_b >= 1, one dim for all.
        seqs_list: B 0-based index sequences (see :mod:`ptrnet.tasks.base`), or None.

    Returns:
        A Batch with ``points`` (B, max n_b, dim) float32 and, if sequences were given,
        ``targets`` (B, max len_b + 1) long (the end token appended to each row).

    Raises:
        ValueError: on an empty batch, an empty instance, mixed dims, a count mismatch or a
            sequence index outside its instance.
    """
    if not points_list:
        raise ValueError("cannot collate an empty batch")
    arrays = [np.asarray(p, dtype=np.float32) for p in points_list]
    if any(a.ndim != 2 or a.shape[0] < 1 for a in arrays):
        raise ValueError("every instance must be a non-empty (n, dim) array")
    if len({a.shape[1] for a in arrays}) != 1:
        raise ValueError("all instances in a batch must have the same dim")
    lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    points = torch.from_numpy(_pad(arrays, lengths, 0.0, np.float32))
    if seqs_list is None:
        return Batch(points, torch.from_numpy(lengths))
    if len(seqs_list) != len(arrays):
        raise ValueError(f"{len(seqs_list)} sequences for {len(arrays)} instances")
    tokens = [to_tokens(s) for s in seqs_list]
    seq_lengths = np.array([t.shape[0] for t in tokens], dtype=np.int64)
    flat = np.concatenate([t[:-1] for t in tokens])  # tokens before each end symbol
    if np.any((flat < 1) | (flat > np.repeat(lengths, seq_lengths - 1))):
        raise ValueError("a target sequence points outside its instance")
    targets = torch.from_numpy(_pad(tokens, seq_lengths, IGNORE_INDEX, np.int64))
    return Batch(points, torch.from_numpy(lengths), targets)
