#!/usr/bin/env bash
# Copy the small records of the cpu-scale runs into the repository (docs/reproduce-runs/).
set -euo pipefail
src=/work/runs/repro dst=/work/main/docs/reproduce-runs
mkdir -p $dst
for run in $src/*/; do
  name=$(basename $run)
  [ -f $run/config.json ] || continue
  mkdir -p $dst/$name
  for f in config.json compute.json best.json log.csv; do [ -f $run/$f ] && cp $run/$f $dst/$name/; done
done
for f in go.sh goA2.sh b2.py a3.py waitA.sh chainA2.sh chainA4.sh chainB2.sh A.log A2.log B.log B2.log A3.log A4.log A5.log B3.log table1.md table1.json table2.md table2.json delaunay.md delaunay.json; do
  [ -f $src/$f ] && cp $src/$f $dst/
done
du -sh $dst
