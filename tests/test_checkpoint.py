"""Checkpoints: round trip, atomic writes, exact resume, best-checkpoint selection."""

import json
import os
from dataclasses import replace

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from ptrnet.inference import load_model
from ptrnet.io.paper_format import write_examples
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.checkpoint import (
    CheckpointError,
    checksummed_file,
    load_checkpoint,
    read_checkpoint_file,
    save_checkpoint,
)
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.runs.csvlog import read_log
from ptrnet.tasks import get_task
from ptrnet.training import baselines, loop
from ptrnet.training.data import TrainingData
from ptrnet.training.loop import build_optimizer, train, train_step

torch.set_num_threads(1)


def run_config(**changes) -> RunConfig:
    base = {
        "task": "sort",
        "sizes": "4-6",
        "steps": 8,
        "batch_size": 8,
        "val_count": 16,
        "val_every": 4,
        "log_every": 2,
        "threads": 1,
    }
    return RunConfig(ModelConfig(input_dim=1, hidden=16), TrainConfig(**{**base, **changes}))


def trained_state(config: RunConfig, steps: int):
    torch.manual_seed(0)
    model = build_model(config.model)
    optimizer = build_optimizer(model, config.train)
    data = TrainingData(get_task("sort"), config.train, [])
    for step in range(steps):
        train_step(model, optimizer, data.batch(step), config.train, step)
    return model, optimizer


def test_round_trip_restores_config_weights_optimizer_and_rng(tmp_path):
    config = run_config()
    model, optimizer = trained_state(config, 3)
    path = tmp_path / "ckpt.safetensors"
    torch.manual_seed(123)
    save_checkpoint(path, config, 3, model, optimizer, info={"best": {"step": 2}})
    ckpt = load_checkpoint(path)
    assert ckpt.config == config and ckpt.step == 3 and ckpt.info == {"best": {"step": 2}}
    assert ckpt.model_state.keys() == model.state_dict().keys()
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in ckpt.model_state.items())
    assert torch.equal(ckpt.rng_state, torch.get_rng_state())
    rebuilt = build_optimizer(build_model(ckpt.config.model), config.train)
    rebuilt.load_state_dict(ckpt.optimizer_state)
    want, got = optimizer.state_dict()["state"], rebuilt.state_dict()["state"]
    assert want.keys() == got.keys()
    assert all(torch.equal(want[i][k], got[i][k]) for i in want for k in want[i])
    # The config JSON alone rebuilds the model (ModelConfig.from_dict).
    assert ModelConfig.from_dict(ckpt.config.model.to_dict()) == config.model


def test_weights_only_checkpoint_loads_for_inference(tmp_path):
    config = run_config()
    model, _ = trained_state(config, 1)
    save_checkpoint(tmp_path / "best.safetensors", config, 1, model)
    loaded = load_model(tmp_path, "sort")
    assert loaded.task == "sort" and loaded.step == 1 and not loaded.model.training
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in loaded.model.state_dict().items())
    assert load_checkpoint(tmp_path / "best.safetensors").optimizer_state is None


def test_write_is_atomic(tmp_path, monkeypatch):
    config = run_config()
    model, optimizer = trained_state(config, 1)
    path = tmp_path / "last.safetensors"
    save_checkpoint(path, config, 1, model, optimizer)
    before = path.read_bytes()

    def crash(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, config, 2, model, optimizer)
    assert path.read_bytes() == before  # the old checkpoint is intact ...
    assert os.listdir(tmp_path) == ["last.safetensors"]  # ... and no temporary file is left


