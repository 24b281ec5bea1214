"""The pure half of benchmarks/bench_training_race.py: the CPU clock and its marks, the run's
files, the per-method CSV logs, the Markdown table, the verdicts and the plot. No model.

A method's run directory ``OUT/METHOD-nSIZE/`` holds ``state.json`` (the CPU seconds and steps
spent so far, over every invocation, and the marks reached), ``marks.jsonl`` (one line per mark
reached: minute, CPU seconds, steps, the weights file) and ``marks/`` (the weights at each
mark). Scoring appends one row per scored mark to ``OUT/METHOD-nSIZE.csv`` (:data:`COLUMNS`).
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_MARKS = (5.0, 10.0, 20.0, 30.0, 60.0, 90.0, 120.0, 180.0)  # CPU minutes
TABLE_MARKS = (10.0, 30.0, 90.0, 180.0)  # the columns
LATE_MINUTES = 0.5  # a mark's weights saved later than this say when (table cells)
COLUMNS = ("minute", "cpu_s", "steps", "gap", "count", "cpu")  # cpu: lscpu's model name
STATE, MARKS = "state.json", "marks.jsonl"


def due_marks(marks: Sequence[float], budget: float, done: Sequence[float]) -> list[float]:
    """The marks (CPU minutes) a run with ``budget`` minutes in all still has to reach: those
    below the budget and the budget itself, less those ``done`` by an earlier invocation,
    sorted: ``([10, 30, 90], 30, [10]) -> [30.0]``.

    Raises:
        ValueError: a budget or mark that is not positive.
    """
    if budget <= 0 or any(m <= 0 for m in marks):
        raise ValueError(f"marks and the budget must be positive minutes, got {marks}, {budget}")
    wanted = sorted({float(m) for m in marks if m < budget} | {float(budget)})
    return [m for m in wanted if all(abs(m - d) > 1e-9 for d in done)]


def mark_name(minute: float) -> str:
    """The file stem of a mark's weights, sortable: ``10 -> 'minute-0010.00'``."""
    return f"minute-{minute:07.2f}"


@dataclass
class MarkKeeper:
    """The CPU clock of one method's training across invocations and its marks.

    ``offset_s``: CPU seconds spent by earlier invocations; ``pending``: the marks left
    (minutes, sorted; the last is the budget); ``steps_before``: the steps they took;
    ``suffix``: of the weights files. The clock is ``time.process_time`` (every thread
    of this process) from :meth:`start`. A training loop calls :meth:`check` after every step.
    """

    run_dir: Path
    pending: list[float]
    offset_s: float = 0.0
    steps_before: int = 0
    suffix: str = ".pt"
    clock: Callable[[], float] = time.process_time
    started: float = field(default=0.0, init=False)

    def start(self) -> None:
        """Start this invocation's clock (after imports and set-up the method does not own)."""
        self.started = self.clock()

    def cpu_s(self) -> float:
        """CPU seconds of training so far, earlier invocations included."""
        return self.offset_s + self.clock() - self.started

    def check(self, steps: int, save: Callable[[Path], None]) -> bool:
        """After a step (``steps`` in this invocation): at each mark now passed, ``save`` the
        weights (and whatever resuming needs) to the mark's path and record the mark. True
        when the budget (the last mark) is reached: the caller stops training."""
        while self.pending and self.cpu_s() >= 60 * self.pending[0]:
            self.reach(self.pending.pop(0), self.steps_before + steps, save)
        return not self.pending

    def reach(self, minute: float, steps: int, save: Callable[[Path], None]) -> None:
        """Save and record ``minute`` (its line in marks.jsonl; state.json updated)."""
        cpu = self.cpu_s()  # before saving: saving is not training
        path = self.run_dir / "marks" / f"{mark_name(minute)}{self.suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        save(path)
        line = dict(minute=minute, cpu_s=round(cpu, 1), steps=steps, weights=str(path.name))
        with open(self.run_dir / MARKS, "a") as out:
            out.write(json.dumps(line) + "\n")
        state = read_state(self.run_dir)
        done = sorted({*state.get("done", []), minute})
        write_state(self.run_dir, {**state, "cpu_s": cpu, "steps": steps, "done": done})
        self.started += self.cpu_s() - cpu  # the save's CPU time stays off the clock


