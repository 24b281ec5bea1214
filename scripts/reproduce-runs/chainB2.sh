#!/usr/bin/env bash
# Core B: once the hull resume to 40k ends, continue it to 75k steps; then re-evaluate the
# Delaunay table with beam search (all its models reused).
export OMP_NUM_THREADS=1
P=/work/main/.venv/bin/python
while kill -0 14932 2>/dev/null; do sleep 20; done
echo "$(date +%T) hull resume to 75k"
cd /work/runner3 && PYTHONPATH=/work/runner3 $P -m ptrnet.cli.main train convex_hull --resume --out /work/runs/hull --steps 75000 --threads 1
echo "$(date +%T) delaunay"
cd /work/runner4 && PYTHONPATH=/work/runner4 $P -m ptrnet.cli.main reproduce delaunay --scale cpu --out /work/runs/repro --threads 1 > /work/runs/repro/B3.log 2>&1
echo "$(date +%T) done"
