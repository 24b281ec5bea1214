"""Padded tensors for the pointer-generator from token sequences (the only place the copy task's
words become tensors)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ptrnet.text.vocab import PAD_ID, START_ID, Encoded, Vocabulary


@dataclass(frozen=True)
class Batch:
    """B sources (and optionally targets) ready for the model.

    Attributes:
        vocab: the vocabulary the ids are in (it turns decoded ids back into words).
        encoded: each source's :class:`~ptrnet.text.vocab.Encoded` form (words, oovs).
        ids: (B, n) fixed ids of source + END, ``PAD_ID`` past each length.
        extended: (B, n) extended ids, ``PAD_ID`` past each length.
        lengths: (B,) source lengths including END.
        extra: X, the most out-of-vocabulary words of any source (extended ids < V + X).
        targets: (B, T) target ids + END, ``PAD_ID`` after it, or None.
        previous: (B, T) the decoder inputs for teacher forcing: START then targets[:, :-1].
    """

    vocab: Vocabulary
    encoded: tuple[Encoded, ...]
    ids: torch.Tensor
    extended: torch.Tensor
    lengths: torch.Tensor
    extra: int
    targets: torch.Tensor | None = None
    previous: torch.Tensor | None = None

    @property
    def size(self) -> int:
        """B, the number of sources (what the training loop counts as examples)."""
        return int(self.ids.shape[0])


def _pad(rows: Sequence[Sequence[int]]) -> torch.Tensor:
    """Rows of ids -> (len(rows), longest) int64, ``PAD_ID`` after each row."""
    out = torch.full((len(rows), max(len(r) for r in rows)), PAD_ID, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    return out


def make_batch(
    vocab: Vocabulary,
    sources: Sequence[Sequence[str]],
    targets: Sequence[Sequence[str]] | None = None,
    copy: bool = True,
) -> Batch:
    """Encode ``sources`` (and ``targets``) into a :class:`Batch`.

    ``copy`` False maps out-of-vocabulary target words to ``<unk>`` (the seq2seq's targets);
    True gives them their source's extended id when the source contains them.

    Raises:
        ValueError: no sources, or a different number of targets.
    """
    if not sources:
        raise ValueError("a batch needs at least one source")
    encoded = tuple(vocab.encode_source(s) for s in sources)
    batch = {
        "vocab": vocab,
        "encoded": encoded,
        "ids": _pad([e.ids for e in encoded]),
        "extended": _pad([e.extended for e in encoded]),
        "lengths": torch.tensor([len(e.ids) for e in encoded]),
        "extra": max(len(e.oovs) for e in encoded),
    }
    if targets is not None:
        if len(targets) != len(sources):
            raise ValueError(f"{len(sources)} sources but {len(targets)} targets")
        rows = [vocab.encode_target(t, e.oovs, copy) for t, e in zip(targets, encoded, strict=True)]
        batch["targets"] = _pad(rows)
        start = torch.full((len(rows), 1), START_ID, dtype=torch.long)
        batch["previous"] = torch.cat([start, batch["targets"][:, :-1]], dim=1)
    return Batch(**batch)
