"""tests/slow_marks.py names only tests that exist, so a rename cannot quietly move a slow test
into the ``-m "not slow"`` loop."""

import importlib

import pytest

from tests.slow_marks import SLOW_MODULES, SLOW_TESTS, is_slow


@pytest.mark.parametrize("module", sorted(SLOW_MODULES))
def test_every_slow_module_exists(module):
    importlib.util.find_spec(f"tests.{module}") or pytest.fail(f"no tests/{module}.py")


@pytest.mark.parametrize("name", sorted(SLOW_TESTS))
def test_every_slow_test_exists(name):
    module, function = name.split("::")
    if module.startswith("test_web") or module == "test_untrusted_files":
        pytest.importorskip("fastapi")
    assert callable(getattr(importlib.import_module(f"tests.{module}"), function, None)), name


def test_a_named_test_is_slow_and_another_is_not():
    assert is_slow("test_torchrun", "anything")
    assert is_slow("test_cli_data", "test_closed_stdout_ends_quietly")
    assert not is_slow("test_cli_data", "test_some_quick_check")


def test_every_browser_module_is_slow():
    """A module that drives Chromium (it imports from tests.browser) is slow, whoever adds it."""
    import pathlib

    for path in sorted(pathlib.Path(__file__).parent.glob("test_*.py")):
        if "from tests.browser import" in path.read_text() and path.stem != "test_slow_marks":
            assert is_slow(path.stem, "any"), f"{path.name} drives a browser: name it in slow_marks"
