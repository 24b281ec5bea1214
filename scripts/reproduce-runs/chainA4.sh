#!/usr/bin/env bash
# Core A, after table2: retrain table1's attention baseline with input feeding (the old run,
# without it, moves aside), then write table1 (the other five models are reused).
cd /work/runner4; export PYTHONPATH=/work/runner4 OMP_NUM_THREADS=1
P=/work/main/.venv/bin/python
while pgrep -f chainA2.sh >/dev/null; do sleep 20; done
mkdir -p /work/runs/repro-old && mv /work/runs/repro/hull-attention-50 /work/runs/repro-old/hull-attention-50-nofeed
echo "$(date +%T) table1"
$P -m ptrnet.cli.main reproduce table1 --scale cpu --out /work/runs/repro --threads 1 > /work/runs/repro/A5.log 2>&1
echo "$(date +%T) done"
