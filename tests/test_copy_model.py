"""The pointer-generator: the mixture against hand-computed values, p_gen = 1 / 0 as seq2seq /
pure pointer, padding, and decoding (beam width 1 == greedy, explain, p_gen override)."""

import pytest
import torch

from ptrnet.decoding.options import DecodeOptionError, DecodeOptions
from ptrnet.decoding.search import DecodingError
from ptrnet.io.limits import MAX_SENTENCE_BEAM_WIDTH
from ptrnet.model.pointer_generator import (
    EPS,
    Memory,
    PointerGenerator,
    PointerGeneratorConfig,
    Step,
    mixture,
)
from ptrnet.text.batch import make_batch
from ptrnet.text.config import FIXED_P_GEN, CopyTrainConfig
from ptrnet.text.decode import MAX_STEPS, decode_batch, decode_sources, explain
from ptrnet.text.vocab import END, END_ID, SPECIALS, START_ID, Vocabulary

torch.set_num_threads(1)

VOCAB = Vocabulary([*SPECIALS, "the", "record", "breaks"])  # V = 7
SOURCES = [
    ("the", "kiki", "record", "kiki"),
    ("breaks", "the", "lisbon", "record", "by", "4", "seconds"),
    ("the",),
]


def _model(p_gen=None, seed=0):
    torch.manual_seed(seed)
    return PointerGenerator(PointerGeneratorConfig(len(VOCAB), p_gen, embed=8, hidden=12)).eval()


def test_mixture_matches_hand_computed_values():
    # source "the kiki record kiki </s>": "record" is in the vocabulary and the source,
    # "kiki" only in the source (twice: one extended id, V + 0 = 7).
    extended = torch.tensor([[4, 7, 5, 7, 3]])
    p_vocab = torch.tensor([[[0.0, 0.1, 0.0, 0.2, 0.3, 0.4, 0.0]]])  # pad unk s </s> the rec brk
    attention = torch.tensor([[[0.1, 0.2, 0.3, 0.15, 0.25]]])
    p = mixture(p_vocab, attention, torch.tensor([[0.6]]), extended, extra=1)[0, 0]
    expected = {
        1: 0.6 * 0.1,  # <unk>: vocabulary only
        3: 0.6 * 0.2 + 0.4 * 0.25,  # </s>: vocabulary and the source's last position
        4: 0.6 * 0.3 + 0.4 * 0.1,  # the
        5: 0.6 * 0.4 + 0.4 * 0.3,  # record: in both
        6: 0.0,  # breaks: in the vocabulary with P_vocab 0, not in the source
        7: 0.4 * (0.2 + 0.15),  # kiki: source only, attention of both positions
    }
    for index, value in expected.items():
        assert p[index].item() == pytest.approx(value, abs=1e-7)
    assert p.shape == (8,)
    assert p.sum().item() == pytest.approx(1.0)


def test_p_gen_one_and_zero_reduce_the_mixture_to_its_paths():
    extended = torch.tensor([[4, 7, 5, 7, 3]])
    p_vocab = torch.softmax(torch.randn(1, 2, 7), -1)
    attention = torch.softmax(torch.randn(1, 2, 5), -1)
    ones, zeros = torch.ones(1, 2), torch.zeros(1, 2)
    assert torch.equal(mixture(p_vocab, attention, ones, extended, 1)[..., :7], p_vocab)
    copy = mixture(p_vocab, attention, zeros, extended, 1)
    assert torch.allclose(copy[..., 7], attention[..., 1] + attention[..., 3])
    assert torch.allclose(copy[..., 5], attention[..., 2])
    assert torch.all(copy[..., [0, 1, 2, 6]] == 0)


def _step(model, p_gen=None):
    batch = make_batch(VOCAB, SOURCES, [("kiki", "breaks", "record")] * 3)
    return model(batch.ids, batch.extended, batch.lengths, batch.previous, batch.extra, p_gen)


def test_model_mixture_is_consistent_and_normalised():
    step = _step(_model())
    expected = mixture(
        step.p_vocab, step.attention, step.p_gen, make_batch(VOCAB, SOURCES).extended, 4
    )
    assert step.probs.shape == (3, 4, 7 + 4)  # B, T (3 words + END), V + X
    assert torch.allclose(step.probs, expected)
    assert torch.allclose(step.probs.sum(-1), torch.ones(3, 4), atol=1e-6)
    assert torch.allclose(step.log_probs, step.probs.clamp_min(EPS).log())
    assert torch.all((step.p_gen > 0) & (step.p_gen < 1))


