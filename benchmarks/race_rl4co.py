"""rl4co's attention model (Berto et al., the ``rl4co`` package on PyPI) in the training race
(benchmarks/bench_training_race.py), trained by its own Lightning trainer in this process.

rl4co needs torchrl, tensordict and Lightning, which the project's environment does not hold:
install it into a separate environment that sees the project's packages (its torch among
them) and run this method with that interpreter::

    python -m venv /tmp/rl4co-venv
    SITE="import site; print(site.getsitepackages()[0])"
    python -c "$SITE" > "$(/tmp/rl4co-venv/bin/python -c "$SITE")/main.pth"
    echo "torch==$(python -c 'import torch; print(torch.__version__)')" > /tmp/torch-pin.txt
    /tmp/rl4co-venv/bin/python -m pip install -c /tmp/torch-pin.txt rl4co==0.7.0

The model and recipe are rl4co's defaults for ``AttentionModel(TSPEnv)`` (3 encoder layers,
d = 128, 8 heads, batch norm; REINFORCE with the rollout baseline after one warm-up epoch;
batch 512, epochs of 100,000 instances, 10,000 validation instances, Adam 1e-4, gradient norm
clipped at 1), except what this CPU needs: ``accelerator="cpu"``, one torch thread, float32
(``precision="32-true"``; rl4co's trainer defaults to "16-mixed", a GPU setting), no logger,
no progress bar and no Lightning checkpoints (the race keeps its own). One shim: building the
model raises torch's thread count to the number of cores (seen: 1 to 2; a library it loads
does it outside Python), so the count is set back to 1 after it and when training starts;
with two threads a step took twice the CPU time for the same work.

A Lightning callback reads the clock after every batch; at a mark it saves the policy's
weights and a Lightning checkpoint (``resume.ckpt``: a longer invocation continues from it
through ``fit(ckpt_path=...)``), and at the budget it ends training.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

BATCH_SIZE, EPOCH_SIZE, VAL_SIZE = 512, 100_000, 10_000  # rl4co's defaults


class BudgetReached(Exception):
    """Raised from the callback at the budget's mark."""


def make_model(size: int, batch: int = BATCH_SIZE, epoch: int = EPOCH_SIZE, val: int = VAL_SIZE):
    """rl4co's AttentionModel for TSP with ``size`` cities, its defaults (module docstring)."""
    from rl4co.envs import TSPEnv
    from rl4co.models import AttentionModel

    env = TSPEnv(generator_params={"num_loc": size})
    return AttentionModel(env, baseline="rollout", batch_size=batch, train_data_size=epoch,
                          val_data_size=val, optimizer_kwargs={"lr": 1e-4})  # fmt: skip


def train_rl4co(size: int, run_dir: Path, keeper, batch: int, epoch: int, val: int) -> None:
    """rl4co's training until ``keeper`` (race_log.MarkKeeper) says the budget is reached."""
    import lightning.pytorch as pl
    import rl4co.envs  # noqa: F401  # imported before the clock starts
    import rl4co.models  # noqa: F401
    import torch
    from rl4co.utils.trainer import RL4COTrainer

    torch.set_num_threads(1)

    class Marks(pl.Callback):
        steps = 0

        def on_train_start(self, trainer, module) -> None:
            torch.set_num_threads(1)  # again: see the module docstring

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx) -> None:
            self.steps += 1

            def save(path: Path) -> None:
                torch.save(module.policy.state_dict(), path)
                trainer.save_checkpoint(run_dir / "resume.ckpt")

            if keeper.check(self.steps, save):
                raise BudgetReached

    resume = run_dir / "resume.ckpt"
    keeper.start()
    model = make_model(size, batch, epoch, val)
    torch.set_num_threads(1)  # building it raised the count to the cores (module docstring)
    trainer = RL4COTrainer(max_epochs=10**6, accelerator="cpu", devices=1, precision="32-true",
                           logger=False, enable_checkpointing=False, enable_progress_bar=False,
                           callbacks=[Marks()])  # fmt: skip
    try:
        # Lightning's own fit: RL4COTrainer.fit (the same for this model, which optimises
        # automatically) does not pass weights_only, and the checkpoint (our own file)
        # pickles the baseline's state
        ckpt = str(resume) if resume.exists() else None
        pl.Trainer.fit(trainer, model, ckpt_path=ckpt, weights_only=False)
    except BudgetReached:
        pass


def rl4co_decoder(size: int, weights: Path):
    """``points -> open tours``, greedy, with the policy weights saved at a mark."""
    import torch
    from tensordict import TensorDict

    model = make_model(size)
    model.policy.load_state_dict(torch.load(weights))
    policy, env = model.policy.eval(), model.env

    def decode(points: list[np.ndarray]) -> list[np.ndarray]:
        locs = torch.from_numpy(np.stack(points)).float()  # (B, n, 2)
        td = env.reset(TensorDict({"locs": locs}, batch_size=[len(points)]))
        with torch.inference_mode():
            out = policy(td, env, decode_type="greedy", return_actions=True)
        return [np.asarray(a, dtype=np.int64) for a in out["actions"].numpy()]

    return decode
