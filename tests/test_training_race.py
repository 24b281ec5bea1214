"""The pure parts of benchmarks/bench_training_race.py (the marks of the CPU clock, the run's
files, the CSV logs, the table, the verdicts and the plot from fake logs, the peers' command
lines and ptrnet's recipes), and ``RunLoop.checkpoint_now``, which its ptrnet runs resume from.
Nothing here runs Kool's code or rl4co."""

from __future__ import annotations

import json

import pytest

from benchmarks import race_log
from benchmarks.race_kool import kool_argv
from benchmarks.race_log import MarkKeeper, due_marks
from benchmarks.race_ptrnet import phase_options, run_config, schedule


def test_due_marks_are_those_below_the_budget_and_the_budget_less_those_done():
    assert due_marks([10, 30, 90, 180], 180, []) == [10.0, 30.0, 90.0, 180.0]
    assert due_marks([10, 30, 90, 180], 30, [10]) == [30.0]
    assert due_marks([10, 30, 90, 180], 45, [10, 30]) == [45.0]  # the budget is a mark
    assert due_marks([90, 10], 60, []) == [10.0, 60.0]
    assert due_marks([10], 10, [10.0]) == []
    with pytest.raises(ValueError, match="positive"):
        due_marks([10], 0, [])


class FakeClock:
    """A CPU clock that advances only when told to."""

    def __init__(self) -> None:
        self.now = 100.0  # the process's CPU seconds before the run starts

    def __call__(self) -> float:
        return self.now


def test_the_keeper_saves_each_mark_once_and_stops_at_the_budget(tmp_path):
    clock, saved = FakeClock(), []
    keeper = MarkKeeper(tmp_path, [1.0, 2.0, 3.0], offset_s=30.0, steps_before=7, clock=clock)
    keeper.start()
    assert keeper.cpu_s() == 30.0  # the earlier invocations' half minute
    assert not keeper.check(1, saved.append)
    clock.now += 40  # 70 s: past the first mark
    assert not keeper.check(2, saved.append)
    clock.now += 200  # 270 s: past the second and the budget at once
    assert keeper.check(3, saved.append)
    assert [p.name for p in saved] == [
        "minute-0001.00.pt",
        "minute-0002.00.pt",
        "minute-0003.00.pt",
    ]
    lines = race_log.read_marks(tmp_path)
    assert [(m["minute"], m["steps"], m["cpu_s"]) for m in lines] == [
        (1.0, 9, 70.0),
        (2.0, 10, 270.0),
        (3.0, 10, 270.0),
    ]
    state = race_log.read_state(tmp_path)
    assert state["done"] == [1.0, 2.0, 3.0] and state["steps"] == 10


def test_saving_a_mark_stays_off_the_clock(tmp_path):
    clock = FakeClock()
    keeper = MarkKeeper(tmp_path, [1.0, 5.0], clock=clock)
    keeper.start()
    clock.now += 61

    def slow_save(path):
        clock.now += 500  # a save that costs more than the rest of the budget

    assert not keeper.check(1, slow_save)
    assert keeper.cpu_s() == pytest.approx(61)


def test_state_and_logs_round_trip(tmp_path):
    race_log.write_state(tmp_path, {"cpu_s": 1.5, "done": [10.0]})
    assert race_log.read_state(tmp_path) == {"cpu_s": 1.5, "done": [10.0]}
    assert race_log.read_state(tmp_path / "nothing") == {}
    log = tmp_path / "kool-n20.csv"
    assert race_log.read_log(log) == []
    race_log.append_log(log, dict(minute=10, cpu_s=601.5, steps=300, gap=5.25, count=200, x=1,
                                  cpu="AMD EPYC"))  # fmt: skip
    race_log.append_log(log, dict(minute=30, cpu_s=1800.2, steps=900, gap=2.5, count=200,
                                  cpu="AMD EPYC"))  # fmt: skip
    rows = race_log.read_log(log)
    assert rows[1] == dict(minute=30.0, cpu_s=1800.2, steps=900, gap=2.5, count=200, cpu="AMD EPYC")
    assert log.read_text().splitlines()[0] == "minute,cpu_s,steps,gap,count,cpu"


