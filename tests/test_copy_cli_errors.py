"""Bad input to ``ptrnet train|eval|predict copy`` is a one-line error naming the file (and line),
never a traceback, garbage output or another run overwritten: run directories that already hold
a run, files that are not UTF-8 or have overlong lines, and ``predict copy``'s choice between
a file and a sentence."""

import os
import subprocess
import sys
import threading

import pytest
import torch

from ptrnet.cli.sentences import input_file, looks_like_path
from ptrnet.io.errors import InputError
from ptrnet.io.limits import MAX_LINE_BYTES
from ptrnet.text.config import CopyTrainConfig
from ptrnet.text.format import read_pairs
from ptrnet.text.train import train_copy
from ptrnet.training.loop import RunDirError

torch.set_num_threads(1)

RUN_FILES = ("last.safetensors", "best.safetensors")  # a run of any task has one
USED = "already holds a run; pass --resume or another --out\n"
TRAIN = ("train", "copy", "--dry-run", "--threads", "1", "-q", "--out")
SENTENCE = "kiki won the cup"


def _contents(directory) -> dict[str, bytes]:
    """Every file of ``directory`` (not recursive) and its bytes."""
    return {p.name: p.read_bytes() for p in directory.iterdir()}


# Run folders: train copy wrote over any run directory, of copy or of another task.


@pytest.mark.parametrize("name", RUN_FILES)
def test_train_refuses_a_directory_holding_any_run(cli, tmp_path, name):
    """A run of any task (its last.safetensors or best.safetensors) is left as it was, and
    nothing is written beside it."""
    run = tmp_path / "run"
    run.mkdir()
    (run / name).write_bytes(b"another run's file")
    before = _contents(run)
    status, _, err = cli(*TRAIN, "run")
    assert (status, err) == (2, f"ptrnet: error: run {USED}")
    assert _contents(run) == before


def test_train_twice_into_one_directory_keeps_the_first_run(cli, tmp_path):
    assert cli(*TRAIN, "cr")[0] == 0
    first = _contents(tmp_path / "cr")
    assert {"best.safetensors", "best.json", "log.csv", "last.safetensors"} <= set(first)
    status, _, err = cli(*TRAIN, "cr", "--seed", "3")
    assert (status, err) == (2, f"ptrnet: error: cr {USED}")
    assert _contents(tmp_path / "cr") == first


def test_train_into_an_empty_or_unrelated_directory(cli, tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "notes.txt").write_text("mine\n")
    assert cli(*TRAIN, "run")[0] == 0
    assert (tmp_path / "run" / "notes.txt").read_text() == "mine\n"
    assert (tmp_path / "run" / "best.safetensors").is_file()


def test_train_copy_api_refuses_before_writing(tmp_path):
    (tmp_path / "last.safetensors").write_bytes(b"x")
    config = CopyTrainConfig("pointer_generator", "copy", steps=1, val_every=1, val_count=2)
    with pytest.raises(RunDirError, match="already holds a run"):
        train_copy(config, tmp_path, log=lambda line: None)
    assert [p.name for p in tmp_path.iterdir()] == ["last.safetensors"]


# Reading pairs: read_pairs opened files with plain open(): a UnicodeDecodeError traceback and no
# line-length limit.


def test_reader_refuses_non_utf8_with_file_and_line(tmp_path):
    path = tmp_path / "s1.txt"
    path.write_bytes(b"hello world\tfoo\n\xff\xfe bad\n")
    with pytest.raises(InputError) as caught:
        read_pairs(path, need_target=False)
    assert str(caught.value) == f"{path}:2: not UTF-8 text"


def test_reader_refuses_overlong_lines_and_skips_a_bom(tmp_path):
    path = tmp_path / "long.txt"
    path.write_bytes(b"kiki won\tkiki\n" + b"a" * (MAX_LINE_BYTES + 1) + b"\n")
    with pytest.raises(InputError, match=r"long\.txt:2: line longer than the limit"):
        read_pairs(path)
    path.write_bytes(b"\xef\xbb\xbfkiki won\tkiki\r\nthe cup\tcup\r")
    assert [p.source[0] for p in read_pairs(path)] == ["kiki", "the"]


@pytest.mark.parametrize("command", ["predict", "eval"])
def test_non_utf8_file_is_a_one_line_error(cli, tmp_path, command):
    (tmp_path / "s1.txt").write_bytes(b"hello world\tfoo\n\xff\xfe bad\n")
    status, out, err = cli(command, "copy", "s1.txt")
    assert (status, out, err) == (1, "", "ptrnet: error: s1.txt:2: not UTF-8 text\n")


# Sentences or files: predict copy read any argument that is not a regular file as a sentence.


MISSING = "no such file (for a sentence, pass --text)"


@pytest.mark.parametrize("name", ["sentss.txt", "data/test", "./sents", "~/sents.tsv"])
def test_predict_a_missing_file_is_an_error_not_a_sentence(cli, tmp_path, name):
    (tmp_path / "data").mkdir()  # data/test: an entry of a directory that exists
    status, out, err = cli("predict", "copy", name)
    assert (status, out, err) == (1, "", f"ptrnet: error: {name}: {MISSING}\n")