@pytest.mark.parametrize(("arch", "value"), [("seq2seq", 1.0), ("pointer", 0.0)])
def test_fixed_archs_equal_the_pointer_generator_with_p_gen_overridden(arch, value):
    generator = _model()
    config = PointerGeneratorConfig(len(VOCAB), FIXED_P_GEN[arch], 8, 12)
    fixed = PointerGenerator(config).eval()
    fixed.load_state_dict(generator.state_dict())
    with torch.no_grad():
        overridden, own = _step(generator, p_gen=value), _step(fixed)
    assert torch.equal(own.p_gen, torch.full_like(own.p_gen, value))
    assert torch.allclose(overridden.probs, own.probs)
    if arch == "seq2seq":  # vocabulary only: no mass on the sentences' extra ids
        assert torch.all(own.probs[..., 7:] == 0)
        assert torch.allclose(own.probs[..., :7], own.p_vocab)
    else:  # copy only: no mass on vocabulary words absent from the source ("breaks" in row 0)
        assert torch.all(own.probs[0, :, 6] == 0)
        assert torch.all(own.probs[:, :, 1] == 0)  # nor on <unk>


def test_padding_changes_nothing_and_gets_no_attention():
    model = _model()
    with torch.no_grad():
        together = _step(model)
        alone = make_batch(VOCAB, SOURCES[2:], [("kiki", "breaks", "record")])
        single = model(alone.ids, alone.extended, alone.lengths, alone.previous, alone.extra)
    assert torch.all(together.attention[2, :, 2:] == 0)  # "the </s>" then padding
    assert torch.allclose(together.attention[2, :, :2], single.attention[0], atol=1e-6)
    width = single.probs.shape[-1]
    assert torch.allclose(together.probs[2, :, :width], single.probs[0], atol=1e-6)


def test_beam_width_one_is_greedy():
    model = _model(seed=3)
    batch = make_batch(VOCAB, SOURCES)
    first = decode_batch(model, batch)
    beam = decode_batch(model, batch, DecodeOptions("beam", beam_width=1))
    for a, b in zip(first, beam, strict=True):
        assert a.ids == b.ids and a.words == b.words
        assert a.log_prob == pytest.approx(b.log_prob, abs=1e-5)
        assert a.p_gen == pytest.approx(b.p_gen)
        assert len(a.p_gen) == len(a.words)


def test_beam_search_finds_the_best_sequence_of_a_known_model():
    """A model whose steps are fixed tables: greedy takes the locally best first word and ends
    less likely than the best sequence, which a beam of 2 finds."""
    table = torch.full((8, 8), 1e-9)  # next-word probabilities by previous word (W = 8)
    table[2, 4], table[2, 5] = 0.6, 0.4  # after <s>: the .6, record .4
    table[4, 3], table[4, 5], table[4, 4] = 0.4, 0.3, 0.3  # after the: </s> .4
    table[5, 3], table[5, 4], table[5, 5] = 0.9, 0.05, 0.05  # after record: </s> .9
    table[3, 3] = 1.0

    class Table:
        def encode(self, ids, extended, lengths):
            rows = ids.shape[0]
            memory = Memory(ids, ids, ids > 0, extended)
            return memory, (torch.zeros(1, rows, 1), torch.zeros(1, rows, 1))

        def decode(self, memory, previous, state, extra, p_gen=None):
            probs = table[previous[:, -1]].unsqueeze(1)  # (R, 1, 8)
            gate = torch.full(probs.shape[:2], 0.5)
            return Step(probs.log(), probs, probs, probs, gate, state)

    batch = make_batch(Vocabulary([*SPECIALS, "the", "record", "x", "y"]), [("the", "record")])
    assert decode_batch(Table(), batch)[0].words == ("the",)
    best = decode_batch(Table(), batch, DecodeOptions("beam", beam_width=2))[0]
    assert best.words == ("record",)
    assert best.log_prob == pytest.approx(float(torch.tensor(0.4 * 0.9).log()))


def test_decoded_words_are_vocabulary_or_source_words():
    options = DecodeOptions("beam", beam_width=3, batch_size=2)
    decoded = decode_sources(_model(seed=5), VOCAB, SOURCES, options)
    for source, out in zip(SOURCES, decoded, strict=True):
        assert set(out.words) <= set(VOCAB.words) | set(source)


def test_more_rows_than_a_sentence_batch_holds_are_refused_naming_the_option():
    wide = DecodeOptions("sample", samples=MAX_SENTENCE_BEAM_WIDTH + 1)
    with pytest.raises(DecodeOptionError, match=f"takes at most {MAX_SENTENCE_BEAM_WIDTH} samples"):
        decode_sources(_model(), VOCAB, SOURCES, wide)


