"""Limits of the sentence tasks (``copy``): tokens per line and per file, beam width, decoding
batches bounded in tokens, and control characters escaped in every text output."""

import pytest
import torch

from ptrnet.decoding.options import DecodeOptions
from ptrnet.io.errors import InputError
from ptrnet.io.limits import (
    MAX_DECODE_TOKENS,
    MAX_LINE_TOKENS,
    MAX_SENTENCE_BEAM_WIDTH,
)
from ptrnet.text.decode import decode_sources, token_batches
from ptrnet.text.evaluate import load
from ptrnet.text.format import printable, read_pairs

torch.set_num_threads(1)
HUGE = "a " * 524278  # one line of 1 MiB: 524,278 tokens
PAIR = "late on friday akinyi broke the lisbon record\takinyi breaks lisbon record\n"


@pytest.fixture(scope="module")
def copy_model():
    return load(None, "copy")


def test_predict_refuses_a_line_over_the_token_limit(cli, tmp_path):
    (tmp_path / "huge.txt").write_text(PAIR + HUGE + "\n")
    status, out, err = cli("predict", "copy", "huge.txt")
    assert (status, out) == (1, "")
    assert err == "ptrnet: error: huge.txt:2: 524,278 tokens, over the limit of 2,000 per line\n"


def test_eval_refuses_a_line_over_the_token_limit(cli, tmp_path):
    (tmp_path / "huge.txt").write_text((HUGE + "\ta\n") * 16)
    status, out, err = cli("eval", "copy", "huge.txt")
    assert (status, out) == (1, "")
    assert err == "ptrnet: error: huge.txt:1: 524,279 tokens, over the limit of 2,000 per line\n"


def test_a_line_at_the_token_limit_is_read(tmp_path):
    path = tmp_path / "edge.txt"
    path.write_text("a " * (MAX_LINE_TOKENS - 1) + "\tb\n")
    assert len(read_pairs(path)[0].source) == MAX_LINE_TOKENS - 1


def test_the_file_token_limit_names_the_line_that_passes_it(tmp_path, monkeypatch):
    monkeypatch.setattr("ptrnet.text.format.MAX_FILE_TOKENS", 30)
    path = tmp_path / "many.txt"
    path.write_text("# a comment\n" + PAIR * 5)  # 12 tokens a line: the third passes 30
    with pytest.raises(InputError) as caught:
        read_pairs(path)
    assert str(caught.value) == (
        f"{path}:4: the file passes 30 tokens, the limit per file, at this line"
    )


def test_predict_refuses_a_sentence_over_the_token_limit(cli):
    status, out, err = cli("predict", "copy", "--text", "a " * 3000)
    assert (status, out) == (2, "")
    assert err == "ptrnet: error: the sentence has 3,000 tokens, over the limit of 2,000\n"


@pytest.mark.parametrize("command", ["eval", "predict"])
def test_a_beam_wider_than_a_batch_holds_is_refused(cli, tmp_path, command):
    (tmp_path / "s.txt").write_text(PAIR)
    status, out, err = cli(command, "copy", "s.txt", "--decode", "beam", "--beam-width", "500")
    assert (status, out) == (2, "")
    assert err == (
        f"ptrnet: error: --beam-width 500: task copy takes at most {MAX_SENTENCE_BEAM_WIDTH} "
        "beams (a line of 2,000 tokens with them fills one decoding batch)\n"
    )


@pytest.mark.parametrize("width", [1, 5, MAX_SENTENCE_BEAM_WIDTH])
def test_decoding_batches_are_bounded_in_tokens_not_sources(width):
    sources = [("a",) * 1999] * 300 + [("b",) * 3] * 500 + [("c",) * (MAX_LINE_TOKENS - 1)]
    batches = token_batches(sources, 256, width)
    assert [i for start, stop in batches for i in range(start, stop)] == list(range(801))
    for start, stop in batches:
        longest = max(len(s) for s in sources[start:stop]) + 1
        assert (stop - start) * longest * width <= MAX_DECODE_TOKENS
        assert stop - start <= 256


def test_a_source_too_long_for_any_batch_is_refused():
    with pytest.raises(ValueError, match="sentence 2 has 3,000 tokens: with 100 beams"):
        token_batches([("a",), ("a",) * 3000], 256, 100)


def test_batches_cut_by_tokens_decode_as_one_batch(copy_model, monkeypatch):
    sources = [tuple(PAIR.split("\t")[0].split()[k:]) for k in range(6)]
    args = (copy_model.model, copy_model.vocab, sources, DecodeOptions("beam", beam_width=3))
    whole = decode_sources(*args)
    monkeypatch.setattr("ptrnet.text.decode.MAX_DECODE_TOKENS", 3 * 10 * 2)
    assert len(token_batches(sources, 256, 3)) == 3
    split = decode_sources(*args)
    assert [d.words for d in split] == [d.words for d in whole]
    assert [d.log_prob for d in split] == pytest.approx([d.log_prob for d in whole], abs=1e-5)


CONTROL = "news \x1b[31m red \x00 nul at 5 pm"


def test_printable_escapes_control_characters_only():
    assert printable("a\x00b\x1bc\x7f\x85\td é\u200b") == "a\\x00b\\x1bc\\x7f\\x85\td é\u200b"


@pytest.mark.parametrize("where", ["stdout", "file", "explain"])
def test_control_characters_never_reach_an_output_raw(cli, tmp_path, where):
    (tmp_path / "ctl.txt").write_text(CONTROL + "\n")
    extra = {"stdout": (), "file": ("-o", "out.txt"), "explain": ("--explain",)}[where]
    status, out, _ = cli("predict", "copy", "ctl.txt", *extra)
    text = (tmp_path / "out.txt").read_text() if where == "file" else out
    assert status == 0
    assert "\x00" not in text and "\x1b" not in text
    if where != "stdout":  # the source is written too
        assert "news \\x1b [ 31m red \\x00 nul" in text
    if where == "file":
        assert text.count("\n") == 1
