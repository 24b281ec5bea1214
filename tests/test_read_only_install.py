"""ptrnet in a locked-down container: a read-only package and HOME, a corrupt kernel cache, and
``ptrnet --help`` without the heavy libraries (numba, torch).

The package is copied into a temporary folder without its ``__pycache__`` (so no compiled
kernels are found), and run from there with ``PYTHONPATH``. The read-only cases mount the copy
and a HOME read-only inside a user and mount namespace (``unshare -rm``): as root, file
permissions alone would not stop a write.
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ptrnet"
SIX_CITIES = "0.1,0.2\n0.5,0.9\n0.3,0.3\n0.8,0.1\n0.9,0.7\n0.2,0.6\n"
TWO_OPT = textwrap.dedent(
    """
    import warnings, numpy as np
    from ptrnet.solvers.tsp_heuristics import two_opt
    warnings.simplefilter("always")
    dist = np.abs(np.subtract.outer(np.arange(6.0), np.arange(6.0)))
    print(two_opt(dist, np.array([0, 3, 1, 4, 2, 5])).tolist())
    """
)


def package_copy(root: Path) -> Path:
    """A copy of the package under ``root/pkg`` with no compiled caches; the folder to put on
    ``PYTHONPATH``."""
    shutil.copytree(PACKAGE, root / "pkg" / "ptrnet", ignore=shutil.ignore_patterns("__pycache__"))
    return root / "pkg"


def environment(pythonpath: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "NUMBA_CACHE_DIR")}
    return {**env, "PYTHONPATH": str(pythonpath), "HOME": str(home), "OMP_NUM_THREADS": "1"}


def run_python(code: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", code]
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_help_imports_neither_numba_nor_torch():
    code = (
        "import sys\nfrom ptrnet.cli.main import main\nmain(['--help'])\n"
        "sys.exit(sorted({'numba', 'torch'} & set(sys.modules)) or 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_corrupt_kernel_cache_is_cleared_and_rewritten(tmp_path):
    """Every cached build truncated: one warning, the right tour, then a clean cache again."""
    env = environment(package_copy(tmp_path), tmp_path)
    first = run_python(TWO_OPT, env, tmp_path)
    assert first.returncode == 0 and "KernelCacheWarning" not in first.stderr, first.stderr
    cached = list((tmp_path / "pkg" / "ptrnet" / "solvers" / "__pycache__").glob("*.nb[ic]"))
    assert cached
    for path in cached:
        path.write_bytes(path.read_bytes()[:7])
    second = run_python(TWO_OPT, env, tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert second.stderr.count("KernelCacheWarning") == 1
    assert "the disk cache failed to load" in second.stderr
    third = run_python(TWO_OPT, env, tmp_path)
    assert third.stdout == first.stdout and "KernelCacheWarning" not in third.stderr


def read_only_script(pkg: Path, home: Path, body: str) -> str:
    """A shell script that mounts ``pkg`` and ``home`` read-only, proves it, then runs ``body``
    with HOME and PYTHONPATH pointing at them."""
    mounts = "".join(
        f"mount --bind {d} {d} && mount -o remount,bind,ro {d}\n"
        f"if touch {d}/probe 2>/dev/null; then echo '{d} is writable'; exit 97; fi\n"
        for d in (pkg, home)
    )
    return f"set -e\n{mounts}export HOME={home} PYTHONPATH={pkg}\n{body}"


def run_read_only(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    pkg, home, work = package_copy(tmp_path), tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (work / "cities.csv").write_text(SIX_CITIES)
    script = read_only_script(pkg, home, body)
    env = environment(pkg, home)
    try:
        done = subprocess.run(
            ["unshare", "-rm", "bash", "-c", script],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except FileNotFoundError:
        pytest.skip("unshare (util-linux) is not installed")
    if done.returncode != 0 and "unshare:" in done.stderr:
        pytest.skip(f"no user namespaces here: {done.stderr.strip()}")
    return done


@pytest.mark.slow
def test_predict_eval_and_serve_run_from_a_read_only_package_and_home(tmp_path):
    """Compiling the kernels in memory, with one warning line; no traceback anywhere."""
    ptrnet = f"{sys.executable} -m ptrnet"
    serve = textwrap.dedent(
        f"""
        {ptrnet} serve --port 8765 > serve.out 2>&1 &
        for i in $(seq 1 120); do
          curl -sf -o tasks.json http://127.0.0.1:8765/api/tasks && break; sleep 1
        done
        curl -s -X POST -H 'Content-Type: application/json' \\
          -d '{{"task": "tsp", "points": [[0.1,0.2],[0.5,0.9],[0.3,0.3],[0.8,0.1],[0.9,0.7]]}}' \\
          http://127.0.0.1:8765/api/predict > predict.json
        kill %1
        cat predict.json; echo; cat serve.out
        """
    )
    body = (
        f"{ptrnet} --help > /dev/null\n"
        f"{ptrnet} predict tsp cities.csv --two-opt -o - 2> predict.err\n"
        "cat predict.err\n"
        f"{ptrnet} solve tsp cities.csv -o labelled.txt\n"
        f"{ptrnet} eval tsp labelled.txt --or-opt\n"
        f"{serve}"
    )
    done = run_read_only(tmp_path, body)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    out = done.stdout
    assert "output 1 " in out and "Traceback" not in out + done.stderr
    warnings = [line for line in out.splitlines() if "kernels: no writable cache" in line]
    assert len(warnings) == 1 and warnings[0].startswith("ptrnet: warning: 2-opt/Or-opt")
    assert "mean_length" in out
    assert '"sequence"' in out, out[-2000:]
