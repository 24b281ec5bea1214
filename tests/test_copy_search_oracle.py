"""The copy task's decoders against a fixture of the copy-specific greedy and beam loops they
replaced (tests/copy_search_oracle.py wrote it, before the shared search): the bundled model
must give the same ids, words and p_gen, and log-probabilities within 1e-5, greedy and beam
(widths 3 and 5), p_gen learned, 1 and 0; and :func:`explain` the same outputs."""

import json

import pytest
import torch

from ptrnet.decoding.options import DecodeOptions
from ptrnet.text.decode import decode_sources, explain
from ptrnet.text.evaluate import load
from tests.copy_search_oracle import FIXTURE, RUNS, sources

torch.set_num_threads(1)

ORACLE = json.loads(FIXTURE.read_text())


@pytest.fixture(scope="module")
def bundled():
    return load(None)


@pytest.mark.parametrize("run", range(len(RUNS)))
def test_decodes_match_the_copy_loops_they_replaced(bundled, run):
    expected = ORACLE["runs"][run]
    strategy, width, p_gen = RUNS[run]
    assert (expected["strategy"], expected["width"], expected["p_gen"]) == (strategy, width, p_gen)
    options = DecodeOptions(strategy, beam_width=width, batch_size=16)
    decoded = decode_sources(bundled.model, bundled.vocab, sources(), options, p_gen)
    assert len(decoded) == len(expected["outputs"]) == 40
    for got, want in zip(decoded, expected["outputs"], strict=True):
        assert list(got.ids) == want["ids"]
        assert list(got.words) == want["words"]
        assert got.p_gen == pytest.approx(want["p_gen"], abs=1e-5)
        assert got.log_prob == pytest.approx(want["log_prob"], abs=1e-5)


def test_explanations_match(bundled):
    for want in ORACLE["explanations"]:
        source = sources()[want["index"]]
        shown = explain(bundled.model, bundled.vocab, source, want["p_gen_override"])
        assert list(shown.output) == want["output"]
        assert shown.p_gen.tolist() == pytest.approx(want["p_gen"], abs=1e-5)
        chosen = [float(shown.mixture[t, shown.vocabulary.index(w)])
                  for t, w in enumerate(shown.output)]  # fmt: skip
        assert chosen == pytest.approx(want["chosen"], abs=1e-5)


def test_the_fixture_tells_greedy_from_beam():
    """Beam search finds other outputs than greedy on some sentences (p_gen 1 and 0), so the
    fixture would catch a beam search that fell back to greedy."""
    by_run = {(r["strategy"], r["width"], r["p_gen"]): r["outputs"] for r in ORACLE["runs"]}
    for p_gen in (1.0, 0.0):
        greedy, beam = by_run["greedy", 1, p_gen], by_run["beam", 5, p_gen]
        assert any(g["ids"] != b["ids"] for g, b in zip(greedy, beam, strict=True))