def test_unreadable_checkpoints_give_one_line_errors(tmp_path):
    config = run_config()
    model, _ = trained_state(config, 0)
    cases = {"missing.safetensors": None, "garbage.safetensors": b"not a checkpoint"}
    for name, data in cases.items():
        if data is not None:
            (tmp_path / name).write_bytes(data)
    save_file({"w": torch.zeros(2)}, tmp_path / "foreign.safetensors")
    tampered = tmp_path / "tampered.safetensors"
    save_checkpoint(tampered, config, 0, model)
    raw = tampered.read_bytes().replace(b'\\"seed\\": 0', b'\\"sead\\": 0')
    tampered.write_bytes(raw)
    expected = {
        "missing.safetensors": "cannot read checkpoint",
        "garbage.safetensors": "not a ptrnet checkpoint",
        "foreign.safetensors": "not a ptrnet checkpoint",
        "tampered.safetensors": (
            r"invalid configuration: unknown training config keys: \['sead'\]; "
            r"did you mean 'seed'\?"
        ),
    }
    for name, message in expected.items():
        with pytest.raises(CheckpointError, match=message) as err:
            load_checkpoint(tmp_path / name)
        assert str(err.value).startswith(str(tmp_path / name)) and "\n" not in str(err.value)


def weights(run_dir):
    return load_checkpoint(os.path.join(run_dir, "last.safetensors"))


def comparable(rows):
    """Log rows without the wall-clock columns."""
    return [{k: v for k, v in r.items() if k not in ("examples_per_s", "elapsed_s")} for r in rows]


def take_the_one_time_draw(config: RunConfig, tmp_path) -> None:
    """Train ``config`` for one step: torch's first bf16 LSTM pass in a process (autocast on a
    CPU with native bf16) draws once from the global generator, and two runs whose saved RNG
    states are compared must both come after it."""
    warm = replace(config.train, steps=1, epochs=None, val_every=1)
    train(RunConfig(config.model, warm), tmp_path / "warm", progress=False)


REINFORCE_VARIANTS = {
    "reinforce-tsp": {"task": "tsp"},
    "reinforce-sort-ema": {"baseline": "ema", "baseline_beta": 0.5},
    # An update every 3 steps, so the split at step 4 falls between two.
    "reinforce-hull-rollout": {"task": "convex_hull", "baseline": "rollout", "baseline_every": 3},
}


@pytest.mark.parametrize(
    "variant",
    [
        "adam-generated",
        "sgd-file-bucketed",
        "adam-ema",
        "heavy-label-steps",
        "heavy-shared-label-steps",
        "heavy-dagger-tsp",
        *REINFORCE_VARIANTS,
    ],
)
def test_resume_continues_exactly(tmp_path, monkeypatch, variant):
    config = run_config(ema=0.7) if variant == "adam-ema" else run_config()
    if variant in REINFORCE_VARIANTS:  # the sampled outputs too are a function of the step
        changes = {"objective": "reinforce", "rl_samples": 3, "baseline_count": 8}
        train_cfg = replace(config.train, **changes, **REINFORCE_VARIANTS[variant])
        dim = get_task(train_cfg.task).dim
        config = RunConfig(ModelConfig(input_dim=dim, hidden=16), train_cfg)
    if variant.startswith("heavy"):  # the sampled label steps are a function of the step
        dagger = variant == "heavy-dagger-tsp"  # the cuts too; the prefixes follow the weights
        heavy = ModelConfig(
            input_dim=2 if dagger else 1,
            hidden=16,
            heads=2,
            encoder="transformer",
            encoder_layers=1,
            decoder="heavy",
            decoder_layers=1,
        )
        shared = variant == "heavy-shared-label-steps"
        changes = {"label_steps": 2, "shared_label_steps": shared, "bucket": shared}
        if dagger:
            changes.update(task="tsp", objective="dagger", shared_label_steps=True, bucket=True)
        config = RunConfig(heavy, replace(config.train, **changes))
    if variant == "reinforce-hull-rollout":  # every test replaces the frozen copy
        monkeypatch.setattr(baselines, "rollout_improved", lambda policy, frozen: True)
    if variant == "sgd-file-bucketed":
        path = tmp_path / "train.txt"
        points = get_task("sort").generate(config.train.size_range, 20, seed=42)
        write_examples(path, [(p, None) for p in points])
        train_cfg = replace(
            config.train,
            optimizer="sgd",
            lr=0.5,
            decay=0.9,
            decay_every=3,
            data=str(path),
            bucket=True,
            bucket_pool=2,
            steps=None,
            epochs=3,
        )
        config = RunConfig(config.model, train_cfg)
    take_the_one_time_draw(config, tmp_path)
    straight = train(config, tmp_path / "straight", progress=False)
    half = straight.step // 2
    first = replace(config.train, steps=half, epochs=None)
    train(RunConfig(config.model, first), tmp_path / "split", progress=False)
    resumed = train(config, tmp_path / "split", resume=True, progress=False)
    a, b = weights(tmp_path / "straight"), weights(tmp_path / "split")
    assert resumed.step == straight.step == a.step == b.step
    assert all(torch.equal(a.model_state[k], b.model_state[k]) for k in a.model_state)
    for i, state in a.optimizer_state["state"].items():
        assert all(torch.equal(v, b.optimizer_state["state"][i][k]) for k, v in state.items())
    assert torch.equal(a.rng_state, b.rng_state)
    assert (a.ema_state is None) == (b.ema_state is None) == (variant != "adam-ema")
    for k, v in (a.ema_state or {}).items():
        assert torch.equal(v, b.ema_state[k])
    assert a.info == b.info  # the same best record
    assert (a.baseline_state is None) == (variant not in REINFORCE_VARIANTS)
    if a.baseline_state is not None:  # the baseline continued exactly too
        assert a.baseline_state.meta == b.baseline_state.meta
        assert a.baseline_state.tensors.keys() == b.baseline_state.tensors.keys()
        for k, v in a.baseline_state.tensors.items():
            assert torch.equal(v, b.baseline_state.tensors[k])
    log_a = comparable(read_log(tmp_path / "straight" / "log.csv"))
    assert log_a == comparable(read_log(tmp_path / "split" / "log.csv"))


