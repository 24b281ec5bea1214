#!/usr/bin/env bash
# Background cpu-scale reproduction, from a frozen clone of main (/work/runner).
cd /work/runner
export PYTHONPATH=/work/runner OMP_NUM_THREADS=1
P=/work/main/.venv/bin/python
case "$1" in
  A) $P -m ptrnet.cli.main reproduce table1 --scale cpu --out /work/runs/repro --threads 1 ;;
  B) $P -m ptrnet.cli.main reproduce delaunay --scale cpu --out /work/runs/repro --threads 1
     $P -m ptrnet.cli.main reproduce table2 --scale cpu --out /work/runs/repro --threads 1 ;;
esac
