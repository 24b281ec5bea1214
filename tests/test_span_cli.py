"""``ptrnet generate|train|eval|predict span``: a generated file goes through a trained run and
back (eval's JSON against SQuAD's metrics recomputed on predict's answers), ``--explain`` shows
both pointers, the test stream is the default, and copy-only options are refused in one
line."""

import json

import pytest

from ptrnet.tasks import Stream
from ptrnet.tasks.span import find_spans, sample_pair, split_source
from ptrnet.text.format import read_pairs
from ptrnet.text.metrics import squad_f1

TRAIN = ("train", "span", "--threads", "1", "-q", "--embed", "8", "--hidden", "8", "--steps")
TRAIN += ("12", "--batch-size", "16", "--val-count", "8", "--val-every", "6", "--out", "run")


@pytest.fixture
def run(cli):
    assert cli(*TRAIN)[0] == 0
    assert cli("generate", "span", "--count", "20", "--seed", "3", "-o", "d.txt", "-q")[0] == 0
    return cli


def test_generate_writes_the_test_stream_by_default(cli, tmp_path):
    assert cli("generate", "span", "--count", "5", "--seed", "3", "-o", "d.txt", "-q")[0] == 0
    assert read_pairs(tmp_path / "d.txt") == [sample_pair(3, i, Stream.TEST) for i in range(5)]
    assert (
        cli("generate", "span", "--count", "5", "--seed", "3", "--stream", "0", "-o", "t.txt")[0]
        == 0
    )
    assert read_pairs(tmp_path / "t.txt")[0] == sample_pair(3, 0, Stream.TRAIN)


def test_eval_and_predict_round_trip(run, tmp_path):
    status, out, _ = run("eval", "span", "d.txt", "--model", "run", "--json")
    metrics = json.loads(out)
    assert status == 0 and set(metrics) == {"exact_match", "f1", "count"}
    assert run("predict", "span", "d.txt", "--model", "run", "-o", "p.txt", "-q")[0] == 0
    gold, predicted = read_pairs(tmp_path / "d.txt"), read_pairs(tmp_path / "p.txt", False)
    assert [p.source for p in predicted] == [p.source for p in gold]
    for p in predicted:  # every answer is a span of its passage
        assert not p.target or find_spans(split_source(p.source)[0], p.target)
    exact = sum(p.target == g.target for p, g in zip(predicted, gold, strict=True)) / len(gold)
    f1 = sum(squad_f1(p.target, g.target) for p, g in zip(predicted, gold, strict=True))
    assert metrics["exact_match"] == pytest.approx(exact)
    assert metrics["f1"] == pytest.approx(f1 / len(gold))
    status, out, _ = run("eval", "span", "d.txt", "--model", "run")
    assert status == 0 and "exact_match" in out and "span_pointer" in out


def test_explain_shows_both_pointers(run):
    passage = "ana bo founded zeta labs in rome in 1999 . | who founded zeta labs ?"
    status, out, _ = run("predict", "span", passage, "--model", "run", "--explain")
    lines = out.splitlines()
    assert status == 0 and lines[0] == passage and lines[1].startswith("  answer:")
    assert [line.split()[0] for line in lines[2:]] == ["start", "end"]
    for line in lines[2:]:
        probabilities = [float(p.strip("()")) for p in line.split()[2::2]]
        assert 0 < sum(probabilities) <= 1.0 + 1e-3 and probabilities == sorted(probabilities)[::-1]


def test_copy_options_and_bad_lines_are_one_line_errors(run, tmp_path):
    status, _, err = run("eval", "span", "d.txt", "--model", "run", "--p-gen", "0.5")
    assert status == 2 and err.count("\n") == 1 and "--p-gen: task span" in err
    (tmp_path / "bad.txt").write_text("no question here\tx\n")
    status, _, err = run("eval", "span", "bad.txt", "--model", "run")
    assert (status, err) == (2, "ptrnet: error: bad.txt: example 1: no '|' between passage "
                                "and question\n")  # fmt: skip
    status, _, err = run("eval", "copy", "d.txt", "--model", "run")
    assert status != 0 and "not a copy-task checkpoint" in err


def test_predict_refuses_a_second_question_mark_as_the_api_does(cli):
    status, out, err = cli("predict", "span", "ann founded bo . | who | founded bo ?")
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert err.startswith("ptrnet: error: more than one '|'")
