"""Decoding the pointer-generator through the search every model shares
(:func:`ptrnet.decoding.search.run_search`, every strategy of :mod:`ptrnet.decoding.strategies`,
chosen by the :class:`~ptrnet.decoding.options.DecodeOptions` the point tasks take, with one
bound of the sentence decoders' own: :func:`check_sentence_options`), and :func:`explain`,
which returns every quantity of the mixture for one sentence (what a teaching panel draws),
optionally with p_gen overridden to show what each path alone would output.

What is the copy task's own is its decoder (:class:`ptrnet.text.decoder.SentenceDecoder`: the
mixture over a sentence's extended vocabulary, the ids a row may output) and the words
(:class:`Decoded`).

Every function takes ``p_gen``: None uses the model's own switch (or its config's fixed value); a
number in [0, 1] replaces it at every step (1 = vocabulary only, 0 = copy only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ptrnet.decoding.beam import pick_beams
from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.search import DecodingError, run_search
from ptrnet.decoding.strategies import chooser
from ptrnet.decoding.strategies.greedy import Greedy
from ptrnet.io.limits import MAX_DECODE_TOKENS, MAX_LINE_TOKENS, MAX_SENTENCE_BEAM_WIDTH
from ptrnet.model.pointer_generator import PointerGenerator
from ptrnet.text.batch import Batch, make_batch
from ptrnet.text.decoder import SentenceDecoder
from ptrnet.text.vocab import END_ID, START_ID, Vocabulary

MAX_STEPS = 30  # headlines of the copy task have at most 9 words + END


@dataclass(frozen=True)
class Decoded:
    """One decoded output: its words (without END), extended ids, the p_gen used at each word's
    step, and the sequence's log-probability (END included)."""

    words: tuple[str, ...]
    ids: tuple[int, ...]
    p_gen: tuple[float, ...]
    log_prob: float