def test_a_log_of_another_layout_is_refused_not_appended_to(tmp_path):
    log = tmp_path / "kool-n20.csv"
    log.write_text("minute,cpu_s,steps,gap,count\n10,601.5,300,5.25,200\n")
    with pytest.raises(ValueError, match="kool-n20.csv: header minute,cpu_s,steps,gap,count,"):
        race_log.append_log(log, dict(minute=30, cpu_s=1800, steps=9, gap=2, count=200, cpu="x"))
    assert log.read_text().count("\n") == 2


def test_log_names_round_trip():
    assert race_log.log_name("ptrnet-sup", 50) == "ptrnet-sup-n50"
    assert race_log.parse_log_name("ptrnet-sup-n50") == ("ptrnet-sup", 50)
    assert race_log.parse_log_name("kool-n20") == ("kool", 20)
    with pytest.raises(ValueError, match="METHOD-nSIZE"):
        race_log.parse_log_name("kool")
    assert race_log.mark_name(10) == "minute-0010.00"
    assert race_log.mark_name(0.25) < race_log.mark_name(1) < race_log.mark_name(180)


def rows(*points, cpu="AMD EPYC"):
    """Fake log rows from (minute, gap) pairs."""
    return [
        dict(minute=m, cpu_s=60 * m + 3, steps=int(10 * m), gap=g, count=200, cpu=cpu)
        for m, g in points
    ]


FAKE = {
    ("ptrnet", 20): rows((10, 3.0), (30, 1.0), (90, 0.5), (180, 0.3)),
    ("kool", 20): rows((10, 8.0), (30, 4.0), (90, 2.0), (180, 1.2)),
    ("rl4co", 20): rows((10, 2.0), (30, 1.5)),
    ("ptrnet-sup", 50): rows((10, 6.0)),
}


def test_the_table_has_a_line_per_size_and_method_and_blanks_where_none():
    text = race_log.table(FAKE).splitlines()
    assert text[0] == "| n | method | CPU | 10 min | 30 min | 90 min | 180 min |"
    kool = "| 20 | kool | AMD EPYC | 8.00% (100) | 4.00% (300) | 2.00% (900) | 1.20% (1,800) |"
    assert kool in text
    assert "| 20 | rl4co | AMD EPYC | 2.00% (100) | 1.50% (300) |  |  |" in text
    assert text[-1] == "| 50 | ptrnet-sup | AMD EPYC | 6.00% (100) |  |  |  |"


def test_a_cell_whose_weights_were_saved_late_says_when():
    on_time, late = rows((20, 10.68))[0], dict(rows((20, 15.82))[0], cpu_s=1684.2, steps=197)
    assert race_log.cell(on_time) == "10.68% (200)"
    assert race_log.cell(late) == "15.82% (197; saved at 28.1 min)"
    assert "saved at 28.1 min" in race_log.table({("rl4co", 50): [late]}, marks=[20])


def test_verdicts_count_the_marks_below_and_time_the_peer_s_final_gap():
    lines = race_log.verdicts(FAKE)
    assert lines == [
        "n = 20, ptrnet vs kool: below at 4 of 4 common marks; the peer's final gap 1.20% "
        "(at 180 min) reached at 30 min (0.17x)",
        "n = 20, ptrnet vs rl4co: below at 1 of 2 common marks; the peer's final gap 1.50% "
        "(at 30 min) reached at 30 min (1.00x)",
    ]
    assert race_log.minute_reaching(FAKE["kool", 20], 0.1) is None
    assert race_log.versus(FAKE["kool", 20], FAKE["ptrnet", 20]).endswith(
        "0.30% (at 180 min) not reached"
    )
    assert race_log.versus([], FAKE["kool", 20]) == "no scored marks"


def test_a_verdict_between_logs_of_two_cpus_is_withheld():
    elsewhere = {**FAKE, ("kool", 20): rows((10, 8.0), cpu="Intel Xeon")}
    assert "n = 20, ptrnet vs kool: not comparable: measured on AMD EPYC against Intel Xeon" in (
        race_log.verdicts(elsewhere)
    )


