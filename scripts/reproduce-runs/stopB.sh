#!/usr/bin/env bash
# Stop core B's driver once delaunay-ptr-50 has its budget, before it moves on to tsp-ptr-50-a1
# (which a3.py is training).
cd /work/runs/repro
while ! grep -q "delaunay-ptr-50: step 2,000/2,000" B2.log; do sleep 3; done
pkill -f /work/runs/repro/b2.py && echo "$(date +%T) stopped b2.py after delaunay-ptr-50" >> B2.log