@pytest.mark.parametrize("word", ["24/7", "and/or", "e.g.", "v1.2", "U.S", "Mr.Smith"])
def test_predict_a_one_word_sentence_is_a_sentence(cli, word):
    """A word with a ``/`` or a dot in it is not a file name unless it ends in a data file's
    extension or names an entry of a directory that exists (``24/7`` was ``no such file``)."""
    status, out, err = cli("predict", "copy", word)
    assert (status, err) == (0, "") and out.count("\n") == 1
    assert cli("predict", "copy", word, "--text") == (status, out, err)


def test_predict_text_makes_any_input_a_sentence(cli, tmp_path):
    (tmp_path / "kiki.txt").write_text(f"{SENTENCE}\n{SENTENCE}\n")
    as_file = cli("predict", "copy", "kiki.txt")[1]
    status, out, err = cli("predict", "copy", "kiki.txt", "--text")
    assert (status, err) == (0, "") and out.count("\n") == 1 and out != as_file
    status, out, err = cli("predict", "copy", "sentss.txt", "--text")
    assert (status, err) == (0, "") and out.count("\n") == 1
    status, _, err = cli("predict", "tsp", "x.txt", "-o", "-", "--text")
    assert status == 2 and "--text applies to tasks that take sentences" in err


def test_predict_a_directory_is_an_error(cli, tmp_path):
    (tmp_path / "adir").mkdir()
    status, out, err = cli("predict", "copy", "adir")
    assert (status, out) == (1, "") and err.startswith("ptrnet: error: adir: cannot read")
    assert len(err.splitlines()) == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_predict_reads_a_named_pipe_as_a_file(cli, tmp_path):
    os.mkfifo(tmp_path / "pipe")

    def write() -> None:
        with open(tmp_path / "pipe", "w") as stream:
            stream.write(f"{SENTENCE}\n{SENTENCE}\n")

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    status, out, _ = cli("predict", "copy", "pipe")
    writer.join(10)
    expected = cli("predict", "copy", SENTENCE)[1]
    assert status == 0 and out == expected * 2 and "pipe" not in out


@pytest.mark.parametrize("name", ["/dev/stdin", "-"])
def test_predict_reads_standard_input_as_a_file(cli, name):
    if not os.path.exists("/dev/stdin"):
        pytest.skip("no /dev/stdin")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "ptrnet", "predict", "copy", name, "--threads", "1"]
    done = subprocess.run(
        command, input=f"{SENTENCE}\n", capture_output=True, text=True, env=env, timeout=120
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == cli("predict", "copy", SENTENCE)[1]


@pytest.mark.parametrize(
    ("text", "is_path"),
    [
        ("sentss.txt", True),
        ("SENTS.TXT", True),
        ("s.json", True),
        ("nodir/s.tsv", True),
        ("data/test", True),  # data/ exists
        ("/tmp/my sentences", True),
        ("../s", True),
        (SENTENCE, False),
        ("kiki won 3/4 of the races.txt", False),  # a sentence: spaces and no path start
        ("kiki", False),
        ("3.5", False),
        ("e.g.", False),
        ("e.g", False),
        ("v1.2", False),
        ("U.S", False),
        ("Mr.Smith", False),
        ("24/7", False),  # 24/ is no directory
        ("nodir/test", False),
    ],
)
def test_looks_like_path(text, is_path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    assert looks_like_path(text) is is_path


def test_input_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kiki").write_text(f"{SENTENCE}\n")
    assert input_file("kiki") == "kiki"  # an existing path is a file, whatever its name
    assert input_file(SENTENCE) is None
    with pytest.raises(InputError, match=r"^s\.txt: no such file \(for a sentence, pass --text\)$"):
        input_file("s.txt")


def test_a_beam_width_without_beam_search_is_refused(cli):
    status, _, err = cli("predict", "copy", SENTENCE, "--beam-width", "3")
    assert status == 2 and "--beam-width 3: a beam width needs --decode beam" in err


@pytest.mark.parametrize(
    "flags, problem",
    [
        (
            ["--multistart"],
            "--multistart: task copy takes sentences, and --multistart applies to tasks that "
            "take points",
        ),
        (["--samples", "2"], "--samples 2: samples > 1 needs sampling, not greedy decoding"),
        (["--decode", "sample", "--samples", "500"], "--samples 500: task copy takes at most"),
    ],
)
def test_a_strategy_sentences_do_not_take_is_one_line(cli, flags, problem):
    status, out, err = cli("predict", "copy", SENTENCE, *flags)
    assert status == 2 and out == "" and problem in err and len(err.splitlines()) == 1


def test_sampling_is_seeded(cli):
    """``--decode sample`` draws from the bundled model's mixture: a seed gives the same words."""
    runs = [cli("predict", "copy", SENTENCE, "--decode", "sample", "--seed", "5") for _ in "ab"]
    assert runs[0][0] == 0 and runs[0] == runs[1] and runs[0][1].strip()
