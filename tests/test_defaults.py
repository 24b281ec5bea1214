"""Each default and each constant is defined once and imported where it is used.

Two checks read the package's source: no module-level constant is defined twice with the same
value (a copy that can drift), and the shared defaults (beam width, decoding batch, model size,
run length) appear as numbers only where they are defined; every other site names the constant.
Both checks are pure functions over source text, so a planted copy proves they can fail.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

import ptrnet
from ptrnet.cli.main import build_parser
from ptrnet.decoding.options import DEFAULT_BEAM_WIDTH, DEFAULT_DECODE_BATCH, DecodeOptions
from ptrnet.model.config import DEFAULT_HIDDEN, ModelConfig
from ptrnet.runs.config import DEFAULT_STEPS

PACKAGE = Path(ptrnet.__file__).parent

# Parameters and command-line options that carry a shared default: their default must be a name.
SHARED_PARAMETERS = frozenset({"beam_width", "width", "hidden", "steps"})
SHARED_OPTIONS = frozenset({"--beam-width", "--batch-size", "--hidden", "--steps"})


def _sources(root: Path) -> dict[str, str]:
    return {str(path.relative_to(root)): path.read_text() for path in sorted(root.rglob("*.py"))}


def repeated_constants(sources: dict[str, str]) -> list[str]:
    """``NAME = value`` (upper case, a literal value) defined in more than one module."""
    seen: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module, text in sources.items():
        for node in ast.parse(text).body:
            if not isinstance(node, ast.Assign):
                continue
            try:
                value = repr(ast.literal_eval(node.value))
            except ValueError:
                continue
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.isupper():
                    seen[target.id, value].append(module)
    return [f"{name} in {', '.join(where)}" for (name, _), where in seen.items() if len(where) > 1]


def _number(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _names_shared_option(call: ast.Call) -> bool:
    first = call.args[0] if call.args else None
    return isinstance(first, ast.Constant) and first.value in SHARED_OPTIONS


def literal_shared_defaults(sources: dict[str, str]) -> list[str]:
    """Sites that write a shared default as a number: a function parameter in
    :data:`SHARED_PARAMETERS` (or a decoding ``batch_size`` of 256), or an ``add_argument`` /
    ``add`` call for an option in :data:`SHARED_OPTIONS` with ``default=<number>``."""
    found = []
    for module, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args
                positional = args.posonlyargs + args.args
                first = len(positional) - len(args.defaults)
                pairs = list(zip(positional[first:], args.defaults, strict=True))
                pairs += list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
                for arg, default in pairs:
                    shared = arg.arg in SHARED_PARAMETERS or (
                        arg.arg == "batch_size" and _number(default) and default.value == 256
                    )
                    if shared and _number(default):
                        found.append(f"{module}:{node.lineno} {node.name}({arg.arg}=...)")
            elif isinstance(node, ast.Call) and _names_shared_option(node):
                for keyword in node.keywords:
                    if keyword.arg == "default" and _number(keyword.value):
                        found.append(f"{module}:{node.lineno} {node.args[0].value}")
    return found


def test_no_constant_is_defined_in_two_modules():
    assert repeated_constants(_sources(PACKAGE)) == []


def test_shared_defaults_are_named_where_used():
    assert literal_shared_defaults(_sources(PACKAGE)) == []


def test_the_checks_catch_a_planted_copy():
    planted = {
        "a.py": "STRATEGIES = ('greedy', 'beam')\nLIMIT = 3\n",
        "b.py": "STRATEGIES = ('greedy', 'beam')\nLIMIT = 4\n",
        "c.py": "def decode(x, beam_width=5, batch_size=256):\n    pass\n",
        "d.py": "parser.add_argument('--beam-width', type=int, default=5)\n",
    }
    assert repeated_constants(planted) == ["STRATEGIES in a.py, b.py"]
    assert literal_shared_defaults(planted) == [
        "c.py:1 decode(beam_width=...)",
        "c.py:1 decode(batch_size=...)",
        "d.py:1 --beam-width",
    ]


@pytest.mark.parametrize(
    ("argv", "option", "expected"),
    [
        (["predict", "tsp", "f.txt"], "beam_width", DEFAULT_BEAM_WIDTH),
        (["predict", "tsp", "f.txt"], "batch_size", DEFAULT_DECODE_BATCH),
        (["eval", "tsp", "f.txt"], "beam_width", DEFAULT_BEAM_WIDTH),
        (["demo"], "beam_width", DEFAULT_BEAM_WIDTH),
        (["plot", "tsp", "f.txt", "-o", "f.png"], "beam_width", DEFAULT_BEAM_WIDTH),
    ],
)
def test_command_defaults_are_the_shared_ones(argv, option, expected):
    assert getattr(build_parser().parse_args(argv), option) == expected


def test_option_objects_take_the_shared_defaults():
    assert DecodeOptions().beam_width == DEFAULT_BEAM_WIDTH
    assert DecodeOptions().batch_size == DEFAULT_DECODE_BATCH
    assert ModelConfig(input_dim=2).hidden == DEFAULT_HIDDEN
    assert DEFAULT_STEPS > 0
