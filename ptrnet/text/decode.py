"""Decoding the pointer-generator: greedy, beam search, and :func:`explain`, which returns every
quantity of the mixture for one sentence (what a teaching panel draws), optionally with p_gen
overridden to show what each path alone would output.

Both decoders choose among the ids a row can output (:func:`_output_ids`): never ``<pad>`` or
``<s>``, nor a batch mate's out-of-vocabulary ids, so a row decodes alike alone and in a batch.

Every function takes ``p_gen``: None uses the model's own switch (or its config's fixed value); a
number in [0, 1] replaces it at every step (1 = vocabulary only, 0 = copy only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ptrnet.decoding.options import DEFAULT_BEAM_WIDTH, DEFAULT_DECODE_BATCH
from ptrnet.io.limits import MAX_DECODE_TOKENS, MAX_SENTENCE_BEAM_WIDTH
from ptrnet.model.pointer_generator import Memory, PointerGenerator, Step
from ptrnet.quoting import quote
from ptrnet.text.batch import Batch, make_batch
from ptrnet.text.vocab import END_ID, PAD_ID, START_ID, Vocabulary

MAX_STEPS = 30  # headlines of the copy task have at most 9 words + END
STRATEGIES = ("greedy", "beam")


@dataclass(frozen=True)
class Decoded:
    """One decoded output: its words (without END), extended ids, the p_gen used at each word's
    step, and the sequence's log-probability (END included)."""

    words: tuple[str, ...]
    ids: tuple[int, ...]
    p_gen: tuple[float, ...]
    log_prob: float


@torch.no_grad()
def greedy(
    model: PointerGenerator, batch: Batch, max_steps: int = MAX_STEPS, p_gen: float | None = None
) -> list[Decoded]:
    """The most likely word at each step, for every source of ``batch``."""
    tokens, gates, log_prob, _ = _greedy_steps(model, batch, max_steps, p_gen, keep=False)
    return _results(batch, tokens, gates, log_prob)


def _output_ids(batch: Batch) -> torch.Tensor:
    """(B, V + X) True where a row may output the id: every fixed word except ``<pad>`` and
    ``<s>`` (never a target, so only an untrained model gives them weight, and ``<pad>`` would
    end the words early), and the row's own out-of-vocabulary words, not those past them that
    only a batch mate has."""
    size = len(batch.vocab)
    own = torch.tensor([size + len(e.oovs) for e in batch.encoded])  # (B,)
    allowed = torch.arange(size + batch.extra) < own.unsqueeze(1)  # (B, V + X)
    allowed[:, [PAD_ID, START_ID]] = False
    return allowed


def _greedy_steps(
    model: PointerGenerator, batch: Batch, max_steps: int, p_gen: float | None, keep: bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[Step]]:
    """Greedy loop -> tokens (B, T), p_gen (B, T), log-probabilities (B,), and each Step when
    ``keep``. Rows that emitted END continue with PAD at no cost."""
    memory, state = model.encode(batch.ids, batch.extended, batch.lengths)
    rows = batch.ids.shape[0]
    allowed = _output_ids(batch)  # (B, V + X)
    previous = torch.full((rows, 1), START_ID, dtype=torch.long)
    done = torch.zeros(rows, dtype=torch.bool)
    log_prob = torch.zeros(rows)
    tokens, gates, steps = [], [], []
    for _ in range(max_steps):
        step = model.decode(memory, previous, state, batch.extra, p_gen)
        state = step.state
        scores = step.log_probs[:, 0].masked_fill(~allowed, float("-inf"))  # (B, V + X)
        token = scores.argmax(-1).masked_fill(done, PAD_ID)  # (B,)
        log_prob += scores.gather(1, token[:, None]).squeeze(1).masked_fill(done, 0.0)
        tokens.append(token)
        gates.append(step.p_gen[:, 0])
        steps.extend([step] if keep else [])
        done |= token == END_ID
        if done.all():
            break
        previous = token[:, None]
    return torch.stack(tokens, 1), torch.stack(gates, 1), log_prob, steps


