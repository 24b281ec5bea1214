"""The decoder interface: what the one search loop (:func:`ptrnet.decoding.search.run_search`)
asks of a model, whatever its outputs are.

A :class:`Decoder` is built for one batch and has encoded it once, each instance already laid
out as the rows the strategy searches (``width`` consecutive rows per instance, instance-major:
beams or samples). From then on the loop only steps: it hands the decoder its state and gets
back the log-probabilities of every row's next output. Greedy decoding, sampling and beam
search (:mod:`ptrnet.decoding.strategies`, :mod:`ptrnet.decoding.beam`) choose tokens from those
and nothing else, so every model decodes with the same strategies, as rl4co serves every policy
from one decoding module.

Two adapters implement it: :class:`ptrnet.decoding.pointer_decoder.PointerDecoder` for the
pointer models (outputs are the end symbol or an input; the task's rules mask them), and
:class:`ptrnet.text.decoder.SentenceDecoder` for the pointer-generator (outputs are the words
of a sentence's extended vocabulary).
"""

from __future__ import annotations

from typing import Protocol, TypeVar

import torch

S = TypeVar("S")


class Decoder(Protocol[S]):
    """One batch's decoding, R rows, through a state of type ``S`` the decoder alone reads.

    Contract:

    * :meth:`step` returns (R, V) float32 log-probabilities over the V possible next outputs of
      every row, ``-inf`` at the outputs a row may not give; every row has at least one finite
      entry. A finished row (:meth:`finished`) allows exactly one output, its filler (the end
      symbol again, or padding), at log-probability 0, so it carries its score unchanged.
      Whether a row's entries sum to 1 is the decoder's choice: a strategy adds the chosen
      entry to the row's score as it is.
    * :meth:`reorder` re-selects rows after a strategy chose parents (beam search): row r
      continues row ``rows[r]``, always a row of the same instance, so what the decoder encoded
      once need not move.
    * :meth:`advance` feeds the chosen output of every row (R,) into the state.
    * :meth:`finished` says which rows need no more outputs; the loop stops when all do.

    States are values: every method returns a new state and leaves its argument unchanged.
    """

    def start(self) -> S:
        """The state before the first output."""
        ...

    def step(self, state: S) -> tuple[torch.Tensor, S]:
        """-> (R, V) log-probabilities of the next outputs, and the state with the model's
        step taken (not yet fed an output)."""
        ...

    def reorder(self, state: S, rows: torch.Tensor) -> S:
        """The state of rows ``rows`` (R,) long, in that order."""
        ...

    def advance(self, state: S, token: torch.Tensor) -> S:
        """The state after every row gave output ``token`` (R,) long."""
        ...

    def finished(self, state: S) -> torch.Tensor:
        """(R,) bool: the rows that only repeat their filler from now on."""
        ...
