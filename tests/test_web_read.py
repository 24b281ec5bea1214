"""``POST /api/read``: a pasted or dropped file read by the command line's reader, through
FastAPI's TestClient. The page's side (paste, drop, names on the board) is
tests/test_web_read_browser.py."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed")
from fastapi.testclient import TestClient  # noqa: E402

from ptrnet.io.instances import read_instances  # noqa: E402
from ptrnet.tasks import get_task  # noqa: E402
from ptrnet.web.app import MAX_BODY, create_app  # noqa: E402
from ptrnet.web.guard import is_heavy  # noqa: E402
from ptrnet.web.reading import PAGE_FORMATS  # noqa: E402
from ptrnet.web.schemas import MAX_POINTS  # noqa: E402

STATIC = Path(__file__).parents[1] / "ptrnet" / "web" / "static"
CITIES = "city,x,y\nParis,2.35,48.86\nLyon,4.84,45.76\nNice,7.26,43.70\nBrest,-4.49,48.39\n"
TSPLIB = (
    "NAME : four\nTYPE : TSP\nDIMENSION : 4\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
    "1 0 0\n2 100 0\n3 100 50\n4 0 50\nEOF\n"
)


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app({}), base_url="http://localhost") as c:
        yield c


def read(client, text, **fields):
    return client.post("/api/read", json={"task": "tsp", "text": text, **fields})


def test_a_named_csv_comes_back_in_its_units_in_the_unit_square_and_named(client):
    answer = read(client, CITIES, name="cities.csv").json()
    assert answer["names"] == ["Paris", "Lyon", "Nice", "Brest"]
    points = np.array(answer["points"])
    np.testing.assert_allclose(points[0], [2.35, 48.86])
    mapping = answer["mapping"]
    unit = (points - np.array(mapping["offset"])) / mapping["scale"]
    np.testing.assert_allclose(answer["unit"], unit)
    assert np.array(answer["unit"]).min() == 0 and np.array(answer["unit"]).max() == 1
    assert mapping["text"].startswith("x' = (x - (")
    assert (answer["name"], answer["line"], answer["instances"]) == ("cities.csv", 2, 1)


def test_the_answer_is_the_command_lines_reading_of_the_same_file(client, tmp_path):
    """One road: the route's points, names, note and length rule are what read_instances gives
    for the file."""
    files = {
        "cities.csv": CITIES,
        "geo.csv": CITIES.replace("city,x,y", "city,lon,lat"),  # whatever the reader makes of it
        "four.tsp": TSPLIB,
        "pts.txt": "1 2\n3 4\n5 7\n",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        (expected,) = read_instances(str(path), get_task("tsp"))
        answer = read(client, text, name=name).json()
        np.testing.assert_array_equal(answer["points"], expected.points)
        assert answer["names"] == (None if expected.names is None else list(expected.names))
        assert answer["note"] == expected.note
        rule = expected.distances
        assert answer["distances"] == (None if rule is None else rule.name)


@pytest.mark.parametrize(
    "text",
    [CITIES, CITIES.replace(",", ";"), CITIES.replace(",", "\t"), CITIES.split("\n", 1)[1]],
    ids=["commas", "semicolons", "tabs", "no header"],
)
def test_a_paste_with_commas_semicolons_or_tabs_is_read_as_csv(client, text):
    answer = read(client, text).json()
    assert answer["format"] == "csv" and answer["name"] == "pasted text"
    assert answer["names"] == ["Paris", "Lyon", "Nice", "Brest"]


def test_a_paste_of_other_layouts_is_read_as_a_file_without_extension(client):
    assert read(client, TSPLIB).json()["points"][2] == [100, 50]  # TSPLIB
    assert read(client, "0.1 0.2\n0.3 0.4\n0.5 0.9\n").json()["mapping"] is None  # inside already
    paper = read(client, "0 0 1 0 1 1 output 1 2 3 1\n0 0 2 0 0 2\n").json()
    assert paper["instances"] == 2 and paper["labelled"] and paper["points"][1] == [1, 0]


def test_columns_and_format_are_the_command_lines_options(client):
    swapped = read(client, CITIES, columns="y,x").json()
    assert swapped["points"][0] == [48.86, 2.35]
    by_index = read(client, CITIES, columns="2,1").json()
    assert by_index["points"] == swapped["points"]
    refused = read(client, CITIES, format="points", name="cities.csv")
    assert refused.status_code == 422 and refused.json()["detail"].startswith("cities.csv:1: ")
    assert read(client, CITIES, columns="x,").status_code == 422


@pytest.mark.parametrize(
    "text, name, detail",
    [
        ("x,y\n0.1,0.2\n0.3,zero\n", "mine.csv", "mine.csv:3: "),
        ("city,x,y\nA,1\n", "mine.csv", "mine.csv:2: "),
        ("x,y\n", "mine.csv", "mine.csv:1: a header row and no points"),
        (CITIES, None, "pasted text:1: no column 'v'"),
        ("x y\n", "mine.npy", "mine.npy: a .npy file is binary"),
    ],
)
def test_errors_are_the_readers_one_line_naming_the_users_file(client, text, name, detail):
    fields = {"name": name} if name else {}
    if "no column" in detail:
        fields["columns"] = "v,w"
        text = "a,b\n1,2\n3,4\n5,6\n"
    response = read(client, text, **fields)
    assert response.status_code == 422
    message = response.json()["detail"]
    assert message.startswith(detail) and "\n" not in message


def test_a_name_is_only_a_name_never_a_file_opened(client, tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text("x,y\n5,5\n6,6\n7,7\n", encoding="utf-8")
    for name in (str(secret), "/dev/zero", "/dev/stdin", "../../etc/passwd"):
        answer = read(client, "x,y\n0.1,0.2\n0.3,0.4\n0.5,0.6\n", name=name, format="csv")
        assert answer.status_code == 200, name
        assert answer.json()["points"][0] == [0.1, 0.2] and answer.json()["name"] == name


def test_limits_and_bad_fields(client):
    over = "\n".join(f"{k} {k % 7}" for k in range(MAX_POINTS + 1))
    too_many = read(client, over, name="many.txt")
    assert too_many.status_code == 422
    limit = f"{MAX_POINTS + 1} points; the page takes at most {MAX_POINTS}"
    assert too_many.json()["detail"].startswith(f"many.txt:1: {limit} (ptrnet predict decodes")
    huge = read(client, "0 0\n" * (MAX_BODY // 4 + 10))
    assert huge.status_code == 413
    assert read(client, "x,y\n1,2\n", name="a\nb.csv").status_code == 422  # one-line names
    assert read(client, "x,y\n1,2\n", format="npy").status_code == 422  # text only
    assert read(client, "").status_code == 422
    wrong = client.post("/api/read", json={"task": "copy", "text": "1 2\n"})
    assert wrong.status_code == 422 and "points" in wrong.json()["detail"]
    assert read(client, TSPLIB, name="f.tsp").status_code == 200
    hull = client.post("/api/read", json={"task": "convex_hull", "text": TSPLIB, "name": "f.tsp"})
    assert hull.status_code == 422 and "tsp instance" in hull.json()["detail"]
    assert is_heavy("/api/read")  # in one of the Guard's slots, as a prediction


def test_names_with_control_characters_come_back_escaped(client):
    answer = read(client, "name,x,y\n\x1b[31mred,0.1,0.2\nb,0.3,0.4\nc,0.5,0.9\n").json()
    assert "\x1b" not in answer["names"][0] and "red" in answer["names"][0]


def test_the_pages_format_choices_are_those_the_route_takes():
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    box = html[html.index('<select id="read-format">') :]
    options = re.findall(r'<option value="([^"]*)"', box[: box.index("</select>")])
    assert options and set(options) <= set(PAGE_FORMATS)
    script = (STATIC / "reading.js").read_text(encoding="utf-8")
    assert '"/api/read"' in script and "innerHTML" not in script  # names shown as text
