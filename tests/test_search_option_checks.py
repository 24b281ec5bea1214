"""The tour searches' options, checked at every door before any decoding: RRC's rounds are
bounded (``--iterations``, ``iterations=``: 1 .. MAX_ITERATIONS, so no search runs for ever),
and a search needs tours to start from, which ``constraints none`` may not decode (a traceback
``a closed tour of 6 cities expected`` from 2-opt, a 500 from the page, before)."""

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.cli.main import main
from ptrnet.io.limits import MAX_ITERATIONS

pytest.importorskip("fastapi", reason="the web extra is not installed")
from fastapi.testclient import TestClient  # noqa: E402

from ptrnet.web.app import create_app  # noqa: E402
from tests.test_viz import tiny_model  # noqa: E402

torch.set_num_threads(1)
CITIES = np.random.default_rng(0).random((6, 2))
REFUSED = "searches tours, and --constraints none may decode outputs that are not tours"


@pytest.fixture(scope="module")
def tsp():
    return ptrnet.load("tsp", device="cpu")


@pytest.fixture()
def cities(tmp_path):
    path = tmp_path / "cities.txt"
    path.write_text("\n".join(f"{x} {y}" for x, y in CITIES) + "\n")
    return path


@pytest.mark.parametrize("flags", [["--two-opt"], ["--or-opt"], ["--improve", "rrc"]])
@pytest.mark.parametrize("command", ["predict", "eval"])
def test_a_search_after_an_unconstrained_decoding_is_refused_in_one_line(
    capsys, cities, command, flags
):
    argv = [command, "tsp", str(cities), "--constraints", "none", *flags]
    status = main(argv + (["-o", "-"] if command == "predict" else []))
    err = capsys.readouterr().err
    assert status == 2
    assert err == f"ptrnet: error: {' '.join(flags)}: {REFUSED}; use --constraints task\n"


@pytest.mark.parametrize("value", ["0", str(MAX_ITERATIONS + 1), str(10**18)])
def test_the_command_line_bounds_rrc_rounds(capsys, cities, value):
    status = main(["predict", "tsp", str(cities), "--improve", "rrc", "--iterations", value])
    bound = f"expected an integer from 1 to {MAX_ITERATIONS:,}, got '{value}'"
    assert status == 2
    expected = f"ptrnet: error: argument --iterations: {bound} (see ptrnet predict --help)\n"
    assert capsys.readouterr().err == expected


@pytest.mark.parametrize("iterations", [0, MAX_ITERATIONS + 1, 10**18, np.uint64(2**64 - 1)])
def test_the_api_bounds_rrc_rounds_before_decoding(tsp, iterations):
    with pytest.raises(ValueError, match=f"an integer from 1 to {MAX_ITERATIONS:,}"):
        tsp.solve(CITIES, improve="rrc", iterations=iterations)


@pytest.mark.parametrize(
    "search", [{"two_opt": True}, {"or_opt": True}, {"improve": "rrc", "iterations": 2}]
)
def test_the_api_refuses_a_search_after_an_unconstrained_decoding(tsp, search):
    with pytest.raises(ValueError, match="constraints='none' may decode outputs that are not"):
        tsp.solve(CITIES, constraints="none", **search)


def test_an_unconstrained_tsp_decoding_is_answered_and_its_search_refused_by_the_page():
    with TestClient(create_app({"tsp": tiny_model("tsp")}), base_url="http://localhost") as c:
        plain = {"task": "tsp", "points": CITIES.tolist(), "decoding": {"constraints": "none"}}
        assert c.post("/api/predict", json=plain).status_code == 200
        plain["decoding"]["two_opt"] = True
        response = c.post("/api/predict", json=plain)
    assert response.status_code == 422
    assert "constraints='none' may decode outputs that are not tours" in response.json()["detail"]
