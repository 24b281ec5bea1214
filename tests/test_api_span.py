"""``ptrnet.load("span")``: the bundled span pointer answers typed questions with spans of the
passage, checked against the task generator's gold answers on held-out-name test questions and
against the passage itself; other span models load by path; bad input is one clear error."""

import pytest
import torch

import ptrnet
from ptrnet.io.errors import UsageError
from ptrnet.model.span import SpanPointer
from ptrnet.tasks import Stream, get_task
from ptrnet.tasks.span import split_source
from ptrnet.text.span_checkpoint import SpanModelConfig, save_span_model
from ptrnet.text.vocab import SPECIALS, Vocabulary

torch.set_num_threads(1)
PASSAGE = (
    "Kanori Sato founded Mivel Labs in Dabeno in 1987. Mivel Labs paid 5120 dollars to Dabeno Bank."
)


@pytest.fixture(scope="module")
def reader():
    return ptrnet.load("span")


@pytest.fixture(scope="module")
def test_questions():
    """Test-stream examples (names no training example holds) as (passage, question, gold)."""
    pairs = get_task("span").generate_pairs(60, 3, Stream.TEST)
    return [(*map(" ".join, split_source(p.source)), " ".join(p.target)) for p in pairs]


def test_load_span_is_the_bundled_span_pointer(reader):
    assert isinstance(reader, ptrnet.api.SpanReader)
    assert reader.task.name == "span" and reader.loaded.config.arch == "span_pointer"
    assert reader.loaded.path.endswith("bundled/span/best.safetensors")
    assert ptrnet.load("bundled", task="span").loaded.path == reader.loaded.path
    assert "SpanReader(task='span'" in repr(reader)


def test_answers_match_the_generators_gold_answers(reader, test_questions):
    answers = reader.answer_all([(p, q) for p, q, _ in test_questions])
    right = sum(a == gold for a, (_, _, gold) in zip(answers, test_questions, strict=True))
    assert right >= 0.9 * len(test_questions)  # the bundled model: 0.975 (docs/span.md)
    passage, question, _ = test_questions[0]
    assert reader.answer(passage, question) == answers[0]


@pytest.mark.parametrize("decode", ["greedy", "beam", "sample"])
def test_every_answer_is_a_span_of_the_passage(reader, test_questions, decode):
    for passage, question, _ in test_questions[:20]:
        words = passage.split()
        answer = reader.answer(passage, question, decode=decode, beam_width=3).split()
        starts = [i for i in range(len(words)) if words[i : i + len(answer)] == answer]
        assert answer and starts, (passage, question, answer)


def test_typed_text_is_split_and_lower_cased_as_the_task_writes_it(reader):
    assert reader.answer(PASSAGE, "Who founded Mivel Labs?") == "kanori sato"
    assert reader.answer(PASSAGE, "who founded mivel labs ?") == "kanori sato"
    explained = reader.explain(PASSAGE, "Who founded Mivel Labs?")
    assert " ".join(explained.answer) == "kanori sato"
    assert [label for label, _ in explained.rows] == ["start", "end"]


def test_a_span_run_loads_by_path_with_its_task(tmp_path):
    vocab = Vocabulary([*SPECIALS, "who", "founded"])
    config = SpanModelConfig("span_pointer", len(vocab), 4, 6)
    torch.manual_seed(0)
    save_span_model(tmp_path / "best.safetensors", SpanPointer(len(vocab), 4, 6), config,
                    vocab, None, {"task": "span"}, 3)  # fmt: skip
    mine = ptrnet.load(tmp_path, task="span")
    assert mine.loaded.step == 3 and mine.loaded.config == config
    answer = mine.answer("ann founded bo in 1990 .", "who founded bo ?").split()
    assert answer and " ".join(answer) in "ann founded bo in 1990 ."


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda r: r.answer("", "who ?"), ValueError, "the passage has no words"),
        (lambda r: r.answer("a | b", "who ?"), ValueError, "the passage may not contain '|'"),
        (lambda r: r.answer("a b", "?" * 2001), ValueError, "over the limit of 2,000"),
        (
            lambda r: r.answer("a b", "who ?", decode="top_k"),
            ValueError,
            "unknown strategy 'top_k'",
        ),
        (lambda r: r.answer("a b", "who ?", beam_width=0), ValueError, "beam_width must be an"),
        (
            lambda r: r.answer("a b", "who ?", decode="beam", beam_width=132),
            ValueError,
            "at most 131",
        ),
        (lambda r: ptrnet.load("span", device="cuda"), ValueError, "runs on the CPU only"),
        (lambda r: ptrnet.load("span", task="tsp"), UsageError, "trained on span, not tsp"),
        (lambda r: ptrnet.load("tsp", task="span"), UsageError, "trained on tsp, not span"),
        (lambda r: ptrnet.PointerNetwork.from_pretrained("span"), ValueError, "not a Ptr-Net"),
    ],
)
def test_bad_input_is_one_clear_error(reader, call, error, message):
    with pytest.raises(error, match=message):
        call(reader)


SEED_RANGE = "seed must be an integer from 0 to 2"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.answer("a b", "who ?", seed=2**64), SEED_RANGE),
        (lambda r: r.answer("a b", "who ?", seed=-1), SEED_RANGE),
        (lambda r: r.answer("a b", "who ?", seed=1.5), SEED_RANGE),
        (lambda r: r.answer("a b", "who ?", seed=True), SEED_RANGE),
        (lambda r: r.answer("a b", "who ?", decode="beam", beam_width=True),
         "beam_width must be an integer >= 1, got True"),
        (lambda r: r.answer_all([("a b", "who ?")], batch_size=-1), "batch_size must be an"),
        (lambda r: r.answer_all([("a b", "who ?")], batch_size=0), "batch_size must be an"),
        (lambda r: r.answer_all([("a b", "who ?")], batch_size=True), "batch_size must be an"),
        (lambda r: r.explain("a b", "who ?", top=-1), "top must be an integer >= 1, got -1"),
        (lambda r: r.explain("a b", "who ?", top=0), "top must be an integer >= 1, got 0"),
    ],
)  # fmt: skip
def test_seeds_and_counts_are_checked_as_the_point_api_checks_them(reader, call, message):
    """Before any decoding, as ``Solver.solve`` does (check_seed, at_least_one): no torch
    error, no empty answer list for a negative batch size."""
    with pytest.raises(ValueError, match=message):
        call(reader)


def test_the_largest_seed_is_taken(reader):
    assert reader.answer(PASSAGE, "Who founded Mivel Labs?", seed=2**64 - 1) == "kanori sato"