def test_the_saved_rng_state_does_not_depend_on_the_worker_count(tmp_path):
    config = run_config(steps=4)
    take_the_one_time_draw(config, tmp_path)
    for workers in (0, 1):
        run = RunConfig(config.model, replace(config.train, workers=workers))
        train(run, tmp_path / f"workers{workers}", progress=False)
    a, b = weights(tmp_path / "workers0"), weights(tmp_path / "workers1")
    assert torch.equal(a.rng_state, b.rng_state)
    assert all(torch.equal(a.model_state[k], b.model_state[k]) for k in a.model_state)


def test_resume_refuses_a_different_run(tmp_path):
    config = run_config(steps=2, val_every=2)
    with pytest.raises(ValueError, match="nothing to resume"):
        train(config, tmp_path, resume=True, progress=False)
    train(config, tmp_path, progress=False)
    with pytest.raises(ValueError, match="already holds a run"):
        train(config, tmp_path, progress=False)
    changed = RunConfig(config.model, replace(config.train, batch_size=4))
    with pytest.raises(ValueError, match="cannot change batch_size"):
        train(changed, tmp_path, resume=True, progress=False)


def test_a_new_run_refuses_a_folder_holding_another_tasks_run(tmp_path):
    copy_run = tmp_path / "copy"  # a copy run writes best.safetensors, never last.safetensors
    copy_run.mkdir()
    (copy_run / "best.safetensors").write_bytes(b"weights of another task")
    with pytest.raises(ValueError, match="already holds a run"):
        train(run_config(steps=1, val_every=1), copy_run, progress=False)
    assert (copy_run / "best.safetensors").read_bytes() == b"weights of another task"


def rewrite_last(run_dir, edit):
    """Rewrite ``last.safetensors`` after ``edit(meta, tensors)``, with a fresh checksum."""
    path = os.path.join(run_dir, "last.safetensors")
    meta, tensors = read_checkpoint_file(path)
    meta.pop("checksum")
    edit(meta, tensors)
    with open(path, "wb") as stream:
        stream.write(checksummed_file(tensors, meta))
    return path


