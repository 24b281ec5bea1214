"""One training at a time in a run directory (:mod:`ptrnet.runs.lock`): a second training,
started together with the first or while it runs, is refused with one line naming the holder;
a crashed run's leftover claim is stale and ``--resume`` takes it over."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ptrnet.cli.main import main
from ptrnet.runs import LAST, LOCK_FILE, RunDirError
from ptrnet.runs import lock as run_lock
from ptrnet.runs.checkpoint import load_checkpoint
from ptrnet.runs.lock import claim_run_dir

TRAIN = ["--sizes", "5", "--batch-size", "4", "--val-count", "4", "--threads", "1", "-q"]


def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


def start_training(out: Path, *options: str) -> subprocess.Popen:
    """``ptrnet train sort`` into ``out`` in a process of its own (long unless stopped)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "ptrnet", "train", "sort", *TRAIN, "--out", str(out)]
    return subprocess.Popen([*command, *options], env=env, stderr=subprocess.PIPE, text=True)


def wait_for(path: Path, process: subprocess.Popen, timeout: float = 120) -> None:
    """Wait until ``path`` exists while ``process`` runs."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert process.poll() is None, process.stderr.read()
        assert time.monotonic() < deadline, f"no {path} after {timeout} s"
        time.sleep(0.05)


def test_a_claim_is_refused_to_a_second_claimant_naming_the_holder(tmp_path):
    run = tmp_path / "run"
    with claim_run_dir(run):
        record = (run / LOCK_FILE).read_text()
        assert record.startswith(f"pid {os.getpid()} host {socket.gethostname()} since ")
        with pytest.raises(RunDirError) as refused:
            claim_run_dir(run)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{run} is in use by another training")
    assert f"pid {os.getpid()} on host {socket.gethostname()}" in message
    assert message.endswith("wait for it to end, or pass another --out")


def test_a_released_claim_leaves_nothing_behind_and_can_be_taken_again(tmp_path):
    run = tmp_path / "new"
    claim_run_dir(run).release()
    assert not run.exists()  # created by the claim, and nothing else was written
    (tmp_path / "kept").mkdir()
    with claim_run_dir(tmp_path / "kept"):
        (tmp_path / "kept" / "log.csv").write_text("step\n")
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == ["log.csv"]
    with claim_run_dir(tmp_path / "kept"):
        pass


def test_a_crashed_holders_claim_is_stale(tmp_path):
    (tmp_path / LOCK_FILE).write_text(f"pid {dead_pid()} host {socket.gethostname()} since x\n")
    with claim_run_dir(tmp_path):
        assert (tmp_path / LOCK_FILE).read_text().startswith(f"pid {os.getpid()} ")
    assert not (tmp_path / LOCK_FILE).exists()


def test_without_flock_the_record_decides(tmp_path, monkeypatch):
    """On a filesystem without locks, a record naming a live process on this host (or any on
    another host) holds; one naming an ended process, or none, is stale."""

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(run_lock.fcntl, "flock", no_locks)
    host = socket.gethostname()
    for record in (f"pid {os.getppid()} host {host}", "pid 1 host another-machine"):
        (tmp_path / LOCK_FILE).write_text(record)
        with pytest.raises(RunDirError, match="is in use by another training"):
            claim_run_dir(tmp_path)
    for record in (f"pid {dead_pid()} host {host}", "", "garbage"):
        (tmp_path / LOCK_FILE).write_text(record)
        claim_run_dir(tmp_path).release()


def _hold_forever() -> None:
    time.sleep(60)


def test_a_forked_child_does_not_keep_the_claim(tmp_path):
    """A data worker (forked) that outlives the training does not hold its directory."""
    claim = claim_run_dir(tmp_path / "run")
    child = multiprocessing.get_context("fork").Process(target=_hold_forever, daemon=True)
    child.start()
    try:
        claim.release()
        claim_run_dir(tmp_path / "run").release()
    finally:
        child.kill()
        child.join()


def test_two_trainings_in_one_directory_the_second_is_refused(tmp_path, capsys):
    """The reproducer: ``train ... --hidden 16 --seed 3 --out two &`` and, while it runs,
    ``train ... --hidden 32 --seed 4 --out two``: the second is refused in one line naming the
    first, which keeps its run."""
    first = start_training(tmp_path / "two", "--hidden", "16", "--seed", "3", "--steps", "100000")
    try:
        wait_for(tmp_path / "two" / LOCK_FILE, first)
        second = ["train", "sort", *TRAIN, "--hidden", "32", "--seed", "4", "--steps", "2"]
        assert main([*second, "--out", str(tmp_path / "two")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"pid {first.pid} on host" in err
        assert err.startswith(f"ptrnet: error: {tmp_path / 'two'} is in use by another training")
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(120)
    config = json.loads((tmp_path / "two" / "config.json").read_text())
    assert (config["model"]["hidden"], config["train"]["seed"]) == (16, 3)


def test_a_killed_training_is_resumed_over_its_stale_claim(tmp_path, capsys):
    run = tmp_path / "run"
    crashed = start_training(run, "--steps", "100000", "--val-every", "2")
    try:
        wait_for(run / LAST, crashed)
    finally:
        crashed.kill()  # SIGKILL: no clean-up, the claim's file stays
        crashed.wait(60)
    assert f"pid {crashed.pid} " in (run / LOCK_FILE).read_text()
    step = load_checkpoint(run / LAST).step
    resume = ["train", "sort", "--resume", "--out", str(run), "--threads", "1", "-q"]
    assert main([*resume, "--steps", str(step + 2)]) == 0, capsys.readouterr().err
    assert load_checkpoint(run / LAST).step == step + 2 and not (run / LOCK_FILE).exists()


def test_a_copy_training_in_a_claimed_directory_is_refused(tmp_path, capsys):
    with claim_run_dir(tmp_path / "copy"):
        status = main(["train", "copy", "--dry-run", "-q", "--out", str(tmp_path / "copy")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "is in use by another training" in err
    assert not (tmp_path / "copy").exists()
