"""ptrnet's recipes in the training race (benchmarks/bench_training_race.py): a model the size
of Kool et al.'s (a 3-layer transformer encoder, d = 128, 8 heads, 10-clipped logits, the light
decoder: ``ptrnet train --decoder light --hidden 128 --encoder-layers 3 --heads 8``) trained by
``ptrnet.training.loop.Trainer`` in this process, one thread, no data workers.

Recipes (:data:`RECIPES`; each a list of phases, each phase a run directory of its own):

* ``ptrnet-sup``: supervision on near-exact labels solved on the fly (``--label-solver local``,
  its CPU time on the race's clock), every instance in one of the 8 symmetries of the square and
  a random input order (``--augment``), the loss over the cities left (``--train-constraints
  task``), Adam 5e-4 with a 200-step warm-up, decayed 0.9 per 1,000 steps (the light probe's,
  docs/beyond-runs/light-probe/, without its weight average, which lags early marks).
* ``ptrnet-pomo``: POMO from scratch (REINFORCE from every start, the starts' mean as the
  shared baseline), Adam 1e-4 (the probe's fine-tune).
* ``ptrnet``: ``ptrnet-sup`` until ``switch`` CPU minutes, then ``ptrnet-pomo`` from its
  weights.

Every phase trains in float32, as the peers do: on a CPU with native bf16 (AMX), bf16 autocast
makes the attention kernels' backward about ten times slower (benchmarks/bench_precision.py).

Validation is off in effect (8 generated instances, every 10^6 steps): the race scores the
weights at its marks itself. A mark writes the weights (``Trainer.checkpoint_now``) and the
resumable ``last`` of the phase, so that a longer invocation continues from that very step.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

MODEL = dict(kind="pointer", input_dim=2, hidden=128, encoder="transformer", encoder_layers=3,
             heads=8, logit_clip=10.0, decoder="light")  # fmt: skip
SUPERVISED = dict(objective="likelihood", labels="solve", label_solver="local", augment=True,
                  train_constraints="task", lr=5e-4, warmup=200, decay=0.9, decay_every=1000,
                  batch_size=128)  # fmt: skip
POMO = dict(objective="reinforce", baseline="pomo", train_constraints="task", lr=1e-4, decay=1.0)
POMO_BATCH = {20: 64, 50: 32}  # instances per step (each decoded from every one of its n starts)
RECIPES = {
    "ptrnet-sup": ("sup",),
    "ptrnet-pomo": ("pomo",),
    "ptrnet": ("sup", "pomo"),
}
SWITCH_MINUTES = 20.0  # ``ptrnet``'s supervised phase, CPU minutes


def phase_options(phase: str, size: int, overrides: dict | None = None) -> dict:
    """The TrainConfig fields of one phase at ``size`` cities (``overrides`` win: a GPU-scale
    run changes batch, device and precision)."""
    base = SUPERVISED if phase == "sup" else {**POMO, "batch_size": POMO_BATCH.get(size, 32)}
    fixed = dict(task="tsp", sizes=str(size), steps=10**7, val_count=8, val_every=10**6,
                 log_every=50, threads=1, workers=0, device="cpu", precision="fp32")  # fmt: skip
    return {**fixed, **base, **(overrides or {})}


def run_config(phase: str, size: int, seed: int, init_from: str | None, overrides=None):
    """The RunConfig of one phase."""
    from ptrnet.model import ModelConfig
    from ptrnet.runs.config import RunConfig, TrainConfig

    options = phase_options(phase, size, overrides)
    return RunConfig(ModelConfig(**MODEL), TrainConfig(seed=seed, init_from=init_from, **options))


def schedule(recipe: str, switch: float) -> list[tuple[str, float | None]]:
    """``(phase, CPU minute it ends at or None)`` for each phase of ``recipe``.

    Raises:
        ValueError: an unknown recipe.
    """
    if recipe not in RECIPES:
        raise ValueError(f"unknown ptrnet recipe {recipe!r}; choose from {', '.join(RECIPES)}")
    phases = RECIPES[recipe]
    return [(p, switch if i < len(phases) - 1 else None) for i, p in enumerate(phases)]


def train_ptrnet(recipe: str, size: int, run_dir: Path, keeper, switch: float, seed: int) -> None:
    """Train ``recipe``'s phases in order until ``keeper`` (race_log.MarkKeeper) says the
    budget is reached; a phase already ended (by an earlier invocation) is skipped."""
    import torch

    torch.set_num_threads(1)
    keeper.start()
    earlier: Path | None = None
    for phase, until in schedule(recipe, switch):
        phase_dir = run_dir / phase
        if until is not None and keeper.cpu_s() >= 60 * until:
            earlier = phase_dir
            continue
        init = str(earlier / "last.safetensors") if earlier is not None else None
        if run_phase(run_config(phase, size, seed, init), phase_dir, keeper, until):
            return
        earlier = phase_dir


def run_phase(config, phase_dir: Path, keeper, until: float | None) -> bool:
    """One phase until the budget (True) or its own end minute ``until`` (False)."""
    from ptrnet.training.loop import Trainer
    from ptrnet.training.runloop import TrainingStopped

    resume = (phase_dir / "last.safetensors").exists()
    trainer = Trainer(config, str(phase_dir), resume)
    first, done = trainer.step, [False]
    before = keeper.steps_before

    def should_stop() -> bool:
        steps = trainer.step - first
        if keeper.check(steps, lambda path: trainer.checkpoint_now(str(path))):
            done[0] = True
            return True
        if until is not None and keeper.cpu_s() >= 60 * until:
            trainer.checkpoint_now()
            return True
        return False

    with contextlib.suppress(TrainingStopped):
        trainer.run(progress=False, workers=0, should_stop=should_stop)
    keeper.steps_before = before + trainer.step - first
    return done[0]


def ptrnet_decoder(weights: Path):
    """``points -> open tours``, greedy, with the weights saved at a mark."""
    try:
        from benchmarks.bench_kool import Run, make_decoder
    except ImportError:  # run as a script
        from bench_kool import Run, make_decoder

    return make_decoder(Run("ptrnet", None, "greedy"), None, str(weights))