@torch.no_grad()
def beam_search(
    model: PointerGenerator,
    batch: Batch,
    width: int,
    max_steps: int = MAX_STEPS,
    p_gen: float | None = None,
) -> list[Decoded]:
    """The most likely of ``width`` beams per source (sum of log-probabilities, no length
    normalisation); width 1 is :func:`greedy`."""
    if width < 1:
        raise ValueError(f"beam width must be >= 1, got {width}")
    memory, state = model.encode(batch.ids, batch.extended, batch.lengths)
    rows, k = batch.ids.shape[0], width
    memory = Memory(*(t.repeat_interleave(k, 0) for t in memory))  # (B*K, ...)
    allowed = _output_ids(batch).repeat_interleave(k, 0)  # (B*K, V + X)
    state = tuple(s.repeat_interleave(k, 1) for s in state)
    scores = torch.zeros(rows, k).index_fill_(1, torch.arange(1, k), float("-inf")).flatten()
    previous = torch.full((rows * k, 1), START_ID, dtype=torch.long)
    done = torch.zeros(rows * k, dtype=torch.bool)
    history = torch.zeros(rows * k, 0, dtype=torch.long)
    gates = torch.zeros(rows * k, 0)
    offsets = torch.arange(rows).unsqueeze(1) * k  # (B, 1)
    for _ in range(max_steps):
        step = model.decode(memory, previous, state, batch.extra, p_gen)
        logp = step.log_probs[:, 0].masked_fill(~allowed, float("-inf"))  # (B*K, W)
        finished = torch.full_like(logp, float("-inf"))
        finished[:, PAD_ID] = 0.0  # a finished beam continues with PAD only, at no cost
        logp = torch.where(done.unsqueeze(1), finished, logp)
        width_w = logp.shape[1]
        top, index = (scores.unsqueeze(1) + logp).view(rows, k * width_w).topk(k, dim=1)  # (B, K)
        parent = (index // width_w + offsets).flatten()  # (B*K,)
        token = (index % width_w).flatten()
        history = torch.cat([history[parent], token.unsqueeze(1)], 1)
        gates = torch.cat([gates[parent], step.p_gen[parent, :1]], 1)
        done = done[parent] | (token == END_ID)
        state = tuple(s[:, parent] for s in step.state)
        scores, previous = top.flatten(), token.unsqueeze(1)
        if done.all():
            break
    best = scores.view(rows, k).argmax(1) + offsets.squeeze(1)  # (B,)
    return _results(batch, history[best], gates[best], scores[best])


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
    strategy: str = "greedy",
    width: int = DEFAULT_BEAM_WIDTH,
    batch_size: int = DEFAULT_DECODE_BATCH,
    p_gen: float | None = None,
) -> list[Decoded]:
    """Decode every source (token sequences) in batches of at most ``batch_size`` sources and
    :data:`~ptrnet.io.limits.MAX_DECODE_TOKENS` tokens x beams (:func:`token_batches`), so
    memory follows the batch, not the number of sources.

    Raises:
        ValueError: an unknown strategy, a beam width outside 1 to
            :data:`~ptrnet.io.limits.MAX_SENTENCE_BEAM_WIDTH`, or a source that does not fit a
            batch alone (longer than :data:`~ptrnet.io.limits.MAX_LINE_TOKENS`, which the
            readers refuse).
    """
    if strategy not in STRATEGIES:
        raise ValueError(
            f"unknown strategy {quote(strategy)}; expected one of {', '.join(STRATEGIES)}"
        )
    if strategy == "beam" and not 1 <= width <= MAX_SENTENCE_BEAM_WIDTH:
        raise ValueError(f"beam width must be 1 to {MAX_SENTENCE_BEAM_WIDTH}, got {quote(width)}")
    out: list[Decoded] = []
    for start, stop in token_batches(sources, batch_size, width if strategy == "beam" else 1):
        batch = make_batch(vocab, sources[start:stop])
        if strategy == "greedy":
            out.extend(greedy(model, batch, p_gen=p_gen))
        else:
            out.extend(beam_search(model, batch, width, p_gen=p_gen))
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
    p_gen and the mixture; with ``p_gen`` set, the decode re-runs with that value at every
    step (1: what the vocabulary path alone outputs, 0: what copying alone outputs)."""
    batch = make_batch(vocab, [source])
    tokens, _, _, steps = _greedy_steps(model, batch, max_steps, p_gen, keep=True)
    encoded = batch.encoded[0]
    extended = (*vocab.words, *encoded.oovs)
    return Explanation(
        source=encoded.words,
        vocabulary=extended,
        output=tuple(extended[i] for i in tokens[0].tolist()),
        p_vocab=torch.cat([s.p_vocab[0] for s in steps]),
        attention=torch.cat([s.attention[0] for s in steps]),
        p_gen=torch.cat([s.p_gen[0] for s in steps]),
        mixture=torch.cat([s.probs[0] for s in steps]),
    )
