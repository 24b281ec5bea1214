"""The copy task's data side (no torch): grammar, vocabulary and extended ids, text format,
metrics."""

import pytest

from ptrnet.io.errors import InputError
from ptrnet.tasks import get_task
from ptrnet.tasks.copy import CLOSED_WORDS, TEMPLATES, sample_pair
from ptrnet.text.format import Pair, read_pairs, tokenize, write_pairs
from ptrnet.text.metrics import copy_metrics
from ptrnet.text.vocab import END_ID, SPECIALS, UNK_ID, Vocabulary

generate_pairs = get_task("copy").generate_pairs


def test_grammar_is_a_pure_function_of_seed_stream_and_index():
    pairs = list(generate_pairs(50, seed=3, stream=1))
    assert pairs == [sample_pair(3, i, 1) for i in range(50)]
    assert list(generate_pairs(10, 3, 1, start=20)) == pairs[20:30]
    assert pairs != list(generate_pairs(50, seed=4, stream=1))
    assert pairs != list(generate_pairs(50, seed=3, stream=2))
    with pytest.raises(ValueError):
        list(generate_pairs(-1, 0))


def test_every_template_is_used_and_every_target_copies_and_generates():
    pairs = list(generate_pairs(2000, seed=0))
    for source, target in TEMPLATES:  # each template occurs
        literal = [set(w for w in t.split() if "{" not in w) for t in (source, target)]
        assert any(literal[0] <= set(p.source) and literal[1] <= set(p.target) for p in pairs)
    for pair in pairs:
        assert 9 <= len(pair.source) <= 17 and 3 <= len(pair.target) <= 9
        assert any(w not in pair.source for w in pair.target)  # a word to generate
        assert any(w in pair.source and w not in CLOSED_WORDS for w in pair.target)  # to copy


def test_names_and_numbers_are_mostly_out_of_vocabulary():
    vocab = Vocabulary.build(generate_pairs(20000, seed=1, stream=1), min_count=10)
    assert set(vocab.words) >= CLOSED_WORDS
    pool = [w for p in generate_pairs(1000, seed=9) for w in p.source if w not in CLOSED_WORDS]
    outside = sum(w not in vocab for w in pool) / len(pool)
    assert len(pool) > 1000 and outside > 0.98


def test_extended_ids_of_a_sentence():
    vocab = Vocabulary([*SPECIALS, "the", "record", "breaks"])
    encoded = vocab.encode_source(("kiki", "breaks", "the", "lisbon", "record", "kiki"))
    assert encoded.oovs == ("kiki", "lisbon")
    assert encoded.ids == (UNK_ID, 6, 4, UNK_ID, 5, UNK_ID, END_ID)
    assert encoded.extended == (7, 6, 4, 8, 5, 7, END_ID)
    target = ("kiki", "breaks", "lisbon", "record", "oslo")
    assert vocab.encode_target(target, encoded.oovs, copy=True) == [7, 6, 8, 5, UNK_ID, END_ID]
    assert vocab.encode_target(target, encoded.oovs, copy=False) == [1, 6, 1, 5, 1, END_ID]
    assert vocab.decode([7, 6, 8, END_ID, 4], encoded.oovs) == ("kiki", "breaks", "lisbon")
    with pytest.raises(ValueError, match="outside"):
        vocab.decode([9], encoded.oovs)
    with pytest.raises(ValueError):
        Vocabulary(["the", *SPECIALS])


def test_vocabulary_build_orders_by_count_then_word():
    pairs = [Pair(("b", "a", "c"), ("a",)), Pair(("b", "c"), ("d",))]
    assert Vocabulary.build(pairs, min_count=2).words == (*SPECIALS, "a", "b", "c")


def test_text_format_round_trip(tmp_path):
    pairs = list(generate_pairs(30, seed=5))
    path = tmp_path / "copy.txt"
    assert write_pairs(path, pairs) == 30
    assert read_pairs(path) == pairs
    assert path.read_text().splitlines()[0] == " ".join(pairs[0].source) + "\t" + " ".join(
        pairs[0].target
    )


