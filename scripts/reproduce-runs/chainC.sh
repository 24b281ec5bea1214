#!/usr/bin/env bash
# Third session: the tables re-decoded on 10,000-instance generated test sets (the cpu scale's
# new test_count), reusing every finished run; from a clone with that change (/work/runner7).
cd /work/runner7
export PYTHONPATH=/work/runner7 OMP_NUM_THREADS=1
P=/work/main/.venv/bin/python
for t in delaunay table2 table1; do
  echo "== $t $(date -u +%FT%TZ)"
  $P -m ptrnet.cli.main reproduce $t --scale cpu --out /work/runs/repro --threads 1 --paper-data ptrnet/data/paper
  echo "== $t done $(date -u +%FT%TZ)"
done
