"""Training configuration, data order, loss and checkpoint selection (no learning here), and
the check of a run's config.json on resume (on 4-step runs)."""

import json
from dataclasses import asdict, replace

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import collate
from ptrnet.io.errors import InputError
from ptrnet.io.paper_format import write_examples
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.config import RunConfig, TrainConfig, train_from_dict
from ptrnet.runs.csvlog import CsvLog, read_log
from ptrnet.runs.resume import resume_config
from ptrnet.tasks import get_task
from ptrnet.tasks.constraints import teacher_forcing_mask
from ptrnet.training.data import TrainingData, validation_set
from ptrnet.training.losses import teacher_forced_loss

torch.set_num_threads(1)


def small(**changes) -> TrainConfig:
    base = {"task": "sort", "sizes": "5-6", "steps": 10, "batch_size": 4, "val_count": 8}
    return TrainConfig(**{**base, **changes})


def keys(points_list):
    return {p.tobytes() + str(p.shape).encode() for p in points_list}


# --- configuration ---------------------------------------------------------------------------


def test_unknown_keys_are_errors():
    good = asdict(small())
    with pytest.raises(ValueError, match=r"unknown training config keys: \['learning_rate'\]"):
        train_from_dict({**good, "learning_rate": 0.1})
    model = ModelConfig(input_dim=1, hidden=8)
    run = RunConfig(model, small())
    assert RunConfig.from_dict(run.to_dict()) == run
    with pytest.raises(ValueError, match="unknown model config keys"):
        RunConfig.from_dict({"model": {**model.to_dict(), "dropout": 0.1}, "train": good})
    with pytest.raises(ValueError, match="exactly the keys"):
        RunConfig.from_dict({**run.to_dict(), "extra": {}})


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"lr": -1.0}, "lr must be a positive number"),
        ({"lr": float("nan")}, "lr must be a positive number"),
        ({"batch_size": 0}, "batch_size must be a positive integer"),
        ({"batch_size": 2.5}, "batch_size must be a positive integer"),
        ({"clip_norm": 0}, "clip_norm"),
        ({"decay": 1.5}, "decay must be in"),
        ({"optimizer": "rmsprop"}, "unknown optimizer"),
        ({"task": "no_such_task"}, "unknown task"),
        ({"task": "convex_hull", "sizes": "2-10"}, "needs n >= 3"),
        ({"sizes": "10-5"}, "invalid size range"),
        ({"steps": None}, "exactly one of steps and epochs"),
        ({"epochs": 2}, "exactly one of steps and epochs"),
        ({"seed": -1}, "seed must be a non-negative"),
        ({"val_constraints": "strict"}, "unknown val_constraints"),
        ({"labels": "file"}, "needs a training data file"),
        ({"bucket": "yes"}, "bucket must be"),
        ({"ema": 1.0}, "ema must be 0 \\(off\\) or in \\(0, 1\\)"),
        ({"ema": -0.1}, "ema must be"),
        ({"ema": True}, "ema must be"),
        ({"warmup": -1}, "warmup must be a non-negative integer"),
        ({"warmup": 2.5}, "warmup must be"),
        ({"task": "tsp", "label_solver": "concorde"}, "unknown solver 'concorde' for task tsp"),
    ],
)
def test_impossible_values_are_errors(changes, message):
    with pytest.raises(ValueError, match=message):
        small(**changes)


def test_warmup_rises_linearly_to_the_schedule():
    cfg = small(lr=1e-3, decay=0.5, decay_every=10, warmup=4)
    plain = small(lr=1e-3, decay=0.5, decay_every=10)
    rates = [cfg.learning_rate(step) for step in range(6)]
    want = [plain.learning_rate(s) * min(1.0, (s + 1) / 4) for s in range(6)]
    assert rates == pytest.approx(want)
    assert rates[0] == pytest.approx(plain.learning_rate(0) / 4)
    assert rates[3:] == pytest.approx([plain.learning_rate(s) for s in range(3, 6)])
    assert small().warmup == 0 and small().learning_rate(0) == 1e-3


