"""The wheel: every module and every data file of ``ptrnet/`` is in it, and the Python quick
start runs from the installed files, outside the source tree (no network, no build isolation)."""

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the project's packaging files and ``ptrnet/``."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "ptrnet", src / "ptrnet", ignore=SKIP)
    out = tmp_path_factory.mktemp("dist")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
               "--no-index", "-q", "-w", str(out), str(src)]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, cwd=src)
    (built,) = out.glob("ptrnet-*.whl")
    return built


def package_files() -> set[str]:
    """Every file of the ``ptrnet`` package in the source tree, as a wheel names it."""
    return {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "ptrnet").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def test_wheel_holds_every_module_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = package_files()
    assert expected - names == set()
    for needed in ("ptrnet/bundled/tsp/best.safetensors", "ptrnet/web/static/index.html"):
        assert needed in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "ptrnet = ptrnet.cli.main:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_quick_start_runs_from_the_installed_wheel(wheel, tmp_path):
    site = tmp_path / "site"
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
               "--target", str(site), str(wheel)]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    readme = (ROOT / "README.md").read_text()
    code = re.search(r"## Python quick start.*?```python\n(.*?)```", readme, re.S).group(1)
    check = "\nimport ptrnet, sys\nprint(ptrnet.__file__)\n"
    done = subprocess.run(
        [sys.executable, "-c", code + check],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith(str(site))


def test_editable_install_is_found_from_the_folder_holding_the_clone(tmp_path):
    """``pip install -e .`` in a clone named ``ptrnet``, then Python started in the folder that
    holds the clone: ``import ptrnet`` must find the package, not take the clone's folder (no
    ``__init__.py``) for an empty namespace package, as setuptools' import-hook editable install
    lets it (its hook comes after the path search)."""
    clone = tmp_path / "holder" / "ptrnet"
    clone.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, clone / name)
    shutil.copytree(ROOT / "ptrnet", clone / "ptrnet", ignore=SKIP)
    out, site = tmp_path / "dist", tmp_path / "site"
    build = f"from setuptools import build_meta; build_meta.build_editable({str(out)!r})"
    subprocess.run([sys.executable, "-c", build], check=True, capture_output=True, cwd=clone)
    (built,) = out.glob("ptrnet-*.whl")
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
               "--target", str(site), str(built)]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True)
    # -E -S: no PYTHONPATH and no site-packages (either may hold another ptrnet); the install's
    # folder is processed as site-packages would be, .pth files included.
    code = f"import site; site.addsitedir({str(site)!r}); import ptrnet; print(ptrnet.__file__)"
    done = subprocess.run(
        [sys.executable, "-E", "-S", "-c", code], capture_output=True, text=True, cwd=clone.parent
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(clone / "ptrnet" / "__init__.py")


def test_the_web_page_needs_only_the_core_dependencies():
    """``pip install -e .`` (the README's first command) is enough for ``ptrnet serve``."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=!~ \[]", dep)[0] for dep in project["dependencies"]}
    assert {"fastapi", "uvicorn", "pydantic"} <= names


def test_serve_without_its_dependencies_names_the_install_commands(monkeypatch, capsys):
    from ptrnet.cli.main import main

    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn raises ImportError
    assert main(["serve"]) == 2
    error = capsys.readouterr().err
    assert "(uvicorn is missing)" in error
    assert "pip install fastapi uvicorn pydantic" in error and "pip install -e ." in error