def test_tokenize_splits_punctuation_and_lowers():
    assert tokenize("Late on Friday, Akinyi won 4 medals.") == (
        "late", "on", "friday", ",", "akinyi", "won", "4", "medals", ".",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("good source\tgood target\nno tab here\n", "2: expected 'SOURCE<TAB>TARGET'"),
        ("a\tb\tc\n", "1: expected one tab between source and target, found 2"),
        ("\tb\n", "1: empty source"),
        ("# comment\n\na b\t \n", "3: empty target"),
        ("# only a comment\n\n", "no examples"),
    ],
)
def test_reader_errors_name_file_and_line(tmp_path, text, problem):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_pairs(path)
    assert str(caught.value).startswith(str(path)) and problem in str(caught.value)


def test_sources_without_targets_when_allowed(tmp_path):
    path = tmp_path / "sources.txt"
    path.write_text("Kiki broke the record\nthe cup\tkiki wins\n")
    assert [p.target for p in read_pairs(path, need_target=False)] == [(), ("kiki", "wins")]


def test_metrics_on_hand_cases():
    pairs = [
        Pair(("kiki", "won", "the", "cup"), ("kiki", "wins", "cup")),
        Pair(("4", "hurt", "in", "oslo"), ("4", "injured", "in", "oslo")),
        Pair(("lo", "and", "ma"), ("lo", "and", "ma")),
    ]
    predictions = [("kiki", "wins", "cup"), ("<unk>", "injured", "oslo"), ("lo", "and", "ma", "ma")]
    gates = [(0.1, 0.9, 0.3), (0.8, 0.7, 0.2), (0.0, 0.5, 0.1, 0.1)]
    vocab = {"wins", "cup", "injured", "in", "oslo", "and", "the"}
    metrics = copy_metrics(pairs, predictions, vocab, gates)
    assert metrics["exact_match"] == pytest.approx(1 / 3)
    # positions right: 3 of 3; 1 of 4 (<unk>/4 wrong, injured right, oslo/in wrong, -/oslo
    # wrong); 3 of 4 (the extra "ma" is a fourth position, wrong)
    assert metrics["token_accuracy"] == pytest.approx((3 + 1 + 3) / (3 + 4 + 4))
    # out of vocabulary in targets: kiki, 4, lo, ma -> found kiki, lo, ma
    assert metrics["oov_recall"] == pytest.approx(3 / 4)
    # copied (in the source): kiki .1, cup .3, oslo .2, lo 0, and .5, ma .1, ma .1
    assert metrics["p_gen_copied"] == pytest.approx((0.1 + 0.3 + 0.2 + 0.0 + 0.5 + 0.1 + 0.1) / 7)
    # generated (absent from the source): wins .9, <unk> .8, injured .7
    assert metrics["p_gen_generated"] == pytest.approx((0.9 + 0.8 + 0.7) / 3)
    assert metrics["count"] == 3
    plain = copy_metrics(pairs[:1], predictions[:1], {"kiki", "wins", "cup"})
    assert plain["oov_recall"] is None and plain["p_gen_copied"] is None
    with pytest.raises(ValueError):
        copy_metrics(pairs, predictions[:2], vocab)


def test_tokenize_keeps_unk_whole_and_underscores():
    """A prediction with ``<unk>`` read back as ``<``, ``unk``, ``>``; ``_`` vanished."""
    from ptrnet.tasks.sentences import UNKNOWN
    from ptrnet.text.vocab import UNK

    assert UNKNOWN == UNK
    assert tokenize("Kiki <unk> won") == ("kiki", "<unk>", "won")
    assert tokenize("snake_case <UNK>") == ("snake", "_", "case", "<unk>")
    assert tokenize("a < b >") == ("a", "<", "b", ">")
