"""Torch threads in the Python API: ``threads=`` on ``ptrnet.load`` and ``Solver.solve`` checked
as ``--threads`` is, the command line's rule (the idle cores) applied while a call decodes, and
the caller's own ``torch.set_num_threads`` back afterwards, an error included."""

import threading
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.api import solver as solver_module
from ptrnet.cli.main import main
from ptrnet.training import cpu
from ptrnet.training.cpu import CpuSample, IdleCores, decoding_threads, torch_threads

torch.set_num_threads(1)
POINTS = np.random.default_rng(3).random((8, 2))
BAD_COUNTS = [0, -1, 4097, True, 1.5, "2", [2]]


@pytest.fixture(scope="module")
def tsp():
    return ptrnet.load("tsp", device="cpu")


@pytest.fixture
def seen(monkeypatch):
    """The torch thread count inside the decoding of every ``solve`` call, in order."""
    counts = []
    decode = solver_module.predict_outputs

    def recording(*args, **kwargs):
        counts.append(torch.get_num_threads())
        return decode(*args, **kwargs)

    monkeypatch.setattr(solver_module, "predict_outputs", recording)
    return counts


@pytest.fixture
def idle(monkeypatch):
    """The command line's rule, made to find 3 idle cores."""
    monkeypatch.setattr(cpu._IDLE, "count", lambda: 3)


@pytest.mark.parametrize("bad", BAD_COUNTS)
def test_threads_is_checked_as_the_command_line_checks_it(tsp, bad):
    expected = r"^threads must be an integer from 1 to 4,096, got "
    with pytest.raises(ValueError, match=expected):
        tsp.solve(POINTS, threads=bad)
    with pytest.raises(ValueError, match=expected):
        ptrnet.load("tsp", device="cpu", threads=bad)
    with pytest.raises(ValueError, match=expected):
        ptrnet.load("span", threads=bad)


def test_the_message_quotes_the_value(tsp):
    with pytest.raises(ValueError, match=r"^threads must be an integer from 1 to 4,096, got 0$"):
        tsp.solve(POINTS, threads=0)
    with pytest.raises(ValueError, match=r"got '2'$"):
        tsp.solve(POINTS, threads="2")


def test_the_command_line_takes_the_same_range(capsys):
    assert main(["predict", "tsp", "x.txt", "-o", "-", "--threads", "4097"]) == 2
    expected = "argument --threads: expected an integer from 1 to 4,096, got '4097'"
    assert expected in capsys.readouterr().err


def test_solve_decodes_on_the_idle_cores_and_sets_the_callers_count_back(tsp, seen, idle):
    torch.set_num_threads(1)
    tsp.solve(POINTS)
    assert seen == [3]
    assert torch.get_num_threads() == 1


