"""SIGTERM during ``ptrnet train``: the run stops between two steps, keeps its last validation's
checkpoint, says so and how to continue, exits 143 (128 + SIGTERM), and resumes."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from ptrnet.cli.interrupts import sigterm_requests
from ptrnet.cli.main import main
from ptrnet.model import ModelConfig
from ptrnet.runs.checkpoint import load_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.training.loop import TrainingStopped, train

torch.set_num_threads(1)

# Thousands of steps of a tiny model: still training when the signal comes.
TRAIN = ["train", "sort", "-n", "5-6", "--hidden", "16", "--batch-size", "8", "--val-count", "16"]
TRAIN += ["--val-every", "5", "--steps", "100000", "--threads", "1", "-q"]


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Return once ``path`` exists; fail if ``proc`` ends or ``timeout`` passes first."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"no {path} after {timeout} s"
        time.sleep(0.05)


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (its data workers), from Linux's /proc."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def kill_workers_then_main(proc: subprocess.Popen) -> None:
    """SIGTERM to the data workers, then, once the main process has had time to see them die
    (torch raises about a lost worker at once), to the main process: the order in which a
    signal to the whole group sometimes lands."""
    workers = children(proc.pid)
    assert workers, "no data worker"
    for worker in workers:
        os.kill(worker, signal.SIGTERM)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)


STOPS = {
    "kill-pid": (0, lambda proc: proc.send_signal(signal.SIGTERM)),
    "kill-group-with-a-data-worker": (1, lambda proc: os.killpg(proc.pid, signal.SIGTERM)),
    "kill-the-data-worker-before-the-main-process": (1, kill_workers_then_main),
}


@pytest.mark.parametrize("how", list(STOPS))
def test_sigterm_stops_training_keeps_the_last_validation_and_resumes(tmp_path, capsys, how):
    """``kill PID``; the whole process group, as ``timeout`` and Slurm signal it, so the data
    worker gets SIGTERM too; and the data worker first, its death reaching the main process
    before the main process's own SIGTERM: every time a clean stop, 143."""
    workers, stop = STOPS[how]
    run = tmp_path / "run"
    command = [sys.executable, "-m", "ptrnet", *TRAIN, "--workers", str(workers)]
    proc = subprocess.Popen(
        [*command, "--out", str(run)],
        cwd=tmp_path,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_for(run / "last.safetensors", proc)
        stop(proc)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 143, err
    assert out == "" and "Traceback" not in err
    assert err.splitlines()[-1] == (
        f"ptrnet: interrupted (SIGTERM); {run} keeps its checkpoint of the last validation "
        f"(ptrnet train sort --resume --out {run} continues from it)"
    )
    saved = load_checkpoint(run / "last.safetensors")
    assert saved.step % 5 == 0 and saved.step > 0
    assert json.loads((run / "config.json").read_text()) == saved.config.to_dict()
    longer = str(saved.step + 5)
    resume = ["train", "sort", "--resume", "--out", str(run), "--steps", longer, "--workers", "0"]
    assert main([*resume, "--threads", "1", "-q"]) == 0
    assert f"sort: {longer} steps" in capsys.readouterr().out


def test_sigterm_is_caught_only_inside_the_block(tmp_path, capsys):
    def mine(signum, frame):
        raise AssertionError("the training's handler should have been in place")

    previous = signal.signal(signal.SIGTERM, mine)
    chld = signal.getsignal(signal.SIGCHLD)
    try:
        with sigterm_requests() as asked:
            assert not asked()
            os.kill(os.getpid(), signal.SIGTERM)
            deadline = time.monotonic() + 10
            while not asked() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert asked()
        assert signal.getsignal(signal.SIGTERM) is mine
        assert signal.getsignal(signal.SIGCHLD) is chld
        argv = ["train", "sort", "--dry-run", "--steps", "2", "--threads", "1", "--workers", "0"]
        assert main([*argv, "-q", "--out", str(tmp_path / "run")]) == 0
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_resume_stopped_before_its_first_validation_keeps_config_json_as_last(tmp_path):
    """config.json is rewritten with ``last`` only, so a resume that changed the run length
    and stopped before saving leaves the two in agreement (the next resume is not refused)."""
    base = {"task": "sort", "sizes": "5", "batch_size": 4, "val_count": 8, "val_every": 2}
    base |= {"threads": 1, "workers": 0}
    config = RunConfig(ModelConfig(input_dim=1, hidden=8), TrainConfig(steps=4, **base))
    train(config, tmp_path, progress=False)
    longer = RunConfig(config.model, TrainConfig(steps=8, **base))
    calls = []

    def second_call() -> bool:  # asked before the first step and after each one
        calls.append(None)
        return len(calls) == 2

    with pytest.raises(TrainingStopped) as stopped:
        train(longer, tmp_path, resume=True, progress=False, should_stop=second_call)
    assert stopped.value.step == 5
    assert load_checkpoint(tmp_path / "last.safetensors").step == 4
    assert json.loads((tmp_path / "config.json").read_text())["train"]["steps"] == 4
    assert train(longer, tmp_path, resume=True, progress=False).step == 8
    assert json.loads((tmp_path / "config.json").read_text())["train"]["steps"] == 8
