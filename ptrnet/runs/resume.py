"""Resuming a run: the saved training config with the few changes a resume may make
(``RESUMABLE``: the length, the thread count, ...), refused with the fields named otherwise."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ptrnet.runs.config import RunConfig
from ptrnet.runs.shared import RESUMABLE


def resume_config(saved: RunConfig, changes: dict[str, Any]) -> RunConfig:
    """``saved`` with ``changes`` to its training config (:func:`resumed_train`)."""
    return RunConfig(saved.model, resumed_train(saved.train, changes))


def resumed_train(saved: Any, changes: dict[str, Any]) -> Any:
    """The training config ``saved`` (a frozen dataclass: TrainConfig, CopyTrainConfig) with
    ``changes``, all of which must be in RESUMABLE; a change to ``steps`` clears ``epochs`` and
    the reverse, where the config has both.

    Raises ValueError naming the fields that would make the resumed run a different run.
    """
    changed = {k: v for k, v in changes.items() if getattr(saved, k, object()) != v}
    fixed = sorted(set(changed) - RESUMABLE)
    if fixed:
        what = "; ".join(f"{k} from {getattr(saved, k, None)} to {changed[k]}" for k in fixed)
        raise ValueError(
            f"cannot change {what} when resuming; only {', '.join(sorted(RESUMABLE))} may change"
        )
    if hasattr(saved, "epochs"):
        if "steps" in changed and "epochs" not in changed:
            changed["epochs"] = None
        if "epochs" in changed and "steps" not in changed:
            changed["steps"] = None
    return replace(saved, **changed)
