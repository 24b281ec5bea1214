"""Every command's --help: plain text (no reStructuredText markup) and every default shown."""

import argparse
import re

import pytest

from ptrnet.cli.main import build_parser
from ptrnet.cli.parser import HelpFormatter, plain_text

COMMANDS = build_parser()._subparsers._group_actions[0].choices
MARKUP = re.compile(r"``|:(func|mod|class|meth|data|attr):`|\*\*")


def options(parser: argparse.ArgumentParser):
    """Options that take a value and are shown (flags are off unless given; help and version
    need none; a hidden option, such as the refused --views, has no help to state it in)."""
    for action in parser._actions:
        flag = isinstance(action, (argparse._StoreTrueAction, argparse._StoreConstAction,
                                   argparse._HelpAction, argparse._VersionAction))  # fmt: skip
        shown = action.help != argparse.SUPPRESS
        if action.option_strings and not flag and not action.required and shown:
            yield action


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_is_plain_text(name):
    text = COMMANDS[name].format_help()
    assert not MARKUP.search(text), MARKUP.search(text)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_states_its_default(name):
    formatter = HelpFormatter(prog="ptrnet")
    missing = [
        action.option_strings[-1]
        for action in options(COMMANDS[name])
        if "default" not in formatter._expand_help(action).lower()
    ]
    assert missing == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_default_is_stated_twice(name):
    formatter = HelpFormatter(prog="ptrnet")
    for action in options(COMMANDS[name]):
        assert formatter._expand_help(action).lower().count("(default") <= 1


def test_plain_text_drops_the_markup():
    doc = "See :func:`ptrnet.inference.predict` and ``--dry-run``; *one* or **two**::\n"
    assert plain_text(doc) == "See ptrnet.inference.predict and --dry-run; one or two:\n"
    assert plain_text("2 * 3 and a*b") == "2 * 3 and a*b"