def _teacher_forced(model, source, ids):
    """log P(ids, then END unless the decode ran out of steps) by one teacher-forced pass."""
    targets = [*ids, *([END_ID] if len(ids) < MAX_STEPS else [])]
    batch = make_batch(VOCAB, [source])
    previous = torch.tensor([[START_ID, *targets[:-1]]])
    with torch.no_grad():
        step = model(batch.ids, batch.extended, batch.lengths, previous, batch.extra)
    return float(step.log_probs[0].gather(1, torch.tensor(targets)[:, None]).sum())


def test_sampling_is_seeded_and_scores_its_draws():
    model, sources = _model(seed=4), SOURCES * 4
    first = decode_sources(model, VOCAB, sources, DecodeOptions("sample", seed=1))
    again = decode_sources(model, VOCAB, sources, DecodeOptions("sample", seed=1))
    other = decode_sources(model, VOCAB, sources, DecodeOptions("sample", seed=2))
    assert [d.ids for d in first] == [d.ids for d in again]
    assert [d.ids for d in first] != [d.ids for d in other]
    best = decode_sources(model, VOCAB, sources, DecodeOptions("sample", samples=4, seed=1))
    for source, out in zip(sources * 2, first + best, strict=True):
        assert set(out.words) <= set(VOCAB.words) | set(source)
        assert out.log_prob == pytest.approx(_teacher_forced(model, source, out.ids), abs=1e-4)


def test_explain_reports_each_step_and_follows_the_override():
    model = _model(seed=1)
    source = SOURCES[1]
    shown = explain(model, VOCAB, source)
    steps = len(shown.output)
    assert shown.source == (*source, END)
    assert shown.vocabulary == (*VOCAB.words, "lisbon", "by", "4", "seconds")
    assert shown.p_vocab.shape == (steps, 7) and shown.attention.shape == (steps, 8)
    assert shown.mixture.shape == (steps, 11) and shown.p_gen.shape == (steps,)
    assert torch.allclose(shown.mixture.sum(-1), torch.ones(steps), atol=1e-6)
    assert shown.output[: len(decode_batch(model, make_batch(VOCAB, [source]))[0].words)] == tuple(
        decode_batch(model, make_batch(VOCAB, [source]))[0].words
    )
    copy_only = explain(model, VOCAB, source, p_gen=0.0)
    assert set(copy_only.output) <= set(shown.source)
    assert torch.all(copy_only.p_gen == 0)
    vocabulary_only = explain(model, VOCAB, source, p_gen=1.0)
    assert set(vocabulary_only.output) <= set(VOCAB.words)
    assert set(vocabulary_only.to_dict()) == {
        "source",
        "vocabulary",
        "output",
        "p_vocab",
        "attention",
        "p_gen",
        "mixture",
    }
    with pytest.raises(ValueError, match="p_gen"):
        explain(model, VOCAB, source, p_gen=1.5)


def test_config_validates():
    with pytest.raises(ValueError, match="p_gen"):
        PointerGeneratorConfig(10, 1.5)
    with pytest.raises(ValueError, match="arch"):
        CopyTrainConfig(arch="transformer")
    with pytest.raises(ValueError, match="even"):
        PointerGeneratorConfig(10, hidden=7)
    with pytest.raises(ValueError, match="unknown"):
        PointerGeneratorConfig.from_dict({"vocab_size": 10, "layers": 2})
    config = PointerGeneratorConfig(10, 0.0)
    assert PointerGeneratorConfig.from_dict(config.to_dict()) == config
    assert CopyTrainConfig.from_dict(CopyTrainConfig().to_dict()) == CopyTrainConfig()
    with pytest.raises(ValueError, match="unknown"):
        CopyTrainConfig.from_dict({"layers": 2})


def test_arch_of_names_every_fixed_p_gen():
    """A fixed p_gen other than 0 or 1 (the configuration allows it) was a StopIteration."""
    from ptrnet.text.config import arch_of

    assert [arch_of(p) for p in (None, 1.0, 0.0)] == ["pointer_generator", "seq2seq", "pointer"]
    assert arch_of(0.5) == "pointer_generator (p_gen fixed at 0.5)"


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_a_model_with_non_finite_scores_is_refused(strategy):
    model = _model(seed=2)
    with torch.no_grad():
        model.switch.bias.fill_(float("nan"))
    with pytest.raises(DecodingError, match="^instance 1: the model's scores are not finite"):
        decode_sources(model, VOCAB, SOURCES, DecodeOptions(strategy, beam_width=3))
