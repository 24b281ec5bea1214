"""Fixtures shared by the command-line tests."""

import pytest

from ptrnet.cli.main import main


@pytest.fixture
def cli(capsys, monkeypatch, tmp_path):
    """Run ``ptrnet ARGS`` in ``tmp_path``; returns ``(status, stdout, stderr)``."""
    monkeypatch.chdir(tmp_path)

    def run(*argv: str) -> tuple[int, str, str]:
        status = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return status, out, err

    return run
