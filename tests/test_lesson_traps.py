"""``ptrnet lesson TRAP``: each trap's experiment at its --quick size shows its effect.

The slow tests train the quick models (seeded) and assert the direction of each effect, with a
margin; the fast ones check the command and the record on a few training steps.
"""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from ptrnet.lessons.traps import TRAP_NAMES, label_order, mask, mixing
from ptrnet.lessons.traps.common import Size
from ptrnet.lessons.traps.label_order import random_order
from ptrnet.lessons.traps.run import TRAPS, report, run_trap
from ptrnet.tasks import TASKS
from ptrnet.tasks.sequences import same_cycle

TINY = Size(steps=3, batch=8, hidden=8, tests=6)
DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture
def tiny(monkeypatch):
    for module in TRAPS.values():
        monkeypatch.setitem(module.SIZES, "quick", TINY)


@pytest.mark.parametrize("name", TRAP_NAMES)
def test_every_trap_runs_and_reports(tiny, name):
    record = run_trap(name, quick=True, seed=1)
    assert record["steps"] == TINY.steps and record["figures"]
    text = report(record)
    assert (
        text.startswith(f"{name} (quick: 3 steps of 8")
        and "s of CPU" in text
        and len(text.splitlines()) > 2
    )


def test_the_report_prints_rates_in_percent_and_other_figures_as_numbers():
    record = {
        "trap": "mask",
        "size": "quick",
        "steps": 3,
        "batch": 8,
        "hidden": 8,
        "tests": 6,
        "seed": 0,
        "cpu": "a CPU",
        "threads": 1,
        "wall_s": 1.0,
        "cpu_s": 1.0,
        "figures": {"plain": {"invalid": 0.2, "repeats_per_output": 1.46, "exact_match": 0.0321}},
    }
    assert report(record).splitlines()[1] == (
        "  plain: invalid 20.00%, repeats_per_output 1.46, exact_match 3.21%"
    )
    record["trap"], record["figures"] = "mixing", {"pointer": {"beyond_training_right": None}}
    assert report(record).splitlines()[1] == "  pointer: beyond_training_right —"


@pytest.mark.parametrize("name", TRAP_NAMES)
def test_every_trap_names_only_figures_it_reports_as_rates(tiny, name):
    figures = run_trap(name, quick=True, seed=1)["figures"]
    keys = {key for numbers in figures.values() for key in numbers}
    assert keys >= TRAPS[name].RATES


def test_the_command_prints_and_writes_the_figures(tiny, cli, tmp_path):
    status, out, _ = cli("lesson", "mask", "--quick", "-o", "mask.json")
    assert status == 0
    assert re.search(r"masked loss, n=12, decoded mask=none: invalid \d+\.\d\d%,", out)
    record = json.loads((tmp_path / "mask.json").read_text())
    assert record["trap"] == "mask" and record["size"] == "quick"
    status, _, err = cli("lesson", "masking")
    assert status == 2 and "invalid choice: 'masking'" in err


def test_steps_overrides_the_sizes_own_training_length(tiny, cli, tmp_path):
    status, out, _ = cli("lesson", "mask", "--quick", "--steps", "2", "-o", "mask.json")
    assert status == 0 and out.startswith("mask (quick: 2 steps of 8")
    assert json.loads((tmp_path / "mask.json").read_text())["steps"] == 2
    status, _, err = cli("lesson", "mask", "--steps", "0")
    assert status == 2 and "--steps" in err


def test_random_order_labels_are_the_same_hull_from_any_start():
    rng = np.random.default_rng(0)
    points = rng.random((9, 2))
    labels = [random_order(points, rng) for _ in range(20)]
    canonical = TASKS["convex_hull"].solve(points)
    assert all(same_cycle(label, canonical) for label in labels)
    assert len({tuple(label) for label in labels}) > 2  # starts and directions vary


def test_positions_right_counts_the_steps_beyond_the_training_size():
    refs, preds = [np.array([0, 7, 6, 1])], [np.array([0, 6, 6, 1])]
    assert mixing.positions_right(refs, preds, seen=6) == {
        "positions_right": 0.75,
        "beyond_training_right": 0.5,
    }
    assert mask.repeats(np.array([2, 2, 1, 2])) == 2


@pytest.mark.slow
def test_mixing_cannot_name_positions_beyond_its_training_sizes():
    figures = run_trap("mixing", quick=True)["figures"]
    pointer, attention = figures["pointer n=8"], figures["attention n=8"]
    assert pointer["beyond_training_right"] > attention["beyond_training_right"] + 0.3
    assert attention["beyond_training_right"] < 0.5


@pytest.mark.slow
def test_decoding_without_the_mask_repeats_inputs():
    figures = run_trap("mask", quick=True)["figures"]
    for loss in ("plain", "masked"):
        for n in mask.TEST_SIZES:
            masked = figures[f"{loss} loss, n={n}, decoded mask=task"]
            assert masked["invalid"] == 0 and masked["repeats_per_output"] == 0
    beyond = figures[f"plain loss, n={mask.TEST_SIZES[-1]}, decoded mask=none"]
    assert beyond["invalid"] > 0.1 and beyond["repeats_per_output"] > 0.1
    never_learned = figures[f"masked loss, n={mask.TEST_SIZES[0]}, decoded mask=none"]
    assert never_learned["invalid"] > 0.5 and never_learned["repeats_per_output"] > 1


@pytest.mark.slow
def test_random_label_order_spreads_the_probability_of_an_answer():
    """A hull of h vertices has 2h random-order labels: the model trained on them can give
    its answer at most 1/(2h) (h >= 3 at n = 5), the canonical one far more. Only the spread:
    at the quick size both models are still on the hull's early loss plateau, so accuracy
    does not separate them (the full size's record does: the next test)."""
    figures = run_trap("label-order", quick=True)["figures"]
    canonical, scrambled = figures["canonical"], figures["random start and direction"]
    assert scrambled["p(own answer)"] < 1 / 6
    assert canonical["p(own answer)"] > 2 * scrambled["p(own answer)"]


def test_the_label_order_record_shows_trained_canonical_labels_right_more_often():
    """The full size's record (``ptrnet lesson label-order -o docs/traps-runs/label-order.json``):
    the canonical model trained to a high accuracy, the random-order one clearly lower and its
    probability spread; docs/traps.md's table quotes the record."""
    record = json.loads((DOCS / "traps-runs" / "label-order.json").read_text())
    assert record["size"] == "full" and record["steps"] == label_order.SIZES["full"].steps
    canonical = record["figures"]["canonical"]
    scrambled = record["figures"]["random start and direction"]
    assert canonical["accuracy (task mask)"] >= 0.55
    assert canonical["accuracy (task mask)"] > scrambled["accuracy (task mask)"] + 0.2
    assert scrambled["p(own answer)"] < 1 / 6 < canonical["p(own answer)"]
    table = (DOCS / "traps.md").read_text()
    for name, row in record["figures"].items():
        masked, plain = row["accuracy (task mask)"], row["accuracy (none mask)"]
        cells = f"| {name} | {masked:.1%} | {plain:.1%} | {row['p(own answer)']:.3f} |"
        assert cells in table


@pytest.mark.slow
def test_index_decoder_inputs_learn_worse_than_coordinates():
    figures = run_trap("decoder-inputs", quick=True)["figures"]
    right, trap = figures["coordinates (the paper's)"], figures["index embedding"]
    assert right["mean_gap"] < trap["mean_gap"] - 0.05
