"""``ptrnet generate|train|eval|predict copy`` end to end, copy checkpoints, and the bundled
pointer-generator's metrics on fresh data."""

import json
import re

import pytest
import torch

from ptrnet.cli import eval as eval_command
from ptrnet.cli import generate, predict, train
from ptrnet.cli.main import build_parser, main
from ptrnet.inference import bundled_model_dir
from ptrnet.io.errors import InputError
from ptrnet.runs.checkpoint import CheckpointError
from ptrnet.tasks import get_task
from ptrnet.text.checkpoint import load_copy_model, save_copy_model
from ptrnet.text.evaluate import evaluate_pairs, load
from ptrnet.text.format import read_pairs

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A run directory of a 4-step pointer-generator."""
    root = tmp_path_factory.mktemp("copy")
    assert main(["train", "copy", "--out", str(root / "run"), "-q", "--dry-run"]) == 0
    return root / "run"


generate_pairs = get_task("copy").generate_pairs


@pytest.mark.parametrize("module", [generate, train, eval_command, predict])
def test_copy_commands_are_parsed_by_the_generic_commands(module):
    """One parser for every task: ``COMMAND copy`` and ``COMMAND sort`` run the same module
    (which hands copy to its input kind's front end)."""
    argv = {"generate": ["--count", "1", "-o", "f"], "train": [], "eval": ["f"], "predict": ["x"]}
    for task in ("copy", "sort"):
        args = build_parser().parse_args([module.NAME, task, *argv[module.NAME]])
        assert args.run.args == (module.NAME, module.run) and args.task == task


def test_generate_is_deterministic_text(cli, tmp_path):
    assert cli("generate", "copy", "--count", "25", "--seed", "4", "-o", "a.txt")[0] == 0
    assert cli("generate", "copy", "--count", "25", "--seed", "4", "-q", "-o", "b.txt")[0] == 0
    text = (tmp_path / "a.txt").read_text()
    assert text == (tmp_path / "b.txt").read_text()
    assert text.splitlines()[3] == generate_pairs(1, 4, 0, start=3).__next__().line()


def test_train_writes_a_run_that_eval_and_predict_read(cli, tiny_run, tmp_path):
    assert {p.name for p in tiny_run.iterdir()} >= {"best.safetensors", "best.json", "log.csv"}
    best = json.loads((tiny_run / "best.json").read_text())
    assert best["config"]["train"]["arch"] == "pointer_generator"
    cli("generate", "copy", "--count", "12", "--seed", "8", "-o", "test.txt")
    status, out, _ = cli("eval", "copy", "test.txt", "--model", tiny_run, "--json")
    metrics = json.loads(out)
    assert status == 0 and metrics["count"] == 12
    assert set(metrics) == {
        "exact_match",
        "token_accuracy",
        "oov_recall",
        "p_gen_copied",
        "p_gen_generated",
        "count",
    }
    status, out, _ = cli(
        "eval", "copy", "test.txt", "--model", tiny_run, "--decode", "beam", "--p-gen", "0"
    )
    assert status == 0 and "arch             pointer_generator" in out
    table = dict(line.split(None, 1) for line in out.splitlines())
    for key in ("exact_match", "token_accuracy", "oov_recall"):  # rates in percent
        assert re.fullmatch(r"\d+\.\d\d%", table[key]), table
    assert table["p_gen_copied"] == "0.0000"  # --p-gen 0: a probability, not a rate
    status, out, _ = cli(
        "predict", "copy", "Late on Friday, Akinyi broke the Lisbon record", "--model", tiny_run
    )
    assert status == 0 and len(out.splitlines()) == 1
    status, out, _ = cli("predict", "copy", "kiki won the cup", "--model", tiny_run, "--explain")
    assert status == 0 and out.startswith("kiki won the cup </s>") and "p_gen" in out
    status, _, _ = cli("predict", "copy", "test.txt", "--model", tiny_run, "-o", "out.txt", "-q")
    pairs = read_pairs(tmp_path / "out.txt", need_target=False)
    assert status == 0 and [p.source for p in pairs] == [
        p.source for p in read_pairs(tmp_path / "test.txt")
    ]


def test_errors_are_one_line(cli, tiny_run, tmp_path):
    (tmp_path / "bad.txt").write_text("kiki won the cup\tkiki wins cup\nno target here\n")
    status, _, err = cli("eval", "copy", "bad.txt", "--model", tiny_run)
    assert (
        status == 1
        and err == "ptrnet: error: bad.txt:2: expected 'SOURCE<TAB>TARGET', found no tab\n"
    )
    status, _, err = cli("eval", "copy", "bad.txt", "--model", bundled_model_dir("sort"))
    assert status == 1 and "not a copy-task checkpoint" in err and len(err.splitlines()) == 1
    status, _, err = cli("predict", "copy", "x", "--model", tiny_run, "--p-gen", "2")
    assert status == 2 and "expected a number in [0, 1]" in err
    status, _, err = cli("train", "copy", "--out", "r", "--lr", "0")
    assert (status, err) == (2, "ptrnet: error: lr must be a positive number, got 0.0\n")
    status, _, err = cli("predict", "copy", " ", "--model", tiny_run)
    assert status == 2 and "no words" in err


def test_checkpoint_round_trip_and_errors(tiny_run, tmp_path):
    loaded = load_copy_model(tiny_run / "best.safetensors")
    save_copy_model(
        tmp_path / "again.safetensors", loaded.model, loaded.vocab, loaded.train, 7, {"a": 1}
    )
    again = load_copy_model(tmp_path / "again.safetensors")
    assert again.vocab.words == loaded.vocab.words and again.step == 7 and again.info == {"a": 1}
    assert again.model.config == loaded.model.config and again.train == loaded.train
    for key, value in loaded.model.state_dict().items():
        assert torch.equal(again.model.state_dict()[key], value)
    (tmp_path / "junk.safetensors").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="not a ptrnet checkpoint"):
        load_copy_model(tmp_path / "junk.safetensors")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no checkpoint"):
        load(tmp_path / "empty")