def test_recipe_defaults_are_resolved_and_saved():
    sgd, adam = small(optimizer="sgd"), small(optimizer="adam")
    assert (sgd.lr, sgd.decay, sgd.clip_norm) == (1.0, 1.0, 2.0)
    assert (adam.lr, adam.decay) == (1e-3, 0.96)
    assert adam.learning_rate(0) == 1e-3
    assert adam.learning_rate(2000) == pytest.approx(1e-3 * 0.96**2)
    assert train_from_dict(asdict(adam)) == adam


def test_model_must_fit_the_task():
    with pytest.raises(ValueError, match="1-D inputs"):
        RunConfig(ModelConfig(input_dim=2), small())
    with pytest.raises(ValueError, match="max_n 5"):
        RunConfig(ModelConfig(kind="seq2seq", input_dim=1, max_n=5), small())


def test_resume_allows_only_run_length_and_logging_changes():
    run = RunConfig(ModelConfig(input_dim=1, hidden=8), small())
    longer = resume_config(run, {"steps": 20, "threads": 1})
    assert (longer.train.steps, longer.train.threads) == (20, 1)
    assert resume_config(run, {"epochs": 3}).train.steps is None
    with pytest.raises(ValueError, match="cannot change batch_size from 4 to 8; lr from"):
        resume_config(run, {"lr": 0.5, "batch_size": 8})


# --- data ------------------------------------------------------------------------------------


def rows(batches):
    """Each real row of the batches as a tuple of float32 values, in batch order."""
    return [
        tuple(p[:n].flatten().tolist())
        for b in batches
        for p, n in zip(b.points, b.lengths, strict=True)
    ]


def as_rows(points_list):
    return [tuple(np.float32(p).flatten().tolist()) for p in points_list]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_validation_never_shares_an_instance_with_training(seed):
    task = get_task("sort")
    cfg = small(sizes="1-3", seed=seed, val_count=300, batch_size=50)
    val_points, _ = validation_set(task, cfg)
    data = TrainingData(task, cfg, val_points)
    trained = rows(data.batch(step) for step in range(6))
    # Training is stream 0 of the seed, in order (a running instance counter) ...
    assert trained == as_rows(task.generate(cfg.size_range, 300, seed, stream=0))
    assert not set(trained) & set(as_rows(val_points))
    # ... and no re-seeded run trains on this run's validation set (validation must never equal
    # training through re-seeding).
    for other in (seed + 1, seed + 2, seed + 10):
        assert not keys(val_points) & keys(task.generate(cfg.size_range, 300, other, stream=0))


def test_generated_data_is_a_pure_function_of_the_step():
    task = get_task("convex_hull")
    cfg = small(task="convex_hull", sizes="5-9", bucket=True, bucket_pool=3)
    a, b = TrainingData(task, cfg, []), TrainingData(task, cfg, [])
    for step in (0, 1, 2, 3, 7):
        a.batch(step)
    for step in (7, 2, 0, 3, 1):  # another order: b builds its pools differently
        x, y = a.batch(step), b.batch(step)
        assert torch.equal(x.points, y.points) and torch.equal(x.targets, y.targets)
    # Fresh data every step: no two steps share an instance.
    assert len(set(rows(a.batch(s) for s in range(6)))) == 6 * cfg.batch_size


def test_bucketing_reorders_but_keeps_the_instances():
    task = get_task("sort")
    plain = TrainingData(task, small(sizes="1-20", bucket_pool=4), [])
    bucket = TrainingData(task, small(sizes="1-20", bucket=True, bucket_pool=4), [])

    plain_batches = [plain.batch(s) for s in range(4)]
    bucket_batches = [bucket.batch(s) for s in range(4)]
    assert sorted(rows(plain_batches)) == sorted(rows(bucket_batches))

    def padding(batches):
        return sum(int(b.lengths.max()) * b.size - int(b.lengths.sum()) for b in batches)

    assert padding(bucket_batches) <= padding(plain_batches)


