"""Progress on stderr (ptrnet/io/progress.py): plain lines at a steady interval when stderr is not
a terminal, the same form for every command; ``--quiet`` silences them."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ptrnet.cli.main import main
from ptrnet.io.errors import UsageError
from ptrnet.io.progress import INTERVAL_ENV, Progress, counted, duration, interval_s

ROOT = Path(__file__).resolve().parent.parent
# A training line, point or copy task alike.
TRAIN_LINE = re.compile(
    r"^ptrnet: train (sort|copy): step [\d,]+/[\d,]+ \(\d+%\), [\d,.]+ examples/s"
    r"(, loss \d+\.\d{4})?(, val exact_match \d+\.\d\d%)?, ETA \S+$"
)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def plain(monkeypatch, interval: str = "10", **kwargs) -> tuple[Progress, io.StringIO, Clock]:
    monkeypatch.setenv(INTERVAL_ENV, interval)
    stream, clock = io.StringIO(), Clock()  # StringIO is no terminal: plain lines
    return Progress("train sort", 100, stream=stream, clock=clock, **kwargs), stream, clock


def test_a_plain_line_comes_once_per_interval_with_rate_loss_metric_and_eta(monkeypatch):
    progress, stream, clock = plain(monkeypatch)
    for step in range(1, 41):
        clock.now = step * 0.5  # two steps a second
        progress.update(1, examples=128, loss=0.5 if step <= 20 else 0.25)
        if step == 30:
            progress.note("val exact_match", "87.31%")  # as the trainer formats a rate
    lines = stream.getvalue().splitlines()
    assert lines == [
        "ptrnet: train sort: step 20/100 (20%), 256 examples/s, loss 0.5000, ETA 40s",
        "ptrnet: train sort: step 40/100 (40%), 256 examples/s, loss 0.2500, "
        "val exact_match 87.31%, ETA 30s",
    ]
    assert all(TRAIN_LINE.match(line) for line in lines)


def test_show_prints_at_once_and_restarts_the_interval(monkeypatch):
    progress, stream, clock = plain(monkeypatch)
    clock.now = 3.0
    progress.update(1)
    progress.show()
    clock.now = 12.0  # 9 s after the shown line: not yet
    progress.update(1)
    assert stream.getvalue() == "ptrnet: train sort: step 1/100 (1%), 0.3 steps/s, ETA 4m57s\n"


def test_resumed_runs_count_from_their_step_and_time_only_this_session(monkeypatch):
    progress, stream, clock = plain(monkeypatch, "0", done=90)
    clock.now = 5.0
    progress.update(1)
    assert stream.getvalue() == "ptrnet: train sort: step 91/100 (91%), 0.2 steps/s, ETA 45s\n"


def test_disabled_progress_prints_nothing(monkeypatch):
    progress, stream, clock = plain(monkeypatch, "0", enabled=False)
    clock.now = 100.0
    progress.update(5, loss=1.0)
    progress.show()
    assert stream.getvalue() == ""


def test_counted_items_without_a_total_show_no_eta(monkeypatch):
    monkeypatch.setenv(INTERVAL_ENV, "0")
    stream, clock = io.StringIO(), Clock()
    progress = Progress("generate tsp", None, "instance", stream=stream, clock=clock)
    clock.now = 1.0
    assert list(counted("ab", progress)) == ["a", "b"]
    assert stream.getvalue().splitlines()[-1] == "ptrnet: generate tsp: instance 2, 2.0 instances/s"


@pytest.mark.parametrize("text", ["soon", "-1", "nan"])
def test_a_bad_interval_is_one_clear_error(monkeypatch, text):
    monkeypatch.setenv(INTERVAL_ENV, text)
    with pytest.raises(UsageError, match=f"{INTERVAL_ENV}='{text}': expected a number"):
        interval_s()


def test_durations_read_as_hours_minutes_seconds():
    assert [duration(s) for s in (4.4, 65, 3725)] == ["4s", "1m05s", "1h02m"]


def progress_before_exit(command: list[str], env: dict[str, str]) -> tuple[list[str], str]:
    """Run ``command`` with piped output, reading stderr line by line while it runs: the
    progress lines read while the process was still running, and the whole stderr."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    early, seen = [], []
    for line in process.stderr:
        seen.append(line)
        if TRAIN_LINE.match(line.rstrip("\n")) and process.poll() is None:
            early.append(line.rstrip("\n"))
    process.wait(timeout=120)
    return early, "".join(seen)


@pytest.mark.parametrize("task", ["sort", "copy"])
def test_train_through_a_pipe_prints_progress_lines_while_it_runs(task, tmp_path):
    env = {**os.environ, INTERVAL_ENV: "0", "OMP_NUM_THREADS": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "ptrnet", "train", task, "--dry-run", "--threads", "1"]
    command += ["--steps", "12", "--val-every", "4", "--out", str(tmp_path / "run")]
    start = time.monotonic()
    early, stderr = progress_before_exit(command, env)
    assert len(early) >= 10, stderr  # a line a step, read before the process ended
    assert any(", val exact_match " in line for line in early), stderr
    assert time.monotonic() - start < 120
    quiet, stderr = progress_before_exit([*command[:-1], str(tmp_path / "quiet"), "-q"], env)
    assert quiet == [] and "step" not in stderr


@pytest.mark.parametrize("command", ["predict", "eval"])
def test_decoding_a_file_prints_progress_unless_quiet(command, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(INTERVAL_ENV, "0")
    data = tmp_path / "sort.txt"
    assert main(["generate", "sort", "-n", "5", "--count", "300", "-o", str(data), "-q"]) == 0
    args = [
        command,
        "sort",
        str(data),
        *(["-o", str(tmp_path / "out.txt")] * (command == "predict")),
    ]
    assert main(args) == 0
    shown = f"ptrnet: {command} sort: instance "
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith(shown)]
    assert lines[-1].startswith(f"{shown}300/300 (100%), ")
    assert len(lines) == 2  # a line a batch of 256 (the default batch size)
    assert main([*args, "-q"]) == 0
    assert "instance" not in capsys.readouterr().err


def test_training_shows_a_gap_in_percent_and_logs_the_fraction(monkeypatch, capsys, tmp_path):
    """The progress line's validation gap and train's closing line are in percent (as eval's
    table); log.csv and best.json keep the fraction."""
    monkeypatch.setenv(INTERVAL_ENV, "0")
    argv = ["train", "tsp", "--dry-run", "--threads", "1", "--workers", "0", "--steps", "4"]
    assert main([*argv, "--val-every", "2", "--out", str(tmp_path / "run")]) == 0
    captured = capsys.readouterr()
    shown = re.findall(r", val mean_gap (\S+), ", captured.err)
    assert len(shown) >= 2 and all(re.fullmatch(r"\d+\.\d\d%", s) for s in shown), captured.err
    best = json.loads((tmp_path / "run" / "best.json").read_text())
    assert f"; best mean_gap {100 * best['value']:.2f}% at step {best['step']};" in captured.out
    log = (tmp_path / "run" / "log.csv").read_text().splitlines()
    column = log[0].split(",").index("val_mean_gap")
    gaps = [cell for row in log[1:] if (cell := row.split(",")[column])]
    assert float(gaps[-1]) == pytest.approx(float(shown[-1].rstrip("%")) / 100, abs=5e-5)
