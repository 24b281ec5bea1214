"""The CSV layout of the one instance reader: sniffed delimiters, quoted cells, columns picked by
name or index, a text column kept as the points' names; and paper labels read on request."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ptrnet.cli.main import main
from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.instances import read_instances
from ptrnet.io.paper_format import write_examples
from ptrnet.tasks import get_point_task

TSP = get_point_task("tsp")
CITIES = (
    'name;lat;lon;population\n"Paris, FR";48.9;2.4;2100\nLyon;45.8;4.8;520\nNice;43.7;7.3;340\n'
)


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_the_delimiter_is_sniffed_and_a_text_column_names_the_points(tmp_path, delimiter):
    rows = [["name", "x", "y"], ['"Frankfurt, am Main"', "0.1", "0.2"], ["Bonn", "0.3", "0.4"]]
    rows.append(["Köln", "0.5", "0.9"])
    (tmp_path / "c.csv").write_text("".join(delimiter.join(row) + "\n" for row in rows))
    (instance,) = read_instances(tmp_path / "c.csv", TSP)
    np.testing.assert_array_equal(instance.points, [[0.1, 0.2], [0.3, 0.4], [0.5, 0.9]])
    assert instance.names == ("Frankfurt, am Main", "Bonn", "Köln")
    assert instance.line == 2


@pytest.mark.parametrize("columns", [("lon", "lat"), ("LON", "Lat"), ("2", "1")])
def test_columns_are_picked_by_header_name_or_index_in_coordinate_order(tmp_path, columns):
    (tmp_path / "c.csv").write_text(CITIES)
    (instance,) = read_instances(tmp_path / "c.csv", TSP, columns=columns)
    np.testing.assert_array_equal(instance.points, [[2.4, 48.9], [4.8, 45.8], [7.3, 43.7]])
    assert instance.names == ("Paris, FR", "Lyon", "Nice")


def test_more_numeric_columns_than_a_point_has_ask_for_columns(tmp_path):
    """(Columns named lat and lon are found by name: tests/test_geographic.py.)"""
    (tmp_path / "c.csv").write_text(CITIES.replace("lat;lon", "north;east"))
    with pytest.raises(InputError, match=r"c\.csv:2: 3 numbers; a tsp point has 2: .*--columns"):
        read_instances(tmp_path / "c.csv", TSP)


def test_a_column_the_file_lacks_is_an_error_naming_its_columns(tmp_path):
    (tmp_path / "c.csv").write_text(CITIES)
    lacks = r"c\.csv:1: no column 'lng' \(the header has 'name', 'lat'"
    with pytest.raises(InputError, match=lacks):
        read_instances(tmp_path / "c.csv", TSP, columns=("lng", "lat"))
    with pytest.raises(InputError, match=r"c\.csv:2: no column 7 \(0-based\): a row has 4"):
        read_instances(tmp_path / "c.csv", TSP, columns=("7", "1"))


def test_columns_must_fit_the_task_and_the_layout(tmp_path):
    (tmp_path / "c.csv").write_text(CITIES)
    with pytest.raises(UsageError, match="--columns names 3 column"):
        read_instances(tmp_path / "c.csv", TSP, columns=("lat", "lon", "population"))
    (tmp_path / "p.txt").write_text("0.1 0.2 0.3 0.4 0.5 0.6\n")
    with pytest.raises(UsageError, match="--columns picks CSV columns; .*p.txt is read as paper"):
        read_instances(tmp_path / "p.txt", TSP, columns=("x", "y"))


def test_a_row_with_another_number_of_cells_is_an_error_at_its_line(tmp_path):
    (tmp_path / "c.csv").write_text("name,x,y\na,0.1,0.2\nb,0.3\nc,0.5,0.9\n")
    with pytest.raises(InputError, match=r"c\.csv:3: 2 values; line 2 has 3"):
        read_instances(tmp_path / "c.csv", TSP)


def test_the_text_column_headed_name_is_the_names(tmp_path):
    (tmp_path / "c.csv").write_text("country,name,x,y\nFR,Paris,1,2\nFR,Lyon,3,1\nIT,Rome,5,6\n")
    (instance,) = read_instances(tmp_path / "c.csv", TSP)
    assert instance.names == ("Paris", "Lyon", "Rome")


def test_paper_labels_are_read_on_request_and_otherwise_only_noticed(tmp_path):
    points = np.random.default_rng(2).random((6, 2))
    write_examples(tmp_path / "l.txt", [(points, TSP.solve(points)), (points, None)])
    read = read_instances(tmp_path / "l.txt", TSP, labels=True)
    assert read[0].seq.tolist() == TSP.solve(points).tolist() and read[0].labelled
    assert read[1].seq is None and not read[1].labelled
    skipped = read_instances(tmp_path / "l.txt", TSP)
    assert skipped[0].seq is None and skipped[0].labelled


def test_solve_takes_columns_and_writes_names(tmp_path, capsys):
    (tmp_path / "c.csv").write_text(CITIES)
    argv = ["solve", "tsp", str(tmp_path / "c.csv"), "-o", "-", "--columns"]
    assert main([*argv, "lon,lat", "--output-format", "json", "-q"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["names"] == ["Paris, FR", "Lyon", "Nice", "Paris, FR"]
    assert main([*argv, "lon,"]) == 2
    assert "--columns: 'lon,': expected names or indices such as x,y" in capsys.readouterr().err


def test_a_training_file_in_csv_gives_its_sizes(tmp_path):
    from ptrnet.api.training import file_sizes

    (tmp_path / "values.csv").write_text("value\n0.3\n0.1\n0.7\n0.2\n")
    assert str(file_sizes(get_point_task("sort"), tmp_path / "values.csv")) == "4"


def test_a_header_shorter_than_its_rows_leaves_the_last_columns_unheaded(tmp_path, capsys):
    """``x,y`` over rows of three cells was an IndexError traceback in ``name_column``; the
    unheaded third column now names the points."""
    (tmp_path / "h.csv").write_text("x,y\n0.1,0.2,foo\n0.3,0.4,bar\n0.5,0.9,baz\n")
    (instance,) = read_instances(tmp_path / "h.csv", TSP)
    np.testing.assert_array_equal(instance.points, [[0.1, 0.2], [0.3, 0.4], [0.5, 0.9]])
    assert instance.names == ("foo", "bar", "baz")
    argv = ["solve", "tsp", str(tmp_path / "h.csv"), "-o", "-", "-q", "--output-format", "json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["names"] == ["foo", "bar", "baz", "foo"]


def test_a_header_name_spelled_exactly_wins_over_another_case(tmp_path):
    """``X,x,y`` with ``--columns x,y`` silently took ``X``."""
    (tmp_path / "c.csv").write_text("X,x,y\n9,0.1,0.2\n8,0.3,0.4\n7,0.5,0.9\n")
    (instance,) = read_instances(tmp_path / "c.csv", TSP, columns=("x", "y"))
    np.testing.assert_array_equal(instance.points, [[0.1, 0.2], [0.3, 0.4], [0.5, 0.9]])
    (instance,) = read_instances(tmp_path / "c.csv", TSP, columns=("X", "Y"))
    np.testing.assert_array_equal(instance.points, [[9, 0.2], [8, 0.4], [7, 0.9]])


@pytest.mark.parametrize(
    "header, shown",
    [("Lat,LAT,y", "0 ('Lat'), 1 ('LAT')"), ("lat,lat,y", "0 ('lat'), 1 ('lat')")],
)
def test_a_header_name_several_cells_match_is_an_error_naming_them(tmp_path, header, shown):
    (tmp_path / "c.csv").write_text(f"{header}\n1,0.1,0.2\n2,0.3,0.4\n3,0.5,0.9\n")
    with pytest.raises(InputError) as caught:
        read_instances(tmp_path / "c.csv", TSP, columns=("lat", "y"))
    assert str(caught.value) == (
        f"{tmp_path / 'c.csv'}:1: column 'lat' is ambiguous: the header has it at {shown}; "
        "pick one by its 0-based index"
    )


def test_a_missing_column_error_quotes_each_header_cell_short_and_escaped(tmp_path):
    """An 800 KB header line of cells holding ``ESC [2J`` was echoed raw, 8 cells whole."""
    cell = "\x1b[2J" + "b" * 100_000
    (tmp_path / "c.csv").write_text(",".join(["a", *[cell] * 8]) + "\n" + "0.1," * 8 + "0.2\n")
    with pytest.raises(InputError) as caught:
        read_instances(tmp_path / "c.csv", TSP, columns=("x", "y"))
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'c.csv'}:1: no column 'x' (the header has 'a', ")
    assert message.count("'\\x1b[2Jbbb") == 7 and message.endswith("(100004 characters), ...)")
    assert message.isprintable() and len(message) < 500 + len(str(tmp_path))


def test_control_characters_of_point_names_are_written_escaped(tmp_path, capsys):
    """NUL and ESC of a name column reached the CSV output raw (and, as ``\\u001b``, JSON's
    decoded strings): they are escaped as ``predict copy`` writes them."""
    (tmp_path / "c.csv").write_text("name,x,y\n\x1b[2Jevil,0.1,0.2\nb\x00c,0.3,0.4\nd,0.5,0.9\n")
    (instance,) = read_instances(tmp_path / "c.csv", TSP)
    assert instance.names == ("\\x1b[2Jevil", "b\\x00c", "d")
    argv = ["solve", "tsp", str(tmp_path / "c.csv"), "-o", "-", "-q", "--output-format"]
    assert main([*argv, "json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["names"][:2] == ["\\x1b[2Jevil", "b\\x00c"] and out.isascii()
    assert main([*argv, "csv"]) == 0
    out = capsys.readouterr().out
    assert out.endswith(",\\x1b[2Jevil > b\\x00c > d > \\x1b[2Jevil,\n")  # units: empty
    assert "\x1b" not in out and "\x00" not in out
