"""The pointer-generator's decoders (ptrnet/text/decode.py): every output id is a word the row
can say (never padding or the start symbol), words and ids agree, and a row decodes alike alone
and in a padded batch."""

import pytest
import torch

from ptrnet.decoding.options import DecodeOptions
from ptrnet.model.pointer_generator import PointerGenerator, PointerGeneratorConfig
from ptrnet.text.batch import make_batch
from ptrnet.text.decode import decode_batch, decode_sources, explain
from ptrnet.text.vocab import PAD_ID, SPECIALS, START_ID, Vocabulary

torch.set_num_threads(1)

VOCAB = Vocabulary([*SPECIALS, "the", "record", "breaks"])  # V = 7
SOURCES = [("a", "b", "the"), ("the", "kiki", "record", "kiki", "x", "y", "z"), ("record",)]


def _model(seed, p_gen=None):
    torch.manual_seed(seed)
    config = PointerGeneratorConfig(len(VOCAB), p_gen, embed=8, hidden=12)
    return PointerGenerator(config).eval()


def _check(decoded, batch):
    for out, encoded in zip(decoded, batch.encoded, strict=True):
        assert PAD_ID not in out.ids and START_ID not in out.ids
        assert max(out.ids, default=0) < len(VOCAB) + len(encoded.oovs)
        assert VOCAB.decode(out.ids, encoded.oovs) == out.words
        assert len(out.ids) == len(out.words) == len(out.p_gen)


# With p_gen = 1, P_vocab of the untrained network favours <pad> at seeds 2 and 5 (the words
# were (), the ids thirty zeros) and <s> at seeds 4 and 6 (output as the word "<s>").
@pytest.mark.parametrize("seed", [2, 4, 5, 6])
@pytest.mark.parametrize("p_gen", [None, 1.0])
def test_untrained_outputs_are_words_of_the_row(seed, p_gen):
    model, batch = _model(seed, p_gen), make_batch(VOCAB, SOURCES)
    _check(decode_batch(model, batch), batch)
    _check(decode_batch(model, batch, DecodeOptions("beam", beam_width=3)), batch)
    shown = explain(model, VOCAB, SOURCES[1])
    assert "<pad>" not in shown.output and "<s>" not in shown.output


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
@pytest.mark.parametrize("p_gen", [None, 0.0, 1.0])
def test_a_row_decodes_alike_alone_and_in_a_batch(strategy, p_gen):
    model = _model(4)
    options = DecodeOptions(strategy, beam_width=3)
    together = decode_sources(model, VOCAB, SOURCES, options, p_gen)
    for source, out in zip(SOURCES, together, strict=True):
        alone = decode_sources(model, VOCAB, [source], options, p_gen)[0]
        assert alone.ids == out.ids and alone.words == out.words
        assert alone.log_prob == pytest.approx(out.log_prob, abs=1e-4)