@torch.no_grad()
def decode_batch(
    model: PointerGenerator,
    batch: Batch,
    options: DecodeOptions | None = None,
    p_gen: float | None = None,
    max_steps: int = MAX_STEPS,
    generator: torch.Generator | None = None,
) -> list[Decoded]:
    """Decode every source of ``batch`` with ``options.strategy`` (None: greedy) in
    ``options.width`` rows per source (beams, samples drawn with ``generator``); of several
    outputs per source the most likely is kept (sum of log-probabilities, no length
    normalisation), so beam width 1 is greedy.

    Raises:
        DecodingError: a source whose model scores are not finite numbers, named by its index
            in ``batch``.
    """
    options = options or DecodeOptions()
    width = options.width
    choose = chooser(options, len(batch.encoded), generator)
    try:
        found = run_search(SentenceDecoder(model, batch, width, p_gen), max_steps, choose)
    except DecodingError as err:  # rows of one source are consecutive
        raise err.renumbered(err.instance // width) from None
    keep = pick_beams(found.scores, found.tokens, found.state.done, width)  # (B,)
    return _results(batch, found.tokens[keep], found.state.gates[keep], found.scores[keep])


def check_sentence_options(options: DecodeOptions, who: str = "a sentence decoder") -> None:
    """Raise DecodeOptionError, naming the strategy's width option, when one source's rows
    (``options.width``: beams, samples) pass :data:`~ptrnet.io.limits.MAX_SENTENCE_BEAM_WIDTH`,
    the most a line at the token limit fits one decoding batch with; ``who`` starts the
    message (``task copy takes at most 131 beams (...)``)."""
    options.check_width(
        MAX_SENTENCE_BEAM_WIDTH,
        who,
        f"a line of {MAX_LINE_TOKENS:,} tokens with them fills one decoding batch",
    )


def _results(
    batch: Batch, tokens: torch.Tensor, gates: torch.Tensor, log_prob: torch.Tensor
) -> list[Decoded]:
    """Rows of extended ids (B, T) -> one :class:`Decoded` per source, cut at END."""
    out = []
    for row, encoded in enumerate(batch.encoded):
        ids = tokens[row].tolist()
        size = ids.index(END_ID) if END_ID in ids else len(ids)
        words = batch.vocab.decode(ids[:size], encoded.oovs)
        gate = tuple(gates[row, :size].tolist())
        out.append(Decoded(words, tuple(ids[:size]), gate, float(log_prob[row])))
    return out


def decode_sources(
    model: PointerGenerator,
    vocab: Vocabulary,
    sources: Sequence[Sequence[str]],
    options: DecodeOptions | None = None,
    p_gen: float | None = None,
) -> list[Decoded]:
    """Decode every source (token sequences) as ``options`` say (None: greedy), in batches of
    at most ``options.batch_size`` sources and :data:`~ptrnet.io.limits.MAX_DECODE_TOKENS`
    tokens x rows (:func:`token_batches`), so memory follows the batch, not the number of
    sources. A strategy that draws (``sample``: ``samples`` outputs per source, the most
    likely kept) draws from one generator seeded with ``options.seed``, so a seed gives the
    same outputs for the same batches.

    Raises:
        DecodeOptionError: more rows per source than :func:`check_sentence_options` allows.
        ValueError: a source that does not fit a batch alone (longer than
            :data:`~ptrnet.io.limits.MAX_LINE_TOKENS`, which the readers refuse).
        DecodingError: a source whose model scores are not finite numbers, named by its index
            in ``sources``.
    """
    options = options or DecodeOptions()
    check_sentence_options(options)
    generator = torch.Generator().manual_seed(options.seed) if options.card.seeded else None
    out: list[Decoded] = []
    for start, stop in token_batches(sources, options.batch_size, options.width):
        batch = make_batch(vocab, sources[start:stop])
        try:
            out.extend(decode_batch(model, batch, options, p_gen, generator=generator))
        except DecodingError as err:
            raise err.renumbered(start + err.instance) from None
    return out


def token_batches(
    sources: Sequence[Sequence[str]], batch_size: int, width: int
) -> list[tuple[int, int]]:
    """``(start, stop)`` of consecutive batches of ``sources``: each at most ``batch_size``
    sources whose padded tokens (END included) times ``width`` beams are at most
    :data:`~ptrnet.io.limits.MAX_DECODE_TOKENS`.

    Raises:
        ValueError: a source that does not fit a batch alone.
    """
    batches: list[tuple[int, int]] = []
    start, longest = 0, 0
    for i, source in enumerate(sources):
        n = len(source) + 1
        if n * width > MAX_DECODE_TOKENS:
            raise ValueError(
                f"sentence {i + 1} has {n - 1:,} tokens: with {width} beams it passes the "
                f"{MAX_DECODE_TOKENS:,} tokens x beams a decoding batch holds"
            )
        longest = max(longest, n)
        if i - start == batch_size or (i - start + 1) * longest * width > MAX_DECODE_TOKENS:
            batches.append((start, i))
            start, longest = i, n
    if start < len(sources):
        batches.append((start, len(sources)))
    return batches


@dataclass(frozen=True)
class Explanation:
    """Every quantity of a greedy decode of one sentence, step by step (T steps, END included).

    Attributes:
        source: the n source words, END last.
        vocabulary: the V + X words of the extended vocabulary (fixed words, then the
            sentence's out-of-vocabulary words).
        output: the T words chosen (the last is END unless ``max_steps`` cut it short).
        p_vocab: (T, V) the vocabulary distribution at each step.
        attention: (T, n) the attention over the source at each step.
        p_gen: (T,) the generation probability used (the override, when given).
        mixture: (T, V + X) the final distribution P(w).
    """

    source: tuple[str, ...]
    vocabulary: tuple[str, ...]
    output: tuple[str, ...]
    p_vocab: torch.Tensor
    attention: torch.Tensor
    p_gen: torch.Tensor
    mixture: torch.Tensor

    def to_dict(self) -> dict[str, Any]:
        """The explanation as plain JSON-ready lists."""
        return {
            "source": list(self.source),
            "vocabulary": list(self.vocabulary),
            "output": list(self.output),
            "p_vocab": self.p_vocab.tolist(),
            "attention": self.attention.tolist(),
            "p_gen": self.p_gen.tolist(),
            "mixture": self.mixture.tolist(),
        }


@torch.no_grad()
def explain(
    model: PointerGenerator,
    vocab: Vocabulary,
    source: Sequence[str],
    p_gen: float | None = None,
    max_steps: int = MAX_STEPS,
) -> Explanation:
    """Greedy-decode one sentence and keep, for each output word, P_vocab, the attention,
    p_gen and the mixture (read off one teacher-forced pass over the output, the computation
    each decoding step ran); with ``p_gen`` set, the decode re-runs with that value at every
    step (1: what the vocabulary path alone outputs, 0: what copying alone outputs)."""
    batch = make_batch(vocab, [source])
    found = run_search(SentenceDecoder(model, batch, 1, p_gen), max_steps, Greedy())
    tokens = found.tokens  # (1, T)
    start = torch.full((1, 1), START_ID, dtype=torch.long)
    previous = torch.cat([start, tokens[:, :-1]], 1)  # (1, T)
    steps = model(batch.ids, batch.extended, batch.lengths, previous, batch.extra, p_gen)
    encoded = batch.encoded[0]
    extended = (*vocab.words, *encoded.oovs)
    return Explanation(
        source=encoded.words,
        vocabulary=extended,
        output=tuple(extended[i] for i in tokens[0].tolist()),
        p_vocab=steps.p_vocab[0],
        attention=steps.attention[0],
        p_gen=steps.p_gen[0],
        mixture=steps.probs[0],
    )
