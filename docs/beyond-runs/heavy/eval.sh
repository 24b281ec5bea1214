#!/bin/sh
# Greedy evaluation of the heavy-decoder probe (docs/results.md, "Heavy decoder (LEHD idea)").
# RUNS holds the run directories heavy/ and lstm/ and the test files test_tsp{20,50,100}.txt.
RUNS=${RUNS:-/tmp/i21runs}
for model in heavy lstm bundled; do
    path=$RUNS/$model
    [ "$model" = bundled ] && path=bundled
    for n in 20 50 100; do
        echo "== $model n=$n"
        ptrnet eval tsp "$RUNS/test_tsp$n.txt" --model "$path" --threads 1 --json 2>&1
        echo
    done
done
