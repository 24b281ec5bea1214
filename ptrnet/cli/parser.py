"""The argument parser of every ``ptrnet`` command: plain-text help from docstrings, defaults
shown, bad values quoted as ptrnet's own errors quote them, every error one line
(``ptrnet: error: MESSAGE (see ptrnet COMMAND --help)``, exit status 2), and
:class:`StoreGiven` to tell a given option from its default."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import NoReturn

from ptrnet.quoting import did_you_mean, quote

# Docstring markup that help texts drop: ``literal``, :role:`target`, *emphasis*, **strong**.
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")

_MARKUP = re.compile(r"``([^`]+)``|\*\*([^*]+)\*\*|(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])")


def plain_text(text: str | None) -> str | None:
    """``text`` (a module docstring) without reStructuredText markup, for ``--help``."""
    if text is None:
        return None
    text = _ROLE.sub(lambda m: m.group(1), text).replace("::\n", ":\n")
    return _MARKUP.sub(lambda m: next(g for g in m.groups() if g is not None), text)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written (paragraphs kept); every option's default shown: appended as
    ``(default: X)`` unless its help already says what the default is."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        shown = "default" in text.lower() or "%(default)" in text
        unset = action.default is None or action.default is False
        silent = unset or action.default == argparse.SUPPRESS or not action.option_strings
        return text if shown or silent else f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """The parser of every ``ptrnet`` command: plain-text descriptions, defaults shown, a bad
    value (an unknown choice, a non-number) quoted in the error as ptrnet's own errors quote it
    (:func:`ptrnet.quoting.quote`), however long, an unknown choice with the closest one
    (``did you mean 'beam'?``), and every error one line naming the help to read."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs["formatter_class"] = HelpFormatter
        kwargs["description"] = plain_text(kwargs.get("description"))
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Exit with argparse's status 2 after one line on stderr, ``ptrnet: error: MESSAGE
        (see PROG --help)``, PROG the command (``ptrnet predict``), instead of argparse's usage
        block and ``PROG: error: MESSAGE``."""
        self.exit(2, f"ptrnet: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args: Sequence[str] | None = None, namespace=None) -> argparse.Namespace:
        """argparse's, but an unrecognized argument is the error of the subcommand it was given
        to (``see ptrnet predict --help``), not of ``ptrnet`` itself."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            self._command_parser(parsed).error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed

    def _command_parser(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The parser of the subcommand ``parsed`` names (this one without subcommands)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return action.choices.get(getattr(parsed, action.dest, None), self)
        return self

    def _check_value(self, action: argparse.Action, value: object) -> None:
        if action.choices is not None and value not in action.choices:
            choices = ", ".join(quote(choice) for choice in action.choices)
            hint = did_you_mean(value, map(str, action.choices))
            raise argparse.ArgumentError(
                action, f"invalid choice: {quote(value)} (choose from {choices}){hint}"
            )

    def _get_value(self, action: argparse.Action, arg_string: str) -> object:
        try:
            return super()._get_value(action, arg_string)
        except argparse.ArgumentError as err:
            raise _quoted(action, err, arg_string) from None


def _quoted(action: argparse.Action, err: argparse.ArgumentError, value: object) -> Exception:
    """``err`` (about ``action``) with the ``repr`` of ``value`` in its message quoted."""
    return argparse.ArgumentError(action, err.message.replace(repr(value), quote(value)))


class StoreGiven(argparse.Action):
    """``store``, and a note that the option was given: ``args.given`` (a set of dests), so a
    command can tell an explicit value from the default."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, values)
        given = getattr(namespace, "given", None) or set()
        namespace.given = given | {self.dest}
