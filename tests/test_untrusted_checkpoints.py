"""Checkpoints that cannot be trusted: truncated, hostile or damaged files and another task's
model are each one clear line before any model is built, and every bundled model carries a
checksum that catches a flipped bit."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.checkpoint import (
    CheckpointError,
    load_checkpoint,
    read_checkpoint_file,
    save_checkpoint,
)
from ptrnet.runs.config import RunConfig, TrainConfig


def tiny_checkpoint(path: Path, hidden: int = 8) -> bytes:
    torch.manual_seed(0)
    config = RunConfig(
        ModelConfig(input_dim=1, hidden=hidden), TrainConfig(task="sort", sizes="5", steps=1)
    )
    save_checkpoint(path, config, 3, build_model(config.model))
    return path.read_bytes()


def split(data: bytes) -> tuple[dict, bytes]:
    size = int.from_bytes(data[:8], "little")
    return json.loads(data[8 : 8 + size]), data[8 + size :]


def join(header: dict, body: bytes) -> bytes:
    text = json.dumps(header).encode()
    return len(text).to_bytes(8, "little") + text + body


def edit_meta(data: bytes, edit) -> bytes:
    """``data`` with its ``ptrnet`` metadata replaced by ``edit(meta)`` (JSON-encoded)."""
    header, body = split(data)
    meta = json.loads(header["__metadata__"]["ptrnet"])
    header["__metadata__"]["ptrnet"] = json.dumps(edit(meta))
    return join(header, body)


def edit_tensor(data: bytes, name: str, key: str, value) -> bytes:
    header, body = split(data)
    header[name][key] = value
    return join(header, body)


def set_config(meta: dict, **model) -> dict:
    meta["config"]["model"].update(model)
    return meta


def flip_bit(data: bytes) -> bytes:
    corrupt = bytearray(data)
    corrupt[-5] ^= 0x10
    return bytes(corrupt)


def nan_weights(path: Path) -> bytes:
    config = RunConfig(
        ModelConfig(input_dim=1, hidden=8), TrainConfig(task="sort", sizes="5", steps=1)
    )
    model = build_model(config.model)
    with torch.no_grad():
        next(model.parameters())[0] = float("nan")
    save_checkpoint(path, config, 3, model)
    return path.read_bytes()


CASES = {
    "truncated": (lambda d, p: d[: len(d) // 2], "header size|tensors end at byte"),
    "empty": (lambda d, p: b"", "too short for a safetensors header"),
    "offsets past the end": (
        lambda d, p: edit_tensor(d, "model.encoder.weight_ih_l0", "data_offsets", [0, 10**9]),
        "needs .* bytes, offsets give",
    ),
    "10^12 elements": (
        lambda d, p: edit_tensor(d, "model.encoder.weight_ih_l0", "shape", [10**6, 10**6]),
        "needs 4000000000000 bytes",
    ),
    "no step": (
        lambda d, p: edit_meta(d, lambda m: {k: m[k] for k in m if k != "step"}),
        "no 'step'",
    ),
    "no config": (lambda d, p: edit_meta(d, lambda m: {"format": m["format"]}), "no 'config'"),
    "step abc": (
        lambda d, p: edit_meta(d, lambda m: {**m, "step": "abc"}),
        "'step' is not a JSON int",
    ),
    "metadata list": (lambda d, p: edit_meta(d, lambda m: [1, 2]), "metadata is not a JSON object"),
    "hidden 10^9": (
        lambda d, p: edit_meta(d, lambda m: set_config(m, hidden=10**9)),
        "hidden must be at most 8,192|cannot build the model|parameters, over the limit",
    ),
    "hidden 6000": (
        lambda d, p: edit_meta(d, lambda m: set_config(m, hidden=6000)),
        r"weights do not fit the configuration: model\.\S+ has shape \[[\d, ]+\], the config",
    ),
    "bit flip": (lambda d, p: flip_bit(d), "checksum mismatch"),
    "NaN weights": (lambda d, p: nan_weights(p), "holds NaN or infinite values"),
}


@pytest.mark.parametrize("case", CASES)
def test_hostile_checkpoint_is_one_line(tmp_path: Path, capsys, case: str) -> None:
    make, message = CASES[case]
    path = tmp_path / "bad.safetensors"
    path.write_bytes(make(tiny_checkpoint(path), path))
    (tmp_path / "in.txt").write_text("0.3 0.1 0.2\n")
    status = main(["predict", "sort", str(tmp_path / "in.txt"), "--model", str(path), "-o", "-"])
    err = capsys.readouterr().err
    assert status == 1 and err.startswith(f"ptrnet: error: {path}: ") and err.count("\n") == 1
    assert re.search(message, err), err


def test_checksum_is_recorded_and_old_files_without_it_still_load(tmp_path: Path) -> None:
    path = tmp_path / "ok.safetensors"
    data = tiny_checkpoint(path)
    meta = json.loads(split(data)[0]["__metadata__"]["ptrnet"])
    assert meta["checksum"].startswith("sha256:") and len(meta["checksum"]) == 71
    path.write_bytes(edit_meta(data, lambda m: {k: m[k] for k in m if k != "checksum"}))
    assert load_checkpoint(path).step == 3


BUNDLED_ROOT = Path(__file__).parents[1] / "ptrnet" / "bundled"
# Every bundled model, the size-routed ones in sub-folders (delaunay/n5) included.
BUNDLED = sorted(BUNDLED_ROOT.glob("**/best.safetensors"))


def bundled_name(path: Path) -> str:
    return path.parent.relative_to(BUNDLED_ROOT).as_posix()


@pytest.mark.parametrize("bundled", BUNDLED, ids=bundled_name)
def test_bundled_models_carry_a_checksum_that_catches_a_bit_flip(tmp_path: Path, bundled) -> None:
    data = bundled.read_bytes()
    assert json.loads(split(data)[0]["__metadata__"]["ptrnet"])["checksum"].startswith("sha256:")
    copy = tmp_path / "best.safetensors"
    copy.write_bytes(flip_bit(data))
    with pytest.raises(CheckpointError, match="checksum mismatch"):
        read_checkpoint_file(copy)


def test_every_bundled_model_is_covered() -> None:
    names = {bundled_name(path) for path in BUNDLED}
    expected = {
        "convex_hull",
        "delaunay",
        "delaunay/n5",
        "delaunay/n10",
        "sort",
        "tsp",
        "tsp/heavy10-30",
        "tsp/heavy40-52",
        "tsp/heavy20-50",
        "tsp/heavy20-100",
        "copy",
    }
    assert expected | {"convex_hull_seq2seq"} <= names


def test_a_copy_model_given_to_a_point_command_is_named(capsys) -> None:
    """The copy task's checkpoint where a point task's is expected: says what it is and what
    runs it (it said "unknown checkpoint format 'ptrnet-copy-1'")."""
    from ptrnet.runs.checkpoint import COPY_FORMAT
    from ptrnet.text.checkpoint import FORMAT

    assert COPY_FORMAT == FORMAT
    copy_model = Path(__file__).parents[1] / "ptrnet" / "bundled" / "copy"
    with pytest.raises(CheckpointError, match="a copy-task model .*ptrnet predict copy"):
        load_checkpoint(copy_model / "best.safetensors")
    assert main(["eval", "tsp", "missing-file-not-read.txt", "--model", str(copy_model)]) != 0
    err = capsys.readouterr().err
    assert "copy-task model" in err and "Traceback" not in err