@pytest.mark.parametrize(
    ("baseline", "edit", "message"),
    [
        ("ema", lambda m, t: m["baseline"].update(value="x"), "moving average is 'x'"),
        ("rollout", lambda m, t: m["baseline"].update(updates=-1), "update count is -1"),
        ("rollout", lambda m, t: t.pop("baseline.frozen_costs"), "no 8 held-out costs"),
        ("rollout", lambda m, t: t.pop("baseline.frozen.v"), "frozen copy: Error"),
    ],
)
def test_a_damaged_baseline_state_is_one_checkpoint_error(tmp_path, baseline, edit, message):
    changes = {"objective": "reinforce", "rl_samples": 2, "baseline_count": 8}
    config = run_config(steps=2, val_every=2, baseline=baseline, **changes)
    train(config, tmp_path, progress=False)
    path = rewrite_last(tmp_path, edit)
    with pytest.raises(CheckpointError, match=f"invalid baseline state: .*{message}") as err:
        train(replace(config, train=replace(config.train, steps=4)), tmp_path, resume=True)
    assert str(err.value).startswith(path) and "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["optim.0.exp_avg_sq", "optim.0.step", "rng.torch"])
def test_a_second_checksum_covers_the_optimiser_and_random_state(tmp_path, name):
    train(run_config(steps=2, val_every=2), tmp_path)
    path = os.path.join(tmp_path, "last.safetensors")
    meta, tensors = read_checkpoint_file(path)
    assert meta["state_checksum"].startswith("sha256:")
    tensors[name] = tensors[name].clone()
    tensors[name].view(-1)[0] = 1 - tensors[name].view(-1)[0]  # one value changed
    with open(path, "wb") as stream:
        stream.write(save_file_bytes(tensors, meta))
    with pytest.raises(CheckpointError, match="optimiser or random state was changed"):
        load_checkpoint(path)


def test_the_checksum_covers_the_baseline_tensors(tmp_path):
    changes = {"objective": "reinforce", "rl_samples": 2, "baseline_count": 8}
    train(run_config(steps=2, val_every=2, baseline="rollout", **changes), tmp_path)
    path = os.path.join(tmp_path, "last.safetensors")
    meta, tensors = read_checkpoint_file(path)
    tensors["baseline.frozen_costs"] = tensors["baseline.frozen_costs"] + 1.0
    with open(path, "wb") as stream:
        stream.write(save_file_bytes(tensors, meta))
    with pytest.raises(CheckpointError, match="checksum mismatch"):
        load_checkpoint(path)


def save_file_bytes(tensors, meta):
    """The safetensors bytes of ``tensors`` with ``meta`` as is (its old checksum kept)."""
    from safetensors.torch import save

    return save(tensors, metadata={"ptrnet": json.dumps(meta)})


def test_best_checkpoint_follows_the_decoded_metric_not_the_loss(tmp_path, monkeypatch):
    # Scripted validations where the teacher-forced loss and the decoded metric disagree.
    decoded = iter([0.2, 0.6, 0.4])
    tf_loss = iter([0.5, 0.9, 0.1])

    def fake_evaluate(model, task, points, refs, options=None):
        value = next(decoded)
        return {
            "exact_match": value,
            "position_accuracy": value,
            "valid_rate": 1.0,
            "count": len(points),
        }

    monkeypatch.setattr(loop, "evaluate", fake_evaluate)
    monkeypatch.setattr(loop, "validation_loss", lambda *args: next(tf_loss))
    result = train(run_config(steps=6, val_every=2), tmp_path, progress=False)
    best = json.loads((tmp_path / "best.json").read_text())
    assert (best["step"], best["metric"], best["value"]) == (4, "exact_match", 0.6)
    assert best["val_tf_loss"] == 0.9 and best["constraints"] == "task"
    assert result.best["step"] == 4 == load_checkpoint(tmp_path / "best.safetensors").step
    rows = [r for r in read_log(tmp_path / "log.csv") if r["val_exact_match"]]
    assert [(r["step"], r["val_exact_match"], r["val_tf_loss"]) for r in rows] == [
        ("2", "0.2", "0.5"),
        ("4", "0.6", "0.9"),
        ("6", "0.4", "0.1"),
    ]