def read_state(run_dir: Path) -> dict:
    """``state.json`` of a run directory, ``{}`` before its first mark."""
    path = Path(run_dir) / STATE
    return json.loads(path.read_text()) if path.exists() else {}


def write_state(run_dir: Path, state: dict) -> None:
    """Replace ``state.json`` (written whole, then renamed: a kill leaves the old one)."""
    path = Path(run_dir) / STATE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1) + "\n")
    tmp.replace(path)


def read_marks(run_dir: Path) -> list[dict]:
    """The lines of ``marks.jsonl`` (the marks reached, in order), ``[]`` without it."""
    path = Path(run_dir) / MARKS
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def read_log(path: Path) -> list[dict]:
    """A method's CSV log as dicts of floats (``count`` and ``steps`` as ints, ``cpu`` as
    text), ``[]`` without it."""
    if not Path(path).exists():
        return []
    with open(path, newline="") as stream:
        rows = list(csv.DictReader(stream))
    return [{k: _cell(k, v) for k, v in r.items()} for r in rows]


def _cell(column: str, text: str) -> float | int | str:
    """One CSV cell of :func:`read_log` in its type."""
    if column == "cpu":
        return text
    return int(float(text)) if column in ("steps", "count") else float(text)


def append_log(path: Path, row: dict) -> None:
    """Append ``row`` (the keys of :data:`COLUMNS`) to the CSV log, its header first if new.

    Raises:
        ValueError: an existing log whose header is not :data:`COLUMNS` (written by another
            version of the race: its rows would not line up).
    """
    new = not Path(path).exists()
    if not new:
        with open(path, newline="") as stream:
            header = tuple(next(csv.reader(stream), []))
        if header != COLUMNS:
            raise ValueError(f"{path}: header {','.join(header)}, expected {','.join(COLUMNS)}")
    with open(path, "a", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=COLUMNS)
        if new:
            writer.writeheader()
        writer.writerow({k: row[k] for k in COLUMNS})


def log_name(method: str, size: int) -> str:
    """``("kool", 20) -> "kool-n20"``: the run directory's and (with .csv) the log's stem."""
    return f"{method}-n{size}"


def parse_log_name(stem: str) -> tuple[str, int]:
    """The inverse of :func:`log_name`: ``"ptrnet-sup-n50" -> ("ptrnet-sup", 50)``.

    Raises:
        ValueError: a stem that does not end in ``-nSIZE``.
    """
    method, _, size = stem.rpartition("-n")
    if not method or not size.isdigit():
        raise ValueError(f"{stem}: not a race log name (METHOD-nSIZE)")
    return method, int(size)


def gap_at(rows: Sequence[dict], minute: float) -> float | None:
    """The gap of the row at ``minute`` (within a second), None where there is none."""
    found = [r["gap"] for r in rows if abs(r["minute"] - minute) < 1 / 60]
    return found[-1] if found else None


def minute_reaching(rows: Sequence[dict], gap: float) -> float | None:
    """The first scored minute whose gap is at most ``gap`` (marks only, no interpolation:
    the answer is an upper bound), None if none is."""
    hits = [r["minute"] for r in sorted(rows, key=lambda r: r["minute"]) if r["gap"] <= gap]
    return hits[0] if hits else None


