#!/usr/bin/env bash
# Core A: after the A3-labelled TSP-50 model, write table2 (evaluation only).
cd /work/runner3; export PYTHONPATH=/work/runner3 OMP_NUM_THREADS=1
P=/work/main/.venv/bin/python
while kill -0 14859 2>/dev/null; do sleep 20; done
echo "$(date +%T) table2"
$P -m ptrnet.cli.main reproduce table2 --scale cpu --out /work/runs/repro --threads 1 > /work/runs/repro/eval-table2b.log 2>&1
echo "$(date +%T) done"