def test_real_run_records_the_best_decoded_metric(tmp_path):
    train(run_config(steps=12, val_every=3), tmp_path, progress=False)
    rows = [r for r in read_log(tmp_path / "log.csv") if r["val_position_accuracy"]]
    best = json.loads((tmp_path / "best.json").read_text())
    values = [float(r["val_exact_match"]) for r in rows]
    # Ties on exact match go to position accuracy, then to the later step.
    top = max(rows, key=lambda r: (float(r["val_exact_match"]),
                                   float(r["val_position_accuracy"]), int(r["step"])))  # fmt: skip
    assert best["value"] == pytest.approx(max(values), abs=1e-6)
    assert best["step"] == int(top["step"])
    assert RunConfig.from_dict(best["config"]) == run_config(steps=12, val_every=3)


def test_ema_run_validates_and_keeps_the_moving_average_of_its_weights(tmp_path):
    live = []  # the trained weights after every step, seen from a validation at every step

    def record(trainer, metrics):
        live.append({k: v.clone() for k, v in trainer.model.state_dict().items()})
        return False

    config = run_config(steps=5, val_every=1, ema=0.6)
    result = train(config, tmp_path, progress=False, on_validation=record)
    average = dict(live[0])  # the first step copies the weights, then e = 0.6 e + 0.4 w
    averages = [average]
    for weights_now in live[1:]:
        average = {k: 0.6 * average[k] + 0.4 * w for k, w in weights_now.items()}
        averages.append(average)
    best = load_checkpoint(tmp_path / "best.safetensors")
    assert best.step == result.best["step"]
    for k, v in averages[best.step - 1].items():
        assert torch.allclose(best.model_state[k], v, atol=1e-6)
    last = weights(tmp_path)
    assert all(torch.equal(last.model_state[k], v) for k, v in live[-1].items())
    for k, v in averages[-1].items():
        assert torch.allclose(last.ema_state[f"module.{k}"], v, atol=1e-6)
    assert not all(torch.equal(live[-1][k], v) for k, v in averages[-1].items())
    # A model from an EMA run loads for inference like any other (the average is its model).
    assert load_model(tmp_path).model.state_dict().keys() == live[-1].keys()


def test_warm_start_begins_at_the_checkpoint_weights_with_a_fresh_optimizer(tmp_path):
    first = run_config(steps=4)
    train(first, tmp_path / "first", progress=False)
    source = weights(tmp_path / "first")
    warm = RunConfig(
        first.model,
        replace(first.train, init_from=str(tmp_path / "first" / "last.safetensors"), seed=5),
    )
    trainer = loop.Trainer(warm, str(tmp_path / "warm"), resume=False)
    state = trainer.model.state_dict()
    assert all(torch.equal(state[k], v) for k, v in source.model_state.items())
    assert trainer.step == 0 and not trainer.optimizer.state
    cold = loop.Trainer(replace(warm, train=first.train), str(tmp_path / "cold"), resume=False)
    assert not all(torch.equal(cold.model.state_dict()[k], v) for k, v in state.items())
    # Resuming the warm-started run continues from its own last checkpoint, not the source.
    train(warm, tmp_path / "warm2", progress=False)
    resumed = loop.Trainer(warm, str(tmp_path / "warm2"), resume=True)
    assert resumed.step == 4


def test_warm_start_refuses_another_model_or_task(tmp_path):
    first = run_config(steps=2, val_every=2)
    train(first, tmp_path / "first", progress=False)
    path = str(tmp_path / "first" / "last.safetensors")
    wider = RunConfig(ModelConfig(input_dim=1, hidden=8), replace(first.train, init_from=path))
    with pytest.raises(loop.RunDirError, match="model .* differs"):
        loop.Trainer(wider, str(tmp_path / "wider"), resume=False)
    with pytest.raises(ValueError, match="init_from must be a path string"):
        replace(first.train, init_from=3)


