#!/usr/bin/env bash
# Start a3.py once table1 is written.
cd /work/runs/repro
while ! grep -q "wrote /work/runs/repro/table1.md" A2.log; do sleep 10; done
cd /work/runner2 && PYTHONPATH=/work/runner2 OMP_NUM_THREADS=1 /work/main/.venv/bin/python /work/runs/repro/a3.py > /work/runs/repro/A3.log 2>&1
