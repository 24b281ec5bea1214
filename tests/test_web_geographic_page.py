"""A city moved or added on the page's board keeps a place on the globe: the page's inverse of
the projection (``ptrnet/web/static/geo.js``, run in Node) against the server's forward one
(:func:`ptrnet.solvers.geodesy.azimuthal_equidistant` and the read's map into the unit square).

Every city of a read comes back to its own coordinates, and a point anywhere on the board (each
city moved, the board's corners) comes back to that board point when projected forward again:
the latitude and longitude follow the drag. Europe's capitals, cities across the antimeridian
and the Arctic, and a TSPLIB GEO file (``DDD.MM``, latitude first)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed")
from ptrnet.solvers.distances import TSPLIB_GEO, tsplib_degrees  # noqa: E402
from ptrnet.solvers.geodesy import EARTH_RADIUS_KM, azimuthal_equidistant  # noqa: E402
from ptrnet.web.reading import ReadRequest, read_answer  # noqa: E402
from tests.test_tsplib_geo_att import DATA  # noqa: E402

GEO_JS = Path(__file__).resolve().parent.parent / "ptrnet" / "web" / "static" / "geo.js"
CAPITALS = Path(__file__).resolve().parent.parent / "examples" / "capitals.csv"
# Across the antimeridian (Fiji, Samoa, Kamchatka, Auckland) and in the Arctic (Svalbard).
PACIFIC = """name,lon,lat
Suva,178.44,-18.14
Apia,-171.76,-13.83
Petropavlovsk,158.65,53.04
Auckland,174.76,-36.85
Longyearbyen,15.63,78.22
Nuuk,-51.72,64.18
"""


def unproject(units: list, answer: dict) -> list:
    """geo.js's ``unproject`` of each board point in ``units``, for the read ``answer``."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = (
        f"import {{ unproject }} from {json.dumps(GEO_JS.as_uri())};\n"
        f"const [frame, projection] = [{json.dumps(answer['mapping'])}, "
        f"{json.dumps(answer['projection'])}];\n"
        f"const units = {json.dumps(units)};\n"
        "console.log(JSON.stringify(units.map((u) => unproject(u, frame, projection))));"
    )
    run = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def forward(lon_lat: np.ndarray, answer: dict) -> np.ndarray:
    """Board points of ``lon_lat`` degrees by the server's projection and the read's map."""
    plane = azimuthal_equidistant(lon_lat, about=tuple(answer["projection"]["centre"]))
    mapping = answer["mapping"]
    return (plane - np.asarray(mapping["offset"])) / mapping["scale"]


def read(text: str, name: str | None = None) -> dict:
    return read_answer(ReadRequest(task="tsp", text=text, name=name))


def moved(unit: np.ndarray) -> list:
    """Each board point moved a little (as a drag), inside the board, and its four corners."""
    shifted = np.clip(unit + np.array([0.031, -0.027]), 0.0, 1.0)
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    return np.concatenate([shifted, corners]).tolist()


@pytest.mark.parametrize("text", [CAPITALS.read_text(), PACIFIC], ids=["europe", "pacific"])
def test_cities_come_back_to_their_degrees_and_follow_a_drag(text):
    answer = read(text)
    assert answer["projected"] and answer["projection"]["form"] == "lon_lat"
    assert answer["projection"]["radius_km"] == EARTH_RADIUS_KM
    back = np.array(unproject(answer["unit"], answer))
    np.testing.assert_allclose(back, answer["points"], atol=1e-9)
    targets = moved(np.asarray(answer["unit"]))
    placed = np.array(unproject(targets, answer))  # degrees of the dragged points
    assert (np.abs(placed[:, 0]) <= 180).all() and (np.abs(placed[:, 1]) <= 90).all()
    np.testing.assert_allclose(forward(placed, answer), targets, atol=1e-9)


def test_a_tsplib_geo_city_comes_back_in_ddd_mm_latitude_first():
    path = DATA / "ulysses16.tsp"
    answer = read(path.read_text(), path.name)
    assert answer["distances"] == TSPLIB_GEO.name
    assert answer["projection"]["form"] == "tsplib_lat_lon"
    np.testing.assert_allclose(unproject(answer["unit"], answer), answer["points"], atol=1e-9)
    targets = moved(np.asarray(answer["unit"]))
    placed = np.array(unproject(targets, answer))  # (lat, lon) in DDD.MM
    assert (np.abs(placed - np.trunc(placed)) < 0.6).all()  # minutes below 60
    np.testing.assert_allclose(forward(tsplib_degrees(placed), answer), targets, atol=1e-9)


def test_no_place_past_the_antipode_and_the_centre_is_the_centre():
    answer = {
        "mapping": None,
        "projection": {"centre": [10.0, 50.0], "radius_km": 6371.0, "form": "lon_lat"},
    }
    far = np.pi * 6371.0
    places = unproject([[0.0, 0.0], [far, 0.0], [0.0, -far * 1.01], [0.0, 1000.0]], answer)
    assert places[0] == [10.0, 50.0] and places[1] is None and places[2] is None
    assert places[3][0] == pytest.approx(10.0) and places[3][1] == pytest.approx(
        50.0 + np.degrees(1000.0 / 6371.0)
    )  # 1,000 km due north along the meridian
