#!/usr/bin/env bash
# `make run`: generates a synthetic dataset (if absent), trains it with mpirun on 2 ranks
# on the CPU backend, prints the final eval AUC next to the generator's oracle AUC, and
# plots the run's metrics into runs/demo-metrics.png (tools/strata-plot).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
NP=${NP:-2}
DATA=runs/demo-data
source test/e2e/lib.sh
if [ ! -f "$DATA/oracle.json" ]; then
  "$BUILD/strata-datagen" --out-dir "$DATA" --train-rows 400000 --eval-rows 50000 --seed 1
fi
$MPIRUN -np "$NP" "$BUILD/strata-train" --config configs/demo.flags \
  --train "$DATA/train.tsv" --eval "$DATA/eval.tsv" --metrics-out runs/demo-metrics.jsonl
auc=$(json_field runs/demo-metrics.jsonl eval_auc)
oracle=$(/usr/bin/python3 -c "import json; print(json.load(open('$DATA/oracle.json'))['oracle_auc'])")
printf 'eval AUC %.4f, oracle AUC %.4f (gap %.4f); metrics in runs/demo-metrics.jsonl\n' "$auc" "$oracle" \
  "$(/usr/bin/python3 -c "print($oracle - $auc)")"
tools/strata-plot runs/demo-metrics.jsonl -o runs/demo-metrics.png
