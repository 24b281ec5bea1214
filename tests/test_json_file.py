"""The bounded JSON reader (:mod:`ptrnet.io.json_file`) and every JSON ptrnet reads through it:
a run's ``config.json``, a safetensors header, its ``ptrnet`` metadata (point and copy
checkpoints) and a model folder's ``sizes.json``. JSON nested 100,000 deep is one line naming
the file, never a ``RecursionError``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptrnet.cli.main import main
from ptrnet.inference import SIZES_JSON, read_size_routes
from ptrnet.io.errors import InputError
from ptrnet.io.json_file import MAX_JSON_DEPTH, JsonError, nesting_depth, parse_json, read_json_file
from ptrnet.runs.checkpoint import CheckpointError, load_checkpoint
from ptrnet.text.checkpoint import load_copy_model
from tests.test_training import tiny_run
from tests.test_untrusted_checkpoints import edit_meta, join, split, tiny_checkpoint

DEEP = "[" * 100_000


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_json_nested_at_the_limit_is_read_and_one_deeper_is_refused_before_parsing():
    assert parse_json(nested(MAX_JSON_DEPTH), list) == json.loads(nested(MAX_JSON_DEPTH))
    with pytest.raises(JsonError, match=f"^nested more than {MAX_JSON_DEPTH} levels deep"):
        parse_json(nested(MAX_JSON_DEPTH + 1), list)
    with pytest.raises(JsonError, match="^metadata is nested more than"):
        parse_json(DEEP, name="metadata")


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ('{"a": "[[[[{{{{"}', 1),  # brackets in a string do not nest
        (r'["\"[[", ["\\", [1]]]', 3),  # nor after an escaped quote; an escaped \ ends none
        ('"' + "\\\\" * 50 + '"', 0),
        ("[[], [[]], {}]", 3),
    ],
)
def test_nesting_depth_counts_only_brackets_outside_strings(text, depth):
    assert nesting_depth(text.encode()) == depth


@pytest.mark.parametrize(
    ("text", "kind", "problem", "line"),
    [
        ("[1, 2]", dict, "not a JSON object (it is an array)", None),
        ('{"a": 1}', list, "not a JSON array (it is an object)", None),
        ("null", dict, "not a JSON object (it is null)", None),
        ('{\n"a": }', dict, "not valid JSON (Expecting value)", 2),
        (b'{"a": "\xff"}', dict, "not UTF-8 text", None),
        ("[" * 11 + "]" * 11, list, "22 bytes, over the limit of 20 bytes", None),
    ],
)
def test_json_of_another_type_size_or_encoding_is_one_line(text, kind, problem, line):
    with pytest.raises(JsonError) as err:
        parse_json(text, kind, limit=20)
    assert (str(err.value), err.value.line) == (problem, line)


def test_a_json_file_error_names_the_file_and_line(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"a":\n\n')
    with pytest.raises(InputError, match=r"x\.json:3: not valid JSON"):
        read_json_file(path)
    path.write_text(DEEP)
    with pytest.raises(InputError, match=r"x\.json: nested more than 64 levels deep"):
        read_json_file(path)


def test_resume_with_a_deeply_nested_config_json_is_one_line(tmp_path, capsys):
    """The reproducer: ``config.json`` holding 100,000 ``[`` on ``--resume``."""
    resume = tiny_run(tmp_path / "run")
    (tmp_path / "run" / "config.json").write_text(DEEP)
    capsys.readouterr()
    assert main([*resume, "--steps", "6"]) == 1
    err = capsys.readouterr().err
    expected = f"ptrnet: error: {tmp_path / 'run' / 'config.json'}: nested more than 64 levels"
    assert err.startswith(expected) and err.count("\n") == 1


def deep_header(data: bytes) -> bytes:
    """``data`` with a header of 100,000 ``[`` (its size field fitting)."""
    body = DEEP.encode()
    return len(body).to_bytes(8, "little") + body + data[8 + int.from_bytes(data[:8], "little") :]


def deep_metadata(data: bytes) -> bytes:
    header, body = split(data)
    header["__metadata__"]["ptrnet"] = DEEP
    return join(header, body)


@pytest.mark.parametrize(
    ("damage", "problem"),
    [(deep_header, "header is nested more than 64"), (deep_metadata, "metadata is nested more")],
)
def test_a_checkpoint_with_deeply_nested_json_is_one_line(tmp_path, damage, problem):
    path = tmp_path / "model.safetensors"
    path.write_bytes(damage(tiny_checkpoint(path)))
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(path)
    assert str(err.value).startswith(f"{path}: not a ptrnet checkpoint ({problem}")
    assert "\n" not in str(err.value)


def test_a_copy_checkpoint_with_deeply_nested_metadata_is_one_line(tmp_path):
    run = tmp_path / "copy"
    assert main(["train", "copy", "--dry-run", "-q", "--out", str(run)]) == 0
    path = run / "best.safetensors"
    path.write_bytes(edit_meta(path.read_bytes(), lambda meta: {**meta, "info": json.loads(
        nested(MAX_JSON_DEPTH))}))  # fmt: skip
    with pytest.raises(CheckpointError, match="metadata is nested more than 64 levels deep"):
        load_copy_model(path)


def test_a_deeply_nested_sizes_json_is_one_line(tmp_path: Path):
    (tmp_path / SIZES_JSON).write_text(DEEP)
    with pytest.raises(InputError) as err:
        read_size_routes(str(tmp_path))
    assert str(err.value) == (
        f"{tmp_path / SIZES_JSON}: not a size routing file (nested more than 64 levels deep, "
        "the limit)"
    )