def test_targets_are_the_canonical_solutions():
    task = get_task("tsp")
    data = TrainingData(task, small(task="tsp", sizes="5-7"), [])
    batch = data.batch(0)
    for points, n, target in zip(batch.points, batch.lengths, batch.targets, strict=True):
        want = task.solve(points[:n].double().numpy())
        assert target[: len(want) + 1].tolist() == [*(want + 1).tolist(), 0]


def test_label_solver_labels_training_but_not_validation(monkeypatch):
    task = get_task("tsp")
    asked = []
    real = type(task).solve

    def solve(self, points, solver=None):
        asked.append(solver)
        return real(self, points, solver)

    monkeypatch.setattr(type(task), "solve", solve)
    cfg = small(task="tsp", sizes="8", label_solver="a2", val_count=3)
    validation_set(task, cfg)
    assert asked == [None] * 3  # validation keeps the task's default (exact) labels
    batch = TrainingData(task, cfg, []).batch(0)
    assert len(asked) > 3 and set(asked[3:]) == {"a2"}  # a pool of batches, all by a2
    for points, target in zip(batch.points, batch.targets, strict=True):
        want = real(task, points.double().numpy(), "a2")
        assert target[: len(want) + 1].tolist() == [*(want + 1).tolist(), 0]


def test_file_data_epochs_are_seeded_permutations(tmp_path):
    task = get_task("sort")
    points = task.generate(small().size_range, 10, seed=99)
    path = tmp_path / "train.txt"
    write_examples(path, [(p, None) for p in points])
    cfg = small(data=str(path), batch_size=4, epochs=2, steps=None, seed=3)
    data = TrainingData(task, cfg, [])
    assert (data.steps_per_epoch, data.total_steps()) == (3, 6)
    assert sorted(rows(data.batch(s) for s in range(3))) == sorted(as_rows(points))
    assert rows(data.batch(s) for s in range(3)) != rows(data.batch(s) for s in range(3, 6))
    again = TrainingData(task, cfg, [])
    assert torch.equal(again.batch(4).points, data.batch(4).points)


def test_file_holding_validation_or_out_of_range_instances_is_refused(tmp_path):
    task = get_task("sort")
    cfg = small()
    val_points, _ = validation_set(task, cfg)
    path = tmp_path / "train.txt"
    write_examples(path, [(p, None) for p in [*task.generate(cfg.size_range, 3, 5), val_points[2]]])
    with pytest.raises(InputError, match=r"train.txt:4: instance is in the validation set"):
        TrainingData(task, replace(cfg, data=str(path)), val_points)
    write_examples(path, [(np.zeros((9, 1)), None)])
    with pytest.raises(InputError, match=r"train.txt:1: 9 points, outside the training sizes"):
        TrainingData(task, replace(cfg, data=str(path)), val_points)


# --- loss, selection, log --------------------------------------------------------------------


def test_loss_is_cross_entropy_on_raw_logits_with_pads_ignored():
    torch.manual_seed(0)
    model = build_model(ModelConfig(input_dim=1, hidden=8))
    task = get_task("sort")
    points = task.generate(small().size_range, 3, seed=1) + [np.array([[0.5]])]
    batch = collate(points, [task.solve(p) for p in points])
    logits = model(batch.points, batch.lengths, batch.targets)
    logp = torch.log_softmax(logits, dim=-1)
    real = batch.targets >= 0
    picked = logp.gather(2, batch.targets.clamp(min=0)[..., None])[..., 0][real]
    assert torch.allclose(teacher_forced_loss(model, batch), -picked.mean())
    assert torch.allclose(teacher_forced_loss(model, batch, "sum"), -picked.sum())


def selection_key(task_name: str, metrics: dict) -> tuple[float, ...]:
    return get_task(task_name).selection_key(metrics)


