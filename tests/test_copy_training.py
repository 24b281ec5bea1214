"""The pointer-generator's training side (batches, loss, metrics) against values computed by
hand: the loss is -log of the mixture at each target word (padding excluded), out-of-vocabulary
targets are copies when the source has them and <unk> when it does not, and a previous word
with an extended id enters the decoder as <unk>."""

import math

import pytest
import torch

from ptrnet.model.pointer_generator import PointerGenerator, PointerGeneratorConfig
from ptrnet.text.batch import make_batch
from ptrnet.text.metrics import copy_metrics
from ptrnet.text.train import loss_of
from ptrnet.text.vocab import END_ID, SPECIALS, START_ID, UNK_ID, Pair, Vocabulary

torch.set_num_threads(1)

VOCAB = Vocabulary([*SPECIALS, "the", "record", "breaks"])  # V = 7
SOURCES = [("kiki", "breaks", "the", "kiki", "record"), ("the", "lisbon", "zu", "by")]
TARGETS = [("kiki", "breaks", "oslo"), ("zu", "lisbon", "the", "record", "kiki")]


def _model(seed=0, p_gen=None):
    torch.manual_seed(seed)
    return PointerGenerator(PointerGeneratorConfig(len(VOCAB), p_gen, embed=8, hidden=12)).eval()


def test_targets_are_copies_when_the_source_has_them_and_unk_otherwise():
    batch = make_batch(VOCAB, SOURCES, TARGETS)
    assert batch.encoded[0].oovs == ("kiki",) and batch.encoded[1].oovs == ("lisbon", "zu", "by")
    # row 0: kiki -> V + 0; oslo (nowhere in the source) -> <unk>
    # row 1: zu -> V + 1, lisbon -> V + 0 (row 1's own ids); kiki is row 0's word only -> <unk>
    assert batch.targets.tolist() == [
        [7, 6, UNK_ID, END_ID, 0, 0],
        [8, 7, 4, 5, UNK_ID, END_ID],
    ]
    assert batch.previous[:, 0].tolist() == [START_ID, START_ID]
    assert torch.equal(batch.previous[:, 1:], batch.targets[:, :-1])
    seq2seq = make_batch(VOCAB, SOURCES, TARGETS, copy=False)
    assert seq2seq.targets.tolist() == [
        [UNK_ID, 6, UNK_ID, END_ID, 0, 0],
        [UNK_ID, UNK_ID, 4, 5, UNK_ID, END_ID],
    ]


def test_loss_is_minus_log_of_the_mixture_computed_by_hand():
    model = _model(seed=3)
    batch = make_batch(VOCAB, SOURCES, TARGETS)
    with torch.no_grad():
        step = model(batch.ids, batch.extended, batch.lengths, batch.previous, batch.extra)
        loss = loss_of(model, batch).item()
    terms = []
    for row, encoded in enumerate(batch.encoded):
        for t, target in enumerate(batch.targets[row].tolist()):
            if target == 0:
                continue  # padding past END
            gate = step.p_gen[row, t].item()
            generate = step.p_vocab[row, t, target].item() if target < len(VOCAB) else 0.0
            copy = sum(
                step.attention[row, t, i].item()
                for i, word in enumerate(encoded.extended)
                if word == target
            )
            probability = gate * generate + (1 - gate) * copy
            assert probability > 0  # every target here, copies included, is learnable
            terms.append(-math.log(probability))
    assert len(terms) == 4 + 6
    assert loss == pytest.approx(sum(terms) / len(terms), rel=1e-5)


def test_a_copied_word_fed_back_enters_as_unk():
    model = _model(seed=1)
    batch = make_batch(VOCAB, SOURCES, TARGETS)
    assert batch.previous[0, 1].item() == len(VOCAB)  # kiki, an extended id
    unknown = batch.previous.masked_fill(batch.previous >= len(VOCAB), UNK_ID)
    with torch.no_grad():
        fed = model(batch.ids, batch.extended, batch.lengths, batch.previous, batch.extra)
        plain = model(batch.ids, batch.extended, batch.lengths, unknown, batch.extra)
    assert torch.equal(fed.probs, plain.probs)


def test_padding_targets_do_not_count():
    """Row 0's loss alone equals its loss beside a longer row (its padded steps excluded),
    when the two rows are weighted by their word counts."""
    model = _model(seed=2)
    with torch.no_grad():
        both = loss_of(model, make_batch(VOCAB, SOURCES, TARGETS)).item()
        first = loss_of(model, make_batch(VOCAB, SOURCES[:1], TARGETS[:1])).item()
        second = loss_of(model, make_batch(VOCAB, SOURCES[1:], TARGETS[1:])).item()
    assert both == pytest.approx((4 * first + 6 * second) / 10, rel=1e-5)


def test_exact_match_takes_sequences_of_any_kind():
    """A pair built with lists (the API takes any sequence of words) matched nothing: a tuple
    prediction was compared with a list target."""
    pairs = [Pair(["kiki", "won"], ["kiki", "wins"])]
    metrics = copy_metrics(pairs, [["kiki", "wins"]], VOCAB)
    assert metrics["exact_match"] == 1.0 and metrics["token_accuracy"] == 1.0
