"""Files that are not what they claim: paths that are not regular files (``/dev/zero``, a FIFO,
a directory, links to them) where ptrnet reads a whole file, ``.npy`` headers declaring shapes
larger than memory or than the file, and JSON nested past any parser's recursion. Each is one
line naming the file, found before anything is read without bound or allocated, and never
blocks. Property-based parts run a fixed, derandomised example budget (reproducible in CI)."""

from __future__ import annotations

import faulthandler
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptrnet.cli.main import main
from ptrnet.inference import SIZES_JSON, read_size_routes
from ptrnet.io.errors import InputError
from ptrnet.io.instances import read_instances
from ptrnet.io.json_file import MAX_JSON_DEPTH, JsonError, nesting_depth, parse_json, read_json_file
from ptrnet.io.limits import MAX_POINTS
from ptrnet.io.text import read_regular_file
from ptrnet.model import ModelConfig
from ptrnet.runs import CONFIG_JSON
from ptrnet.runs.checkpoint import read_checkpoint_file
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.runs.config_file import check_config_file
from ptrnet.tasks import get_task
from tests.test_training import tiny_run

TSP, SORT = get_task("tsp"), get_task("sort")
ONE_LINE = 600  # the most characters an error line may have


def budget(count: int) -> settings:
    """``count`` examples from a fixed seed, no per-example deadline (CI machines vary)."""
    return settings(
        max_examples=count,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )


def one_line(error: Exception, path: str | os.PathLike[str]) -> str:
    """``str(error)``, checked to be one short line that starts with ``path``."""
    text = str(error)
    assert "\n" not in text and len(text) < ONE_LINE and text.startswith(os.fspath(path)), text
    return text


@pytest.fixture
def watchdog():
    """End the test run with a traceback if a read blocks (a FIFO opened for reading)."""
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


# -- paths that are not regular files --------------------------------------------------------


def make_path(kind: str, path: Path) -> Path:
    """Make ``path`` a ``kind`` of thing that is not a regular file."""
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dangling link":
        path.symlink_to(path.parent / "nothing-here")
    elif kind == "link loop":
        path.symlink_to(path)
    elif kind == "link to a fifo":
        os.mkfifo(path.parent / "a-fifo")
        path.symlink_to(path.parent / "a-fifo")
    else:  # "link to /dev/zero", "link to /dev/null"
        path.symlink_to(kind.split()[-1])
    return path