def test_best_checkpoint_key_is_the_decoded_metric():
    # Lower teacher-forced loss never wins on its own: it is not part of the key.
    worse = {"exact_match": 0.5, "val_tf_loss": 0.1}
    better = {"exact_match": 0.7, "val_tf_loss": 0.9}
    assert selection_key("sort", better) < selection_key("sort", worse)
    short = {"valid_rate": 1.0, "mean_gap": 0.02, "mean_length": 2.5}
    long = {"valid_rate": 1.0, "mean_gap": 0.03, "mean_length": 2.2}  # the gap decides
    invalid = {"valid_rate": 0.9, "mean_gap": 0.01, "mean_length": 2.0}
    assert selection_key("tsp", short) < selection_key("tsp", long) < selection_key("tsp", invalid)
    none_valid = {"valid_rate": 0.0, "mean_gap": None}  # NaN as stored in best.json
    assert selection_key("tsp", invalid) < selection_key("tsp", none_valid)
    assert selection_key("sort", {"exact_match": float("nan")}) > selection_key(
        "sort", {"exact_match": 0.0}
    )
    assert selection_key("delaunay", {"triangle_coverage": 0.9}) < selection_key(
        "delaunay", {"triangle_coverage": 0.8}
    )


def test_csv_log_drops_rows_after_the_resumed_step(tmp_path):
    path, columns = tmp_path / "log.csv", ["step", "loss", "val_x"]
    log = CsvLog(path, columns)
    for step in (1, 2, 3):
        log.write({"step": step, "loss": 1.0 / step})
    log.close()
    log = CsvLog(path, columns, resume_step=2)
    log.write({"step": 3, "loss": 0.25, "val_x": 1.5})
    log.close()
    rows = read_log(path)
    assert [(r["step"], r["loss"], r["val_x"]) for r in rows] == [
        ("1", "1", ""),
        ("2", "0.5", ""),
        ("3", "0.25", "1.5"),
    ]


def brute_force_allowed(targets: list[int], n: int, step: int) -> set[int]:
    """Sort/TSP rule by hand: unvisited inputs until all n are out, then only the end token."""
    done = targets[:step]
    if 0 in done or len(done) >= n:
        return {0}
    return set(range(1, n + 1)) - set(done)


def test_masked_loss_is_cross_entropy_over_the_allowed_tokens_only():
    torch.manual_seed(0)
    model = build_model(ModelConfig(input_dim=1, hidden=8))
    task = get_task("sort")
    points = task.generate(small(sizes="3-6").size_range, 5, seed=2)
    batch = collate(points, [task.solve(p) for p in points])
    logits = model(batch.points, batch.lengths, batch.targets)
    want, count = 0.0, 0
    for row, (x, targets) in enumerate(zip(points, batch.targets.tolist(), strict=True)):
        for step, token in enumerate(targets):
            if token < 0:
                continue
            allowed = sorted(brute_force_allowed(targets, len(x), step))
            assert token in allowed
            column = logits[row, step, allowed]
            want -= (column[allowed.index(token)] - torch.logsumexp(column, 0)).item()
            count += 1
    got = teacher_forced_loss(model, batch, "sum", mask_task=task).item()
    assert got == pytest.approx(want, rel=1e-5)
    # Masking removes probability mass the plain loss spends on impossible tokens.
    assert got < teacher_forced_loss(model, batch, "sum").item()


@pytest.mark.parametrize(
    "name, sizes", [("sort", "1-9"), ("tsp", "3-9"), ("convex_hull", "3-12"), ("delaunay", "4-9")]
)
def test_every_canonical_label_is_allowed_by_its_task_rules(name, sizes):
    task = get_task(name)
    points = task.generate(small(task=name, sizes=sizes).size_range, 64, seed=5)
    batch = collate(points, [task.solve(p) for p in points])
    mask = teacher_forcing_mask(task, batch.lengths, batch.targets, batch.points)  # raises: broken
    assert mask.shape == (*batch.targets.shape, batch.points.shape[1] + 1)
    model = build_model(ModelConfig(input_dim=task.dim, hidden=8))
    assert torch.isfinite(teacher_forced_loss(model, batch, mask_task=task))


def test_a_label_that_breaks_the_rules_is_named():
    task = get_task("sort")
    batch = collate([np.array([[0.3], [0.1], [0.2]])], [np.array([1, 1, 2])])
    with pytest.raises(ValueError, match="label token 2 at step 1 of row 0 breaks the sort"):
        teacher_forcing_mask(task, batch.lengths, batch.targets)


