"""quote(): how an error shows a bad value, one short line whatever the value."""

import pytest

from ptrnet.quoting import QUOTE_LIMIT, quote


def deeply_nested(depth: int) -> list:
    """``[[[...]]]``, ``depth`` lists deep."""
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("ok", "'ok'"),
        (3, "3"),
        ("a" * 100, f"'{'a' * 80}'... (100 characters)"),
        ("\x1b[2J\x00\n", "'\\x1b[2J\\x00\\n'"),
        ("\x00" * 100, "'" + "\\x00" * 20 + "'... (100 characters)"),
        (list(range(100)), "[0, 1, 2, 3, 4, 5, ...]"),
        (deeply_nested(10**5), "[[[[[[[...]]]]]]]"),
        (10**5000, "<int>"),
    ],
    ids=["short", "int", "long", "escapes", "long escapes", "list", "deep", "huge int"],
)
def test_quote_is_one_bounded_line_of_printable_characters(value, shown):
    assert quote(value) == shown


def test_quote_escapes_what_a_repr_leaves_raw():
    class Loud:
        def __repr__(self) -> str:
            return "line\nbreak\x1b" * 100

    text = quote(Loud())
    assert text.isprintable() and text.endswith("...") and len(text) == QUOTE_LIMIT + 3
