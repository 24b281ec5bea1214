"""A TSP model on TSPLIB files: ``ptrnet eval tsp FILE.tsp`` and ``ptrnet predict`` on .tsp."""

import json

import numpy as np
import pytest
import torch
from shared_data import TSPLIB
from tiny_models import bundle_tiny_models

from ptrnet.cli.main import main
from ptrnet.evaluation import tsplib_eval
from ptrnet.evaluation.tsplib_eval import evaluate_tsplib
from ptrnet.io.paper_format import read_examples
from ptrnet.searches.plan import SearchPlan
from ptrnet.tasks import get_task

torch.set_num_threads(1)
FILES = [str(TSPLIB / "eil51.tsp"), str(TSPLIB / "berlin52.tsp")]


@pytest.fixture()
def model(tmp_path):
    bundle_tiny_models(tmp_path, ["tsp"])
    return str(tmp_path / "tsp")


def eval_json(capsys, *args):
    assert main(["eval", "tsp", *FILES, "--model", *args, "--json", "--threads", "1"]) == 0
    return json.loads(capsys.readouterr().out)["instances"]


def test_gaps_against_proven_optima_and_two_opt_helps(model, capsys):
    plain = eval_json(capsys, model)
    improved = eval_json(capsys, model, "--two-opt")
    assert [r["name"] for r in plain] == ["eil51", "berlin52"]
    assert [r["optimum"] for r in plain] == [426, 7542]
    for before, after in zip(plain, improved, strict=True):
        assert before["n"] == after["n"] and before["length"] >= after["length"] >= after["optimum"]
        assert after["gap"] == pytest.approx(after["length"] / after["optimum"] - 1)


def test_markdown_table_with_mean(model, capsys):
    assert main(["eval", "tsp", FILES[0], "--model", model, "--decode", "beam"]) == 0
    out = capsys.readouterr().out
    assert "| eil51 | 51 | 426 |" in out and "**mean**" in out


def test_optima_found_without_a_path_for_a_copied_instance(model, tmp_path, capsys):
    # No optimal.txt beside the copy: the optima shipped in ptrnet/data/tsplib are used.
    copy = tmp_path / "eil51.tsp"
    copy.write_bytes((TSPLIB / "eil51.tsp").read_bytes())
    assert main(["eval", "tsp", str(copy), "--model", model, "--json", "--threads", "1"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["instances"]
    assert row["name"] == "eil51" and row["optimum"] == 426


def test_predict_writes_the_instance_in_its_own_units(model, tmp_path):
    out = tmp_path / "pred.txt"
    assert main(["predict", "tsp", FILES[0], "-o", str(out), "--model", model, "-q"]) == 0
    ((points, seq, _),) = read_examples(str(out), get_task("tsp"), "prediction")
    assert points.shape == (51, 2) and points.min() > 1  # eil51's cities, as in the file
    assert get_task("tsp").is_valid(points, seq)


def test_errors_are_one_line(model, tmp_path, capsys):
    optima = tmp_path / "optimal.txt"
    optima.write_text("berlin52 : 7542\nberlin52 : 7542\n")
    assert main(["eval", "tsp", FILES[0], "--model", model, "--optimal", str(optima)]) == 1
    assert "optimal.txt:2: 'berlin52' again, already given on line 1" in capsys.readouterr().err
    assert main(["predict", "sort", FILES[0], "-o", str(tmp_path / "x"), "--model", model]) != 0
    err = capsys.readouterr().err
    assert err.startswith("ptrnet: error: ") and "not sort" in err


def test_a_file_the_optima_do_not_name_is_measured_without_a_gap(model, tmp_path, capsys):
    """eil51's own cities: TSPLIB's optimum holds even where the given file lacks its name."""
    optima = tmp_path / "optimal.txt"
    optima.write_text("berlin52 : 7542\n")
    mine = tmp_path / "mine.tsp"
    mine.write_text((TSPLIB / "berlin52.tsp").read_text().replace("berlin52", "mine"))
    argv = ["eval", "tsp", FILES[0], str(mine), "--model", model, "--optimal", str(optima)]
    assert main([*argv, "--json"]) == 0
    captured = capsys.readouterr()
    eil51, mine_row = json.loads(captured.out)["instances"]
    assert eil51["optimum"] == 426 and mine_row["name"] == "mine"
    assert mine_row["optimum"] is None and mine_row["gap"] is None
    assert f"ptrnet: {mine}: no optimum for 'mine' in {optima}; no gap is computed" in captured.err


@pytest.mark.parametrize(
    ("flags", "message"),
    [(["--optimal", "optima.txt"], "--optimal applies to TSPLIB .tsp files")],
)
def test_tsplib_options_on_a_paper_file_are_refused(model, tmp_path, capsys, flags, message):
    paper = tmp_path / "tsp5.txt"
    paper.write_text("0.1 0.1 0.9 0.1 0.9 0.9 0.1 0.9 0.5 0.5 output 1 2 3 5 4 1\n")
    assert main(["eval", "tsp", str(paper), "--model", model, *flags]) == 2
    assert message in capsys.readouterr().err


TINY5 = """NAME : tiny5
TYPE : TSP
DIMENSION : 5
EDGE_WEIGHT_TYPE : EUC_2D
NODE_COORD_SECTION
1 5 1
2 0 5
3 0 3
4 0 1
5 2 2
EOF
"""


def test_two_opt_never_lengthens_the_rounded_tour(tmp_path, monkeypatch):
    """2-opt ran on the unrounded distances: from the tour 1 2 3 4 5 (15 under EUC_2D) it took
    a move that is shorter in floats and 16 when rounded (as ch130's optimum became 6111)."""
    path = tmp_path / "tiny5.tsp"
    path.write_text(TINY5)
    monkeypatch.setattr(tsplib_eval, "predict", lambda *args: [np.array([0, 1, 2, 3, 4, 0])])
    tsp = get_task("tsp")
    (plain,) = evaluate_tsplib(None, [path], {"tiny5": 15}, task=tsp)
    polish = SearchPlan(local=("two_opt",))
    (improved,) = evaluate_tsplib(None, [path], {"tiny5": 15}, task=tsp, search=polish)
    assert plain.length == 15 and improved.length <= 15


def test_the_report_names_the_two_opt_pass(model, capsys):
    """The decoding line said "greedy; 1 view" with --two-opt as without it."""
    assert main(["eval", "tsp", FILES[0], "--model", model, "--two-opt", "--threads", "1"]) == 0
    assert "only valid outputs; then 2-opt on TSPLIB lengths" in capsys.readouterr().out
    assert main(["eval", "tsp", FILES[0], "--model", model, "--threads", "1"]) == 0
    assert "2-opt" not in capsys.readouterr().out