KINDS = [
    "directory",
    "fifo",
    "link to /dev/zero",
    "link to /dev/null",
    "link to a fifo",
    "dangling link",
    "link loop",
]
PROBLEMS = {
    "directory": "a directory, not a regular file",
    "fifo": "a FIFO (named pipe), not a regular file",
    "link to /dev/zero": "a character device, not a regular file",
    "link to /dev/null": "a character device, not a regular file",
    "link to a fifo": "a FIFO (named pipe), not a regular file",
    "dangling link": "No such file or directory",
    "link loop": "Too many levels of symbolic links",
}
READERS = {
    "file": lambda path: read_regular_file(path),
    "JSON": lambda path: read_json_file(path),
    "checkpoint": lambda path: read_checkpoint_file(path),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("kind", KINDS)
def test_a_path_that_is_not_a_regular_file_is_one_line_never_read(tmp_path, watchdog, kind, reader):
    path = make_path(kind, tmp_path / "model.safetensors")
    with pytest.raises(InputError) as err:
        READERS[reader](path)
    assert PROBLEMS[kind] in one_line(err.value, path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("kind", KINDS)
def test_a_sizes_json_that_is_not_a_regular_file_is_one_line(tmp_path, watchdog, kind):
    path = make_path(kind, tmp_path / SIZES_JSON)
    with pytest.raises(InputError) as err:
        read_size_routes(str(tmp_path))
    assert PROBLEMS[kind] in one_line(err.value, path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("kind", KINDS)
def test_a_config_json_that_is_not_a_regular_file_is_one_line(tmp_path, watchdog, kind):
    saved = RunConfig(ModelConfig(input_dim=1), TrainConfig(task="sort", sizes="5", steps=1))
    path = make_path(kind, tmp_path / CONFIG_JSON)
    with pytest.raises(InputError) as err:
        check_config_file(str(tmp_path), saved, saved)
    assert PROBLEMS[kind] in one_line(err.value, path)


def test_model_dev_zero_is_one_line(tmp_path, capsys):
    """The reproducer: ``--model /dev/zero`` grew to 2.5 GB and ended in MemoryError."""
    (tmp_path / "in.txt").write_text("0.3 0.1 0.2\n")
    status = main(["predict", "sort", str(tmp_path / "in.txt"), "-o", "-", "--model", "/dev/zero"])
    err = capsys.readouterr().err
    assert (status, err) == (
        1,
        "ptrnet: error: /dev/zero: a character device, not a regular file\n",
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_model_fifo_is_one_line_and_does_not_block(tmp_path):
    """The reproducer: ``--model fifo.safetensors`` blocked forever (nothing writes to it)."""
    os.mkfifo(tmp_path / "fifo.safetensors")
    (tmp_path / "in.txt").write_text("0.3 0.1 0.2\n")
    command = [sys.executable, "-m", "ptrnet", "predict", "sort", "in.txt", "-o", "-"]
    done = subprocess.run(
        [*command, "--model", "fifo.safetensors"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    expected = "ptrnet: error: fifo.safetensors: a FIFO (named pipe), not a regular file\n"
    assert (done.returncode, done.stderr) == (1, expected)


def test_resume_with_config_json_linked_to_dev_zero_is_one_line(tmp_path, capsys):
    """The reproducer: ``config.json`` a symlink to ``/dev/zero`` on ``--resume``."""
    resume = tiny_run(tmp_path / "run")
    config = tmp_path / "run" / CONFIG_JSON
    config.unlink()
    config.symlink_to("/dev/zero")
    capsys.readouterr()
    assert main([*resume, "--steps", "6"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ptrnet: error: {config}: a character device, not a regular file; ")
    assert err.count("\n") == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_resume_with_a_fifo_as_its_log_is_one_line(tmp_path, watchdog, capsys):
    resume = tiny_run(tmp_path / "run")
    log = tmp_path / "run" / "log.csv"
    log.unlink()
    os.mkfifo(log)
    capsys.readouterr()
    assert main([*resume, "--steps", "6"]) == 1
    assert capsys.readouterr().err == (
        f"ptrnet: error: {log}: a FIFO (named pipe), not a regular file\n"
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
@pytest.mark.parametrize("sizes", [[], ["-n", "5"]])
def test_training_data_that_is_not_a_regular_file_is_one_line(
    tmp_path, watchdog, capsys, kind, sizes
):
    """Training reads its data more than once (sizes, digest, every epoch): a FIFO blocked."""
    data = make_path(kind, tmp_path / "data.txt")
    out = tmp_path / "run"
    argv = ["train", "sort", "--dry-run", "--data", str(data), *sizes, "--out", str(out), "-q"]
    assert main(argv) == 1
    assert capsys.readouterr().err == f"ptrnet: error: {data}: {PROBLEMS[kind]}\n"
    assert not out.exists()


def test_data_from_dev_zero_is_one_line_and_pipes_still_read(tmp_path, capsys):
    """A device is not data (it was read up to the 4 GiB limit); a pipe still is."""
    assert main(["solve", "sort", "/dev/zero", "-o", "-"]) == 1
    assert capsys.readouterr().err == (
        "ptrnet: error: /dev/zero: a character device, not a file or a pipe\n"
    )
    command = [sys.executable, "-m", "ptrnet", "solve", "sort", "/dev/stdin", "-o", "-", "-q"]
    done = subprocess.run(command, input="0.3 0.1 0.2\n", capture_output=True, text=True,
                          timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")


# -- .npy headers ------------------------------------------------------------------------------


def npy_bytes(shape: tuple, descr: str = "<f8", body: bytes = b"", version=(1, 0)) -> bytes:
    """A .npy file: a header declaring ``descr`` and ``shape``, then ``body``."""
    stream = io.BytesIO()
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    if version == (1, 0):
        np.lib.format.write_array_header_1_0(stream, header)
    else:
        np.lib.format.write_array_header_2_0(stream, header)
    return stream.getvalue() + body


def test_an_npy_declaring_a_huge_shape_is_one_line(tmp_path, capsys):
    """The reproducer: ``(10**6, 10**6, 2)`` in a 128-byte file tried to allocate 14.6 TiB."""
    (tmp_path / "huge.npy").write_bytes(npy_bytes((10**6, 10**6, 2)))
    assert main(["solve", "tsp", str(tmp_path / "huge.npy"), "-o", "-"]) == 1
    assert capsys.readouterr().err == (
        f"ptrnet: error: {tmp_path / 'huge.npy'}: array of shape (1000000, 1000000, 2): 1000000 "
        f"points per instance; task tsp takes 2..{MAX_POINTS}\n"
    )


def test_an_npy_declaring_more_bytes_than_it_holds_is_one_line(tmp_path):
    path = tmp_path / "short.npy"
    path.write_bytes(npy_bytes((10**5, 1000, 2), body=bytes(64)))
    with pytest.raises(InputError) as err:
        read_instances(path, TSP)
    assert one_line(err.value, path).endswith(
        "array of shape (100000, 1000, 2) of float64 declares 1600000000 bytes; the file holds "
        "64 after its header"
    )


def test_an_npy_of_no_instances_is_an_error_naming_the_file(tmp_path, capsys):
    """A (0, n, 2) array wrote 0 instances and exited 0; an empty text file is an error."""
    np.save(tmp_path / "none.npy", np.zeros((0, 5, 2)))
    assert main(["solve", "tsp", str(tmp_path / "none.npy"), "-o", str(tmp_path / "o.txt")]) == 1
    assert capsys.readouterr().err == (
        f"ptrnet: error: {tmp_path / 'none.npy'}: array of shape (0, 5, 2): no instances\n"
    )
    assert not (tmp_path / "o.txt").exists()


DIMENSIONS = st.one_of(st.integers(0, 12), st.integers(0, 10**20), st.just(MAX_POINTS + 1))
DESCRS = st.sampled_from(["<f8", ">f4", "<i8", "|u1", "|b1", "<c16", "|O", "<U3", "<f2"])


@st.composite
def npy_files(draw: st.DrawFn) -> bytes:
    """A .npy header with any shape and dtype, and a body of any length up to a little more
    than the header declares (when that is small)."""
    shape = tuple(draw(st.lists(DIMENSIONS, max_size=4)))
    descr = draw(DESCRS)
    declared = int(np.prod(shape, dtype=object)) * np.dtype(descr).itemsize if shape else 8
    length = draw(st.integers(0, min(declared, 4096) + 16))
    body = draw(st.binary(min_size=length, max_size=length)) if draw(st.booleans()) else bytes(
        length
    )  # fmt: skip
    return npy_bytes(shape, descr, body, draw(st.sampled_from([(1, 0), (2, 0)])))


@budget(150)
@given(data=npy_files(), task=st.sampled_from([TSP, SORT]))
def test_any_declared_npy_shape_is_read_or_one_line(tmp_path_factory, data, task):
    """Whatever the header declares, the file is read (as numpy reads it) or refused in one
    line; nothing is allocated beyond the file's bytes."""
    path = tmp_path_factory.getbasetemp() / "declared.npy"
    path.write_bytes(data)
    try:
        instances = read_instances(path, task)
    except InputError as err:
        one_line(err, path)
        return
    expected = np.load(io.BytesIO(data), allow_pickle=False).astype(np.float64)
    got = np.stack([instance.points for instance in instances]) if instances else None
    assert got is None or np.array_equal(got.reshape(expected.shape), expected)


# -- nested JSON -------------------------------------------------------------------------------

JSON_LEAVES = st.one_of(
    st.none(),
    st.integers(),
    st.text(alphabet='[]{}"\\ab,:', max_size=12),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=40,
)


def depth(value: object) -> int:
    """Reference nesting depth of a JSON value."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


@budget(200)
@given(value=JSON_VALUES, extra=st.integers(0, 80))
def test_nesting_depth_matches_the_parsers(value, extra):
    """Depth is counted as the parser nests, however brackets, quotes and backslashes sit in
    strings; a value wrapped past the limit is refused, one within it is read."""
    wrapped = json.dumps(value)
    for _ in range(extra):
        wrapped = f"[{wrapped}]"
    assert nesting_depth(wrapped.encode()) == depth(value) + extra
    if depth(value) + extra > MAX_JSON_DEPTH:
        with pytest.raises(JsonError, match="nested more than"):
            parse_json(wrapped, list if extra else type(value))
    elif isinstance(value, dict) or extra:
        assert parse_json(wrapped, list if extra else dict) == json.loads(wrapped)


@budget(200)
@given(
    text=st.text(alphabet='[]{}"\\,:1 ', max_size=200),
    prefix=st.sampled_from(["", "[" * 5000, '"' + "[" * 5000, "{" * 3000]),
)
def test_any_bracket_text_parses_or_fails_in_one_line(text, prefix):
    """Text that is mostly brackets, quotes and backslashes, deep or not: the value json reads,
    or one JsonError line; never a RecursionError."""
    try:
        value = parse_json(prefix + text, object)
    except JsonError as err:
        assert "\n" not in str(err) and len(str(err)) < ONE_LINE
        return
    assert value == json.loads(prefix + text)
