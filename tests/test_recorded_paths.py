"""How a run names the checkpoint it started from (``init_from``): relative to the run
directory's parent, else to the folder holding the package (a bundled model), else absolute; the
name finds the same file again from the run directory whatever the working directory, so a
committed run names no folder of the machine it was trained on."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest
import torch

import ptrnet
from ptrnet.cli.main import main
from ptrnet.io.errors import InputError
from ptrnet.runs import PACKAGE_PARENT, recorded_file, recorded_path
from ptrnet.runs.checkpoint import load_checkpoint
from ptrnet.runs.config import RunConfig
from ptrnet.training import loop

torch.set_num_threads(1)
BUNDLED_SORT = os.path.join(PACKAGE_PARENT, "ptrnet", "bundled", "sort", "best.safetensors")
DRY = ["--dry-run", "--threads", "1", "--workers", "0", "-q"]


def test_names_relative_to_the_run_parent_then_the_package_else_absolute(tmp_path, monkeypatch):
    run = tmp_path / "work" / "run2"
    cases = {
        str(tmp_path / "work" / "run" / "best.safetensors"): os.path.join(
            "run", "best.safetensors"
        ),
        BUNDLED_SORT: os.path.join("ptrnet", "bundled", "sort", "best.safetensors"),
        str(tmp_path / "elsewhere" / "a.safetensors"): str(
            tmp_path / "elsewhere" / "a.safetensors"
        ),
        str(tmp_path / "work2" / "b.safetensors"): str(tmp_path / "work2" / "b.safetensors"),
    }
    for path, name in cases.items():
        assert recorded_path(path, run) == name
        assert recorded_file(name, run) == path
    monkeypatch.chdir(tmp_path)  # paths as typed, relative to the working directory
    assert recorded_path("work/run/best.safetensors", "work/run2") == os.path.join(
        "run", "best.safetensors"
    )


def test_the_command_records_init_from_from_the_run_parent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "sort", *DRY, "--out", "run"]) == 0
    assert main(["train", "sort", *DRY, "--init-from", "run", "--out", "run2"]) == 0
    assert main(["train", "sort", *DRY, "--init-from", "bundled", "--out", "run3"]) == 0
    expected = {
        "run2": os.path.join("run", "best.safetensors"),
        "run3": os.path.join("ptrnet", "bundled", "sort", "best.safetensors"),
    }
    for run, name in expected.items():
        config = json.loads((tmp_path / run / "config.json").read_text())["train"]
        best = json.loads((tmp_path / run / "best.json").read_text())["config"]["train"]
        saved = load_checkpoint(str(tmp_path / run / "best.safetensors")).config.train
        assert config["init_from"] == best["init_from"] == saved.init_from == name
    # from another working directory the name finds the same weights, and a resume with the
    # same --init-from is no change
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = RunConfig.from_dict(json.loads((tmp_path / "run2" / "config.json").read_text()))
    trainer = loop.Trainer(config, str(tmp_path / "run4"), resume=False)
    source = load_checkpoint(str(tmp_path / "run" / "best.safetensors")).model_state
    state = trainer.model.state_dict()
    assert all(torch.equal(state[k], v) for k, v in source.items())
    resume = ["train", "sort", "--resume", "--steps", "5", "--threads", "1", "--workers", "0"]
    init = ["--init-from", str(tmp_path / "run"), "--out", str(tmp_path / "run2"), "-q"]
    assert main([*resume, *init]) == 0


def test_the_api_records_init_from_as_the_command_does(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "sort", *DRY, "--hidden", "32", "--out", "run"]) == 0
    tiny = {"hidden": 32, "steps": 2, "batch_size": 8, "val_count": 8, "val_every": 2}
    run = ptrnet.train("sort", sizes="5", init_from="run", out="run2", **tiny)
    config = json.loads((tmp_path / run / "config.json").read_text())["train"]
    assert config["init_from"] == os.path.join("run", "best.safetensors")
    with pytest.raises(InputError, match="no such model"):
        ptrnet.train("sort", sizes="5", init_from="missing", out="run3", **tiny)


def start_named(path: str) -> str | None:
    """The ``init_from`` a bundled ``best.json`` or checkpoint header records (None: none)."""
    raw = Path(path).read_bytes()
    if path.endswith(".json"):
        record = json.loads(raw)
    else:  # a safetensors header: 8 bytes of length, then JSON
        header = json.loads(raw[8 : 8 + struct.unpack("<Q", raw[:8])[0]])
        record = json.loads(header.get("__metadata__", {}).get("ptrnet", "{}"))
    return record.get("config", {}).get("train", {}).get("init_from")


def test_no_bundled_model_names_its_start_by_an_absolute_path():
    files = [
        str(path)
        for pattern in ("best.json", "*.safetensors")
        for path in Path(PACKAGE_PARENT, "ptrnet", "bundled").rglob(pattern)
    ]
    named = {path: start_named(path) for path in files}
    assert sum(name is not None for name in named.values()) >= 20
    assert not [path for path, name in named.items() if name and os.path.isabs(name)]