def test_bundled_model_meets_its_targets_on_fresh_data():
    """The copy task's targets (exact_match >= 90%, oov_recall >= 98%) on 300 sentences of a
    seed and stream the training never saw."""
    model = load(None)
    assert model.train["arch"] == "pointer_generator" and model.model.config.p_gen is None
    metrics, _ = evaluate_pairs(model, list(generate_pairs(300, seed=2027, stream=7)))
    assert metrics["exact_match"] >= 0.9 and metrics["oov_recall"] >= 0.98
    assert metrics["p_gen_copied"] < 0.5 < metrics["p_gen_generated"]


def test_explained_p_is_the_chosen_words_probability():
    """``--explain``'s P was the mixture's largest value, which is another word's when decoding
    ruled the largest out (``<pad>`` or ``<s>`` of an untrained model)."""

    from ptrnet.cli.sentences import _explained
    from ptrnet.text.decode import Explanation

    explanation = Explanation(
        source=("kiki", "</s>"),
        vocabulary=("<pad>", "<s>", "</s>", "kiki"),
        output=("kiki",),
        p_vocab=torch.tensor([[0.7, 0.1, 0.1, 0.1]]),
        attention=torch.tensor([[0.9, 0.1]]),
        p_gen=torch.tensor([0.5]),
        mixture=torch.tensor([[0.35, 0.05, 0.1, 0.5]]),
    )
    step = _explained(explanation).splitlines()[1]
    assert "P 0.500" in step
    explanation = Explanation(**{**vars(explanation), "mixture": torch.tensor([[0.6, 0, 0, 0.4]])})
    assert "P 0.400" in _explained(explanation).splitlines()[1]