def test_the_plot_is_drawn_from_fake_logs(tmp_path):
    path = tmp_path / "race.png"
    race_log.plot(FAKE, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_kool_runs_their_readme_command_with_the_stated_changes(tmp_path):
    argv = kool_argv(50, tmp_path)
    flags = dict(zip(argv[::2], argv[1::2], strict=False))
    assert flags["--graph_size"] == "50" and flags["--baseline"] == "rollout"
    assert flags["--batch_size"] == "512" and flags["--epoch_size"] == "128000"
    assert {"--no_cuda", "--no_tensorboard", "--no_progress_bar"} <= set(argv)
    assert "--lr_model" not in argv and "--n_encode_layers" not in argv  # their defaults
    assert int(flags["--epoch_size"]) % int(flags["--batch_size"]) == 0  # their own assertion


def test_ptrnet_recipes_are_valid_runs_of_kool_s_model_size():
    assert schedule("ptrnet", 20.0) == [("sup", 20.0), ("pomo", None)]
    assert schedule("ptrnet-pomo", 20.0) == [("pomo", None)]
    with pytest.raises(ValueError, match="unknown ptrnet recipe"):
        schedule("ptrnet-fast", 1)
    for phase in ("sup", "pomo"):
        config = run_config(phase, 50, 0, None)  # validated by RunConfig
        model = config.model
        assert (model.hidden, model.encoder_layers, model.heads) == (128, 3, 8)
        assert model.decoder == "light" and config.train.threads == 1
    assert phase_options("sup", 20)["label_solver"] == "local"
    assert phase_options("pomo", 20, {"batch_size": 7})["batch_size"] == 7


def test_checkpoint_now_resumes_from_that_very_step(tmp_path):
    from ptrnet.model import ModelConfig
    from ptrnet.runs.checkpoint import load_checkpoint
    from ptrnet.runs.config import RunConfig, TrainConfig
    from ptrnet.training.loop import Trainer, train
    from ptrnet.training.runloop import TrainingStopped

    base = {"task": "sort", "sizes": "5", "batch_size": 4, "val_count": 4, "val_every": 100}
    config = RunConfig(ModelConfig(input_dim=1, hidden=8),
                       TrainConfig(steps=6, threads=1, workers=0, **base))  # fmt: skip
    trainer = Trainer(config, str(tmp_path), False)
    weights = tmp_path / "at3.safetensors"

    def at_step_3() -> bool:
        if trainer.step == 3:
            trainer.checkpoint_now(str(weights))
            return True
        return False

    with pytest.raises(TrainingStopped):
        trainer.run(progress=False, should_stop=at_step_3)
    assert load_checkpoint(tmp_path / "last.safetensors").step == 3  # no validation ran
    assert load_checkpoint(weights).step == 3
    assert json.loads((tmp_path / "config.json").read_text())["train"]["steps"] == 6
    assert train(config, tmp_path, resume=True, progress=False).step == 6


def test_report_prints_the_table_and_verdicts_and_draws_the_plot(tmp_path, capsys):
    from benchmarks.bench_training_race import main

    for (method, size), found in FAKE.items():
        for row in found:
            race_log.append_log(tmp_path / f"{race_log.log_name(method, size)}.csv", row)
    main(["--report", "--logs", str(tmp_path), "--plot", str(tmp_path / "race.png")])
    out = capsys.readouterr().out
    assert (
        "| 20 | ptrnet | AMD EPYC | 3.00% (100) | 1.00% (300) | 0.50% (900) | 0.30% (1,800) |"
        in out
    )
    assert "- n = 20, ptrnet vs kool: below at 4 of 4 common marks" in out
    assert (tmp_path / "race.png").stat().st_size > 1000


def test_a_run_continued_with_other_settings_is_refused(tmp_path):
    from benchmarks.bench_training_race import check_same_run, parse_args

    argv = ["--method", "ptrnet", "--size", "20", "--minutes", "30", "--out", str(tmp_path)]
    state = check_same_run(tmp_path / "run", parse_args(argv))
    assert state["settings"]["switch"] == 20.0 and state["cpu_s"] == 0
    assert check_same_run(tmp_path / "run", parse_args([*argv, "--minutes", "90"])) == state
    with pytest.raises(SystemExit, match="was started with"):
        check_same_run(tmp_path / "run", parse_args([*argv, "--switch", "5"]))


def test_the_plot_labels_log_ticks_at_one_two_three_and_five_and_the_gap_axis_at_eight():
    assert [race_log._tick(v) for v in (5, 20, 30, 100, 0.5)] == ["5", "20", "30", "100", "0.5"]
    assert race_log._tick(7) == race_log._tick(90) == ""
    assert race_log._tick(8, digits="12358") == "8" and race_log._tick(8) == ""
