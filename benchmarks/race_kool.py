"""Kool et al.'s own training code in the training race (benchmarks/bench_training_race.py):
their ``run.py`` from a checkout of github.com/wouterkool/attention-learn-to-route, in this
process, unchanged on disk.

Their command is their README's for TSP (``run.py --graph_size N --baseline rollout``) with
their defaults (attention model, 3 encoder layers, d = 128, 8 heads, batch norm, Adam 1e-4, the
rollout baseline after one warm-up epoch, 10,000 validation instances, seed 1234) except what
this CPU needs, stated in :func:`kool_argv`: one torch thread, ``--no_cuda``, an epoch of
128,000 instances instead of 1,280,000 (:data:`EPOCH_SIZE`; a full epoch is 55 CPU minutes at
n = 20 and 2.8 hours at n = 50 on one AMD EPYC thread, so a three-hour race would hold no or
one baseline update), no progress bar, no tensorboard and no per-epoch checkpoints (the race
keeps its own). Batch size: theirs, 512.

Shims, applied in this process only (:func:`shims`), nothing edited in their files:

* ``tensorboard_logger`` (imported by run.py even with ``--no_tensorboard``): a stub module
  when the package is not installed; ``--no_tensorboard`` keeps it unused.
* ``torch.load`` defaults to ``weights_only=False`` while their code runs: since torch 2.6 it
  refuses their checkpoints (pickled dicts holding their baseline's dataset object).
* their training DataLoader's ``num_workers=1`` becomes 0: one process and one thread, so that
  the process's CPU clock counts all of their work.

The race's hook wraps ``train.train_batch``: after each batch the clock is read; at a mark the
weights are saved (``{"model": state_dict}``, loadable by their ``utils.load_model`` beside an
``args.json``) with a resumable state (``resume.pt``: model, optimiser, baseline, RNG state and
the epoch in progress), and at the budget training stops. A later, longer invocation restarts
the interrupted epoch with fresh instances: inside the warm-up epoch through ``--load_path``,
after it through their ``--resume`` (which also runs the baseline's end-of-epoch test once).
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import sys
import types
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import torch

EPOCH_SIZE = 128_000  # their default: 1,280,000
BATCH_SIZE = 512  # their default


class BudgetReached(Exception):
    """Raised from inside their training loop at the budget's mark."""


def kool_argv(size: int, run_dir: Path, batch: int = BATCH_SIZE, epoch: int = EPOCH_SIZE,
              resume: Sequence[str] = ()) -> list[str]:  # fmt: skip
    """Their command line for a race run at ``size`` cities (see the module docstring)."""
    return [
        "--problem", "tsp", "--graph_size", str(size), "--baseline", "rollout",
        "--batch_size", str(batch), "--epoch_size", str(epoch),
        "--no_cuda", "--no_tensorboard", "--no_progress_bar", "--checkpoint_epochs", "0",
        "--output_dir", str(run_dir / "outputs"), "--run_name", "race", *resume,
    ]  # fmt: skip


@contextlib.contextmanager
def shims(checkout: str | Path) -> Iterator[types.ModuleType]:
    """Their ``train`` module, importable with the shims of the module docstring in force for
    the duration of the block (``torch.load``'s default restored after it)."""
    root = str(Path(checkout).resolve())
    if not (Path(root) / "run.py").is_file():
        raise FileNotFoundError(f"{root}: no run.py (not a checkout of attention-learn-to-route)")
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        import tensorboard_logger  # noqa: F401
    except ImportError:
        stub = types.ModuleType("tensorboard_logger")
        stub.Logger = None  # --no_tensorboard: never called
        sys.modules["tensorboard_logger"] = stub
    import train  # type: ignore[import-not-found]  # theirs

    train.DataLoader = functools.partial(torch.utils.data.DataLoader, num_workers=0)
    original = torch.load
    torch.load = functools.partial(original, weights_only=False)
    try:
        yield train
    finally:
        torch.load = original


def resume_argv(run_dir: Path) -> list[str]:
    """The flags that continue from ``resume.pt`` (its epoch E in ``resume-epoch.txt``): none
    without it; ``--load_path`` inside the warm-up epoch (E = 0); else ``--resume`` of a copy
    named ``epoch-(E-1).pt`` (their code then restarts at epoch E)."""
    state, epoch_file = run_dir / "resume.pt", run_dir / "resume-epoch.txt"
    if not state.exists():
        return []
    epoch = int(epoch_file.read_text())
    if epoch == 0:
        return ["--load_path", str(state)]
    named = run_dir / "resume" / f"epoch-{epoch - 1}.pt"
    named.parent.mkdir(exist_ok=True)
    shutil.copyfile(state, named)
    return ["--resume", str(named)]


def train_kool(checkout: str, size: int, run_dir: Path, keeper, batch: int, epoch: int) -> None:
    """Their training until ``keeper`` (a race_log.MarkKeeper) says the budget is reached."""
    torch.set_num_threads(1)
    argv = kool_argv(size, run_dir, batch, epoch, resume_argv(run_dir))
    with shims(checkout) as train, contextlib.redirect_stdout(sys.stderr):
        import run  # type: ignore[import-not-found]  # theirs: run.run(opts)
        from options import get_options  # type: ignore[import-not-found]

        opts = get_options(argv)
        marks = run_dir / "marks"
        marks.mkdir(parents=True, exist_ok=True)
        (marks / "args.json").write_text(json.dumps(vars(opts), indent=1))
        train.train_batch = hooked(train, keeper, run_dir)
        keeper.start()
        with contextlib.suppress(BudgetReached):
            run.run(opts)


def hooked(train: types.ModuleType, keeper, run_dir: Path):
    """Their ``train_batch`` followed by the race's clock check (module docstring)."""
    original, count = train.train_batch, [0]

    def train_batch(model, optimizer, baseline, epoch, batch_id, step, batch, tb_logger, opts):
        original(model, optimizer, baseline, epoch, batch_id, step, batch, tb_logger, opts)
        count[0] += 1

        def save(path: Path) -> None:
            weights = train.get_inner_model(model).state_dict()
            torch.save({"model": weights}, path)
            state = dict(model=weights, optimizer=optimizer.state_dict(),
                         baseline=baseline.state_dict(), rng_state=torch.get_rng_state(),
                         cuda_rng_state=[], epoch=epoch)  # fmt: skip
            torch.save(state, run_dir / "resume.tmp")
            (run_dir / "resume.tmp").replace(run_dir / "resume.pt")
            (run_dir / "resume-epoch.txt").write_text(f"{epoch}\n")

        if keeper.check(count[0], save):
            raise BudgetReached

    return train_batch


def kool_decoder(checkout: str, weights: Path):
    """``points -> open tours``, greedy, with the weights saved at a mark."""
    try:
        from benchmarks.kool_models import kool_tours
    except ImportError:  # run as a script
        from kool_models import kool_tours

    with shims(checkout), contextlib.redirect_stdout(sys.stderr):
        from utils import load_model  # type: ignore[import-not-found]  # theirs

        model, _ = load_model(str(weights))
    model.eval()
    return lambda points: [np.asarray(t) for t in kool_tours(model, points)]