def test_a_diverged_run_stops_before_saving_its_non_finite_weights(tmp_path, monkeypatch):
    # Whether a huge learning rate overflows within four steps depends on the CPU's kernels, so
    # the divergence is planted: after its third step the model's weights hold an infinity.
    def diverging_step(model, optimizer, batch, cfg, step, *args, **kwargs):
        result = train_step(model, optimizer, batch, cfg, step, *args, **kwargs)
        if step >= 2:
            with torch.no_grad():
                next(model.parameters()).fill_(float("inf"))
        return result

    monkeypatch.setattr(loop, "train_step", diverging_step)
    with pytest.raises(loop.DivergedError, match=r"at step 4 the weight .* is not a finite"):
        train(run_config(), tmp_path / "fresh", progress=False)
    assert not (tmp_path / "fresh" / "last.safetensors").exists()
    assert not (tmp_path / "fresh" / "best.safetensors").exists()


def test_resume_refuses_a_damaged_log_a_damaged_best_and_fewer_steps(tmp_path):
    from ptrnet.io.errors import InputError

    config = run_config(steps=4, val_every=2)
    train(config, tmp_path, progress=False)
    log = (tmp_path / "log.csv").read_text()
    longer = RunConfig(config.model, replace(config.train, steps=6))
    (tmp_path / "log.csv").write_text(log + "garbage line\n")
    line = log.count("\n") + 1
    with pytest.raises(InputError, match=rf"log\.csv:{line}: no integer step"):
        train(longer, tmp_path, resume=True, progress=False)
    (tmp_path / "log.csv").write_text(log)
    shorter = RunConfig(config.model, replace(config.train, steps=2))
    with pytest.raises(ValueError, match="already at step 4; resume with more steps"):
        train(shorter, tmp_path, resume=True, progress=False)
    assert json.loads((tmp_path / "config.json").read_text())["train"]["steps"] == 4
    best = (tmp_path / "best.safetensors").read_bytes()
    (tmp_path / "best.safetensors").write_bytes(best[:-100])
    with pytest.raises(InputError, match=r"best\.safetensors: not a ptrnet checkpoint"):
        train(longer, tmp_path, resume=True, progress=False)
    (tmp_path / "best.safetensors").write_bytes(best)
    assert train(longer, tmp_path, resume=True, progress=False).step == 6


def test_a_fixed_vocabulary_model_refuses_larger_validation_instances(tmp_path):
    from ptrnet.io.errors import InputError

    task = get_task("sort")
    points = list(np.random.default_rng(0).random((3, 9, 1)))  # (9, 1) each: 9 values
    write_examples(tmp_path / "val.txt", [(p, task.solve(p)) for p in points])
    config = run_config(val_data=str(tmp_path / "val.txt"))
    seq2seq = RunConfig(ModelConfig(kind="seq2seq", input_dim=1, hidden=8, max_n=6), config.train)
    with pytest.raises(InputError, match=r"val\.txt: an instance of 9 points; a seq2seq model"):
        train(seq2seq, tmp_path / "run", progress=False)


def test_resume_refuses_a_data_file_that_changed(tmp_path):
    task = get_task("sort")
    rng = np.random.default_rng(5)
    data = tmp_path / "train.txt"
    write_examples(data, [(p, None) for p in rng.random((32, 5, 1))])
    config = run_config(data=str(data), sizes="5", steps=2, val_every=2)
    train(config, tmp_path / "run", progress=False)
    longer = RunConfig(config.model, replace(config.train, steps=4))
    assert train(longer, tmp_path / "run", resume=True, progress=False).step == 4  # same file
    write_examples(data, [(p, task.solve(p)) for p in rng.random((32, 5, 1))])
    longest = RunConfig(config.model, replace(config.train, steps=6))
    with pytest.raises(ValueError, match=r"train\.txt: not the data file this run started with"):
        train(longest, tmp_path / "run", resume=True, progress=False)