def test_masked_loss_pads_the_mask_to_a_baselines_fixed_vocabulary():
    task = get_task("sort")
    points = task.generate(small(sizes="3-5").size_range, 6, seed=3)
    batch = collate(points, [task.solve(p) for p in points])
    model = build_model(ModelConfig(kind="seq2seq", input_dim=1, hidden=8, max_n=9))
    logits = model(batch.points, batch.lengths, batch.targets)
    assert logits.shape[-1] == 10 > batch.points.shape[1] + 1
    masked = teacher_forced_loss(model, batch, mask_task=task)
    assert torch.isfinite(masked) and masked < teacher_forced_loss(model, batch)


def tiny_run(run) -> list[str]:
    """Train a 4-step run into ``run``; the command line that resumes it to step 6."""
    from ptrnet.cli.main import main

    argv = ["train", "sort", "--dry-run", "--threads", "1", "--workers", "0", "-q"]
    assert main([*argv, "--out", str(run)]) == 0
    return ["train", "sort", "--resume", "--out", str(run), "--threads", "1", "-q"]


def edit_config(run, **changes) -> None:
    """Set ``changes`` (``section__field=value``) in ``run/config.json`` by hand."""
    path = run / "config.json"
    config = json.loads(path.read_text())
    for key, value in changes.items():
        section, name = key.split("__")
        config[section][name] = value
    path.write_text(json.dumps(config, indent=2))


def test_resume_refuses_a_hand_edited_config_json_and_names_the_fields(tmp_path, capsys):
    from ptrnet.cli.main import main

    run = tmp_path / "run"
    resume = tiny_run(run)
    original = (run / "config.json").read_text()
    edit_config(run, model__hidden=32, train__lr=0.01)
    edited = (run / "config.json").read_text()
    capsys.readouterr()
    assert main([*resume, "--steps", "6"]) == 1
    err = capsys.readouterr().err
    line = edited.splitlines().index('    "hidden": 32,') + 1
    assert err.startswith(
        f"ptrnet: error: {run / 'config.json'}:{line}: model.hidden is 32 here but 16 in the "
        "checkpoint; train.lr is 0.01 here but 0.001 in the checkpoint; the checkpoint's "
        f"configuration ({run / 'last.safetensors'}) is the one the run resumes with"
    )
    assert "restore config.json" in err and f"--init-from {run}" in err and "give" not in err
    assert err.count("\n") == 1
    assert (run / "config.json").read_text() == edited  # left for the user to mend
    (run / "config.json").write_text(original)
    assert main([*resume, "--steps", "6"]) == 0
    assert "sort: 6 steps" in capsys.readouterr().out


def test_an_edited_resumable_field_is_refused_unless_its_option_is_given(tmp_path, capsys):
    from ptrnet.cli.main import main

    run = tmp_path / "run"
    resume = tiny_run(run)
    edit_config(run, train__steps=9, train__log_every=3)
    capsys.readouterr()
    assert main(resume) == 1
    err = capsys.readouterr().err
    assert "train.steps is 9 here but 4 in the checkpoint" in err
    assert "train.log_every is 3 here but 1 in the checkpoint" in err
    assert "or give --steps 9 --log-every 3 with --resume" in err
    # Given on the command line, they are the resume's changes: config.json follows them.
    assert main([*resume, "--steps", "6", "--log-every", "2"]) == 0
    assert json.loads((run / "config.json").read_text())["train"]["steps"] == 6
    assert json.loads((run / "config.json").read_text())["train"]["log_every"] == 2


def test_config_json_that_is_not_a_configuration_is_an_error_at_its_line(tmp_path, capsys):
    from ptrnet.cli.main import main

    run = tmp_path / "run"
    resume = tiny_run(run)
    (run / "config.json").write_text('{"model":\n')
    capsys.readouterr()
    assert main([*resume, "--steps", "6"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ptrnet: error: {run / 'config.json'}:2: not valid JSON")
    (run / "config.json").unlink()  # no copy at all: the checkpoint's is written again
    assert main([*resume, "--steps", "6"]) == 0
    assert json.loads((run / "config.json").read_text())["train"]["steps"] == 6
