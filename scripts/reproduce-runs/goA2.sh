#!/usr/bin/env bash
# Core A, from /work/runner2 (cpu budgets of commit 6e6084b): table1's models in plan order.
cd /work/runner2
export PYTHONPATH=/work/runner2 OMP_NUM_THREADS=1
/work/main/.venv/bin/python -m ptrnet.cli.main reproduce table1 --scale cpu --out /work/runs/repro --threads 1
