"""Fixtures shared by the command-line tests, and the hypothesis profile every test runs
under (tests/fuzzing.py: fixed examples unless ``PTRNET_FUZZ=long``)."""

import numpy as np
import pytest
from hypothesis import settings

# The browser tests import tests.browser before naming it in pytest_plugins: mark it for assert
# rewriting first, so pytest does not warn that it was imported unrewritten.
pytest.register_assert_rewrite("tests.browser")

from ptrnet.cli.main import main  # noqa: E402
from tests.fuzzing import PROFILE  # noqa: E402
from tests.slow_marks import is_slow  # noqa: E402
from tests.tiny_models import bundle_tiny_models  # noqa: E402

settings.load_profile(PROFILE)


@pytest.fixture
def cli(capsys, monkeypatch, tmp_path):
    """Run ``ptrnet ARGS`` in ``tmp_path``; returns ``(status, stdout, stderr)``."""
    monkeypatch.chdir(tmp_path)

    def run(*argv: str) -> tuple[int, str, str]:
        status = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return status, out, err

    return run


@pytest.fixture
def models(tmp_path, monkeypatch):
    """Tiny random models in place of the bundled ones."""
    root = tmp_path / "bundled"
    bundle_tiny_models(root, ("sort", "convex_hull", "tsp"))
    monkeypatch.setattr("ptrnet.inference.load.BUNDLED_DIR", str(root))
    return root


@pytest.fixture
def tiny_tsp_model(tmp_path):
    """The folder of a tiny random TSP model (an LSTM Ptr-Net: no heavy decoder, so no RRC)."""
    bundle_tiny_models(tmp_path, ["tsp"])
    return str(tmp_path / "tsp")


@pytest.fixture
def tsp12_file(tmp_path):
    """Six uniform 12-city TSP instances in the paper's format, without labels."""
    rng = np.random.default_rng(5)
    lines = [" ".join(f"{x:.4f}" for x in rng.random(2 * 12)) for _ in range(6)]
    path = tmp_path / "tsp12.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` the tests tests/slow_marks.py names (``-m "not slow"`` leaves them out)."""
    del config
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1]
        if is_slow(module, item.originalname):
            item.add_marker(pytest.mark.slow)
