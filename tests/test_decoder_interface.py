"""The one search loop (:func:`ptrnet.decoding.search.run_search`) over the decoder interface
(:mod:`ptrnet.decoding.decoder`), with a decoder that is a fixed table of next-token
probabilities: greedy follows the table's argmax, beam search as wide as every sequence finds
the most likely one found by enumeration, sampling draws the table's frequencies."""

import itertools
import math

import pytest
import torch

from ptrnet.decoding.beam import pick_beams
from ptrnet.decoding.decoder import Decoder
from ptrnet.decoding.search import run_search
from ptrnet.decoding.strategies.beam import BeamSearch
from ptrnet.decoding.strategies.greedy import Greedy
from ptrnet.decoding.strategies.sampling import Sampling

torch.set_num_threads(1)

END, START, STEPS = 0, 4, 3
# P(next | previous) over tokens 0 (end) .. 3; row 4 is the start. Greedy takes 1 then ends
# (.5 * .4 = .2), while 2 -> 3 -> end scores .45 * .9 * .9 = .3645.
TABLE = torch.tensor(
    [
        [1.0, 0.0, 0.0, 0.0],
        [0.4, 0.3, 0.0, 0.3],
        [0.05, 0.05, 0.0, 0.9],
        [0.9, 0.05, 0.05, 0.0],
        [0.0, 0.5, 0.45, 0.05],
    ]
)


class TableDecoder:
    """Rows that read TABLE; state = (previous (R,), done (R,))."""

    def __init__(self, rows: int) -> None:
        self.rows = rows

    def start(self):
        return torch.full((self.rows,), START), torch.zeros(self.rows, dtype=torch.bool)

    def step(self, state):
        previous, done = state
        logp = TABLE[previous].log()  # (R, 4)
        filler = torch.tensor([0.0, -math.inf, -math.inf, -math.inf])
        return torch.where(done[:, None], filler, logp), state

    def reorder(self, state, rows):
        return state[0][rows], state[1][rows]

    def advance(self, state, token):
        return token, state[1] | (token == END)

    def finished(self, state):
        return state[1]


def _log_prob(sequence) -> float:
    """log P(sequence) under TABLE, in float64 (-inf for an impossible one)."""
    previous, total = START, 0.0
    for token in sequence:
        p = float(TABLE[previous, token])
        total += math.log(p) if p > 0 else -math.inf
        previous = token
    return total


def test_the_table_decoder_is_a_decoder():
    decoder: Decoder = TableDecoder(1)
    assert decoder.finished(decoder.start()).tolist() == [False]


def test_greedy_follows_the_argmax():
    found = run_search(TableDecoder(2), STEPS, Greedy())
    assert found.tokens.tolist() == [[1, 0], [1, 0]]
    assert found.scores.tolist() == pytest.approx([_log_prob([1, 0])] * 2, abs=1e-6)


def test_a_beam_as_wide_as_every_sequence_finds_the_most_likely():
    """Every prefix of at most STEPS - 1 tokens fits 16 beams, so none is dropped."""
    ended = [
        (*body, END) for size in range(STEPS) for body in itertools.product((1, 2, 3), repeat=size)
    ]
    best = max(ended, key=_log_prob)
    assert best == (2, 3, END)
    width = 16
    found = run_search(TableDecoder(width), STEPS, BeamSearch(1, width))
    keep = pick_beams(found.scores, found.tokens, found.state[1], width)
    assert tuple(found.tokens[keep[0]].tolist()) == best
    assert float(found.scores[keep[0]]) == pytest.approx(_log_prob(best), abs=1e-6)


def test_sampling_draws_the_table():
    rows = 20_000
    generator = torch.Generator().manual_seed(0)
    found = run_search(TableDecoder(rows), 1, Sampling(1.0, generator))
    share = torch.bincount(found.tokens[:, 0], minlength=4).float() / rows
    assert torch.allclose(share, TABLE[START], atol=0.015)