def test_solve_with_improve_runs_the_search_on_the_chosen_threads(tsp, monkeypatch, idle):
    seen = []
    search = solver_module.run_searches

    def recording(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return search(*args, **kwargs)

    monkeypatch.setattr(solver_module, "run_searches", recording)
    torch.set_num_threads(1)
    tsp.solve(POINTS, improve="rrc", iterations=2)
    assert seen == [3] and torch.get_num_threads() == 1


def test_threads_given_to_solve_or_load_win_over_the_rule(seen, idle):
    torch.set_num_threads(1)
    solver = ptrnet.load("tsp", device="cpu", threads=2)
    assert solver.threads == 2
    solver.solve(POINTS)
    solver.solve(POINTS, threads=4)
    ptrnet.load("tsp", device="cpu").solve(POINTS, threads=np.int64(2))
    assert seen == [2, 4, 2]
    assert torch.get_num_threads() == 1


def test_the_callers_count_comes_back_after_an_error(tsp, monkeypatch):
    def failing(*args, **kwargs):
        assert torch.get_num_threads() == 2
        raise RuntimeError("decoding failed")

    monkeypatch.setattr(solver_module, "predict_outputs", failing)
    torch.set_num_threads(1)
    with pytest.raises(RuntimeError, match="decoding failed"):
        tsp.solve(POINTS, threads=2)
    assert torch.get_num_threads() == 1


def test_a_span_reader_decodes_on_its_threads(monkeypatch):
    from ptrnet.api import span

    seen = []
    answer = span.answer_sources

    def recording(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return answer(*args, **kwargs)

    monkeypatch.setattr(span, "answer_sources", recording)
    torch.set_num_threads(1)
    reader = ptrnet.load("span", threads=2)
    reader.answer("Ada Oru founded Vemi Labs.", "Who founded Vemi Labs?")
    assert seen == [2] and torch.get_num_threads() == 1


def test_nested_blocks_set_back_the_outer_count():
    torch.set_num_threads(1)
    with torch_threads(3):
        with torch_threads(2):
            assert torch.get_num_threads() == 2
        assert torch.get_num_threads() == 3
    assert torch.get_num_threads() == 1


def test_blocks_in_several_threads_leave_the_count_before_the_first():
    torch.set_num_threads(1)
    inside, leave = threading.Barrier(2), threading.Event()
    after = {}

    def worker(count):
        with torch_threads(count):
            inside.wait()
            leave.wait()
        after[count] = torch.get_num_threads()

    with torch_threads(4):
        workers = [threading.Thread(target=worker, args=(c,)) for c in (2, 3)]
        for w in workers:
            w.start()
        leave.set()
        for w in workers:
            w.join()
    assert after == {2: 1, 3: 1}
    assert torch.get_num_threads() == 1


def test_decoding_threads_is_the_given_count_else_the_idle_cores(idle):
    assert decoding_threads(5) == 5
    assert decoding_threads(None) == 3


def sample(user: int, idle: int, own_s: float) -> CpuSample:
    """/proc/stat's aggregate counters (user, nice, system, idle, ...) and this process's
    CPU seconds."""
    return CpuSample((user, 0, 0, idle, 0, 0, 0, 0), own_s)


def test_idle_cores_measure_between_calls_without_sleeping(monkeypatch):
    """On 2 CPUs (100 jiffies a second each): the first call is the command line's 0.2 s
    sample (busy_cores); a later call measures the time since, this process's own CPU time not
    counted as busy; a call within 0.2 s of the last reuses its count; one after a long pause
    samples afresh."""
    samples = iter(
        [
            sample(1000, 5000, 1.0),  # after the first call's sample
            sample(1200, 5000, 2.0),  # 1 s later: both busy, one of them this process: 1
            sample(1400, 5000, 4.0),  # both busy, all of it this process: 2
            sample(9000, 9000, 0.0),  # after the pause's sample
        ]
    )
    clock = iter([0.0, 0.2, 1.2, 1.2, 1.3, 3.2, 3.2, 100.0, 100.2])
    fresh = iter([1, 2])  # busy cores of the two 0.2 s samples
    sampled = []
    monkeypatch.setattr(cpu, "cpu_sample", lambda: next(samples))
    monkeypatch.setattr(cpu, "busy_cores", lambda seconds: sampled.append(seconds) or next(fresh))
    monkeypatch.setattr(cpu, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    monkeypatch.setattr(cpu, "available_cores", lambda: 2)
    monkeypatch.setattr(cpu.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(cpu.os, "sysconf", lambda name: 100)
    idle = IdleCores(fresh=0.2, longest=10.0)
    assert [idle.count() for _ in range(5)] == [1, 1, 1, 2, 1]
    assert sampled == [0.2, 0.2]


def test_the_command_line_sets_its_threads_by_the_same_rule(monkeypatch, tmp_path, idle):
    chosen = []
    monkeypatch.setattr(torch, "set_num_threads", chosen.append)  # for the command's life
    path = tmp_path / "cities.txt"
    path.write_text("\n".join(f"{x} {y}" for x, y in POINTS) + "\n")
    assert main(["predict", "tsp", str(path), "-o", str(tmp_path / "out.txt"), "-q"]) == 0
    assert main(["predict", "tsp", str(path), "-o", "-", "-q", "--threads", "2"]) == 0
    assert chosen == [3, 2]
