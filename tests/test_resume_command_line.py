"""``--resume`` with the original command line: the model options are compared with the saved
ones, and only a real change is refused, naming the option and both values."""

from pathlib import Path

from ptrnet.cli.main import main
from ptrnet.runs.checkpoint import load_checkpoint


def test_resume_accepts_the_original_command_line(tmp_path: Path, capsys) -> None:
    run = str(tmp_path / "R")
    argv = ["train", "sort", "--dry-run", "--out", run, "--steps", "4", "--hidden", "16"]
    argv += ["-n", "5", "--init", "paper", "-q"]
    assert main(argv) == 0
    assert main([*argv, "--resume", "--steps", "6"]) == 0
    assert load_checkpoint(Path(run) / "last.safetensors").step == 6
    capsys.readouterr()
    changed = [*argv, "--resume"]
    changed[changed.index("16")] = "32"
    assert main(changed) == 2
    err = capsys.readouterr().err
    assert err == "ptrnet: error: cannot change --hidden from 16 to 32 when resuming\n"
    changed = [*argv, "--resume"]
    changed[changed.index("5")] = "6"
    assert main(changed) == 2
    assert "cannot change sizes from 5 to 6 when resuming" in capsys.readouterr().err
