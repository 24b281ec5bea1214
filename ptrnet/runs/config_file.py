"""A run's ``config.json``: the copy of its configuration that people and tools read.

The configuration a run trains with is the one inside its checkpoint
(:mod:`ptrnet.runs.checkpoint`); ``config.json`` is a copy, written when the run starts and
again with every ``last`` checkpoint, so the two agree whenever the run is stopped. A hand edit
of the copy would change nothing, so resuming refuses one (:func:`check_config_file`) instead of
ignoring it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from ptrnet.io.atomic import atomic_write
from ptrnet.io.errors import InputError
from ptrnet.io.json_file import MAX_JSON_BYTES, JsonError, parse_json
from ptrnet.io.text import read_regular_file
from ptrnet.runs import CONFIG_JSON, LAST
from ptrnet.runs.config import RunConfig
from ptrnet.runs.shared import RESUMABLE

SECTIONS = ("model", "train")


def write_config_file(run_dir: str, config: Any) -> None:
    """Write ``run_dir/config.json`` (atomically) from ``config`` (a RunConfig, or a sentence
    task's run configuration: an object whose ``to_dict()`` has the :data:`SECTIONS`)."""
    with atomic_write(os.path.join(run_dir, CONFIG_JSON)) as stream:
        json.dump(config.to_dict(), stream, indent=2)


def check_config_file(
    run_dir: str,
    saved: Any,
    resumed: Any,
    parse: Callable[[dict[str, Any]], Any] = RunConfig.from_dict,
    warm_start: bool = True,
) -> None:
    """Raise InputError if ``run_dir/config.json`` holds a value that resuming would ignore.
    ``saved`` and ``resumed`` are run configurations with the :data:`SECTIONS` as dataclass
    attributes (RunConfig by default); ``parse`` reads one from the file's JSON object;
    ``warm_start``: the run's command takes ``--init-from`` (the advice names it).

    A field is ignored when the file's value differs from the checkpoint's (``saved``) and the
    resumed run keeps the checkpoint's (``resumed`` has it too). A field the resume changes
    (a :data:`~ptrnet.runs.config.RESUMABLE` one given anew, e.g. ``steps``) overrides the file,
    which the run rewrites. No file is no error: the run writes it again.

    Raises:
        InputError: ``config.json:LINE``, naming each ignored field with both values and how to
            proceed; or a path that is not a regular file (a link to ``/dev/zero``, a FIFO:
            refused unread), JSON too large or too deep, or not a run configuration.
    """
    path = os.path.join(run_dir, CONFIG_JSON)
    if not os.path.lexists(path):
        return
    advice = _advice(run_dir, warm_start)
    document, text = _read(path, advice)
    on_file = _parse(path, document, advice, parse)
    ignored = [
        (section, name, file_value, saved_value)
        for section, name, file_value, saved_value in _differences(on_file, saved)
        if getattr(getattr(resumed, section), name) == saved_value
    ]
    if ignored:
        section, name = ignored[0][:2]
        raise InputError(path, _line_of(text, section, name), _explain(ignored, run_dir, advice))


def _read(path: str, advice: str) -> tuple[dict, str]:
    """The JSON object in the file ``path`` (bounded: :mod:`ptrnet.io.json_file`), and its
    text; InputError for a path that is not a regular file or not such an object."""
    try:
        data = read_regular_file(path, MAX_JSON_BYTES)
        return parse_json(data), data.decode("utf-8")
    except JsonError as err:
        raise InputError(path, err.line, f"{err}; {advice}") from None
    except InputError as err:
        raise InputError(path, None, f"{err.problem}; {advice}") from None


def _parse(path: str, document: dict, advice: str, parse: Callable[[dict[str, Any]], Any]) -> Any:
    """The run configuration in the JSON object ``document``; InputError for what is not one."""
    try:
        return parse(document)
    except (TypeError, ValueError, KeyError) as err:
        problem = f"not a run configuration ({err}); {advice}"
        raise InputError(path, None, problem) from None


def _differences(on_file: Any, saved: Any) -> list[tuple[str, str, object, object]]:
    """``(section, field, file value, checkpoint value)`` for every field that differs."""
    return [
        (section, f.name, getattr(mine, f.name), getattr(theirs, f.name))
        for section in SECTIONS
        for mine, theirs in [(getattr(on_file, section), getattr(saved, section))]
        for f in fields(mine)
        if getattr(mine, f.name) != getattr(theirs, f.name)
    ]


def _advice(run_dir: str, warm_start: bool = True) -> str:
    """What to do about a config.json that resuming would not follow."""
    also = (
        f" (--init-from {run_dir} starts one from this run's weights, with its model)"
        if warm_start
        else ""
    )
    return (
        "restore config.json, or delete it (the run writes it again), or "
        f"start a new run with the settings you want{also}"
    )


def _explain(ignored: list[tuple[str, str, object, object]], run_dir: str, advice: str) -> str:
    """The error's text: each ignored field with both values, then what to do."""
    values = "; ".join(
        f"{section}.{name} is {json.dumps(mine)} here but {json.dumps(theirs)} in the checkpoint"
        for section, name, mine, theirs in ignored
    )
    options = [
        f"--{name.replace('_', '-')} {mine}"
        for section, name, mine, _ in ignored
        if section == "train" and name in RESUMABLE and mine is not None
    ]
    also = f"; or give {' '.join(options)} with --resume, which may change them" if options else ""
    return (
        f"{values}; the checkpoint's configuration ({os.path.join(run_dir, LAST)}) is the one "
        f"the run resumes with, so this edit would be ignored: {advice}{also}"
    )


def _line_of(text: str, section: str, name: str) -> int | None:
    """The 1-based line of ``"name":`` inside ``"section": {`` in ``text``, else None."""
    start = re.search(rf'"{section}"\s*:\s*\{{', text)
    if start is None:
        return None
    key = re.compile(rf'"{re.escape(name)}"\s*:').search(text, start.end())
    return None if key is None else text.count("\n", 0, key.start()) + 1