def table(logs: dict[tuple[str, int], list[dict]], marks: Sequence[float] = TABLE_MARKS) -> str:
    """Markdown: one line per (size, method), the greedy gap and steps at each mark."""
    heads = " | ".join(f"{m:g} min" for m in marks)
    lines = [f"| n | method | CPU | {heads} |", "|---|---|---|" + "---:|" * len(marks)]
    for (method, size), rows in sorted(logs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        cells = []
        for m in marks:
            row = next((r for r in rows if abs(r["minute"] - m) < 1 / 60), None)
            cells.append(cell(row) if row else "")
        lines.append(f"| {size} | {method} | {cpus(rows)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cell(row: dict) -> str:
    """One mark's table cell: ``'7.66% (1,139)'``; weights saved more than half a minute after
    their mark (a peer's validation ran between two batches) say when: ``'15.82% (197; saved
    at 28.1 min)'``."""
    saved = row["cpu_s"] / 60
    late = f"; saved at {saved:.1f} min" if saved - row["minute"] > LATE_MINUTES else ""
    return f"{row['gap']:.2f}% ({row['steps']:,}{late})"


def cpus(rows: Sequence[dict]) -> str:
    """The CPU models a log's rows were measured on, joined: ``'AMD EPYC'``."""
    return " + ".join(sorted({r.get("cpu", "") or "?" for r in rows}))


def is_ours(method: str) -> bool:
    """Whether ``method`` is one of ptrnet's recipes (named ``ptrnet`` or ``ptrnet-...``)."""
    return method == "ptrnet" or method.startswith("ptrnet-")


def verdicts(logs: dict[tuple[str, int], list[dict]]) -> list[str]:
    """Per size, each ptrnet recipe against each peer: whether its gap is below the peer's at
    every mark both reached, and when it first reaches the peer's final gap, as a share of the
    peer's final minute (the issue's goal: at most a third)."""
    out = []
    for size in sorted({s for _, s in logs}):
        ours = sorted(m for m, s in logs if s == size and is_ours(m))
        peers = sorted(m for m, s in logs if s == size and not is_ours(m))
        for a in ours:
            for b in peers:
                out.append(f"n = {size}, {a} vs {b}: " + versus(logs[a, size], logs[b, size]))
    return out


def versus(ours: Sequence[dict], peer: Sequence[dict]) -> str:
    """The verdict of :func:`verdicts` for one pair of logs."""
    if not ours or not peer:
        return "no scored marks"
    if cpus(ours) != cpus(peer):
        return f"not comparable: measured on {cpus(ours)} against {cpus(peer)}"
    common = sorted({r["minute"] for r in ours} & {r["minute"] for r in peer})
    below = [m for m in common if gap_at(ours, m) < gap_at(peer, m)]
    last = max(peer, key=lambda r: r["minute"])
    reach = minute_reaching(ours, last["gap"])
    when = "not reached" if reach is None else f"reached at {reach:g} min"
    share = "" if reach is None else f" ({reach / last['minute']:.2f}x)"
    return (
        f"below at {len(below)} of {len(common)} common marks; "
        f"the peer's final gap {last['gap']:.2f}% (at {last['minute']:g} min) {when}{share}"
    )


def plot(logs: dict[tuple[str, int], list[dict]], path: Path) -> None:
    """Greedy gap against CPU minutes (log x: each mark at the CPU time its weights were
    saved, ``cpu_s``), one panel per size, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    plain = matplotlib.ticker.FuncFormatter(_tick)
    fine = matplotlib.ticker.FuncFormatter(lambda value, _: _tick(value, digits="12358"))
    sizes = sorted({s for _, s in logs})
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.5), squeeze=False)
    for ax, size in zip(axes[0], sizes, strict=True):
        for (method, s), rows in sorted(logs.items()):
            if s != size or not rows:
                continue
            rows = sorted(rows, key=lambda r: r["minute"])
            style = "o-" if is_ours(method) else "s--"
            minutes = [r["cpu_s"] / 60 for r in rows]
            ax.plot(minutes, [r["gap"] for r in rows], style, label=method)
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis, formatter in ((ax.xaxis, plain), (ax.yaxis, fine)):
            axis.set_major_formatter(formatter)
            axis.set_minor_formatter(formatter)
        ax.set_xlabel("CPU minutes of training, one thread (log)")
        ax.set_ylabel("greedy gap to the references, % (log)")
        measured = [r for (_, s), rows in logs.items() if s == size for r in rows]
        ax.set_title(f"TSP n = {size} ({cpus(measured)}, one thread)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _tick(value: float, _position=None, digits: str = "1235") -> str:
    """A log axis's tick label: plain numbers at ``digits`` (1, 2, 3 and 5) times a power of
    ten (``5``, ``20``, not ``5 x 10^0``), none between them (the gap axis adds 8: a curve
    between 5 and 10 then has a label beside it)."""
    mantissa = f"{value:.0e}"[0]
    return f"{value:g}" if mantissa in digits else ""
