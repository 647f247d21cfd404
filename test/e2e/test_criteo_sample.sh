#!/usr/bin/env bash
# Real data: the Criteo DAC sample in ../shared/data, split in file order 90/10, trains on
# 2 ranks with a small Criteo-shaped model and must reach a useful eval AUC. Skips (77) when
# the sample is absent.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
sample="$SHARED_DATA/criteo-dac-w261-sample/criteo_dac_train_sample.tsv.gz"
[ -f "$sample" ] || skip "Criteo sample not found at $sample"

# Measured 0.7575 eval AUC (123408 train / 13712 eval rows, 2 ranks x 1 worker) with exactly
# these flags; the bar leaves room for changes of initialisation or summation order.
min_auc=0.745
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
tools/bench/split_sample.sh "$sample" "$dir" >/dev/null || die "splitting $sample failed"
run_logged "$dir/train.log" "strata-train on the Criteo sample" \
  $MPIRUN -np 2 "$TRAIN" --format criteo --embedding-dim 16 --mlp 128,64 --batch-size 256 \
  --epochs 1 --sparse-optimizer adagrad --dense-optimizer adam --lr-sparse 0.05 --lr-dense 0.001 \
  --threads 1 --train "$dir/train.tsv" --eval "$dir/eval.tsv" --metrics-out "$dir/m.jsonl"
tail -2 "$dir/train.log"
auc=$(json_field "$dir/m.jsonl" eval_auc)
/usr/bin/python3 -c "import sys; sys.exit(0 if $auc >= $min_auc else 1)" \
  || die "Criteo sample eval AUC $auc is below $min_auc"
echo "Criteo sample eval AUC $auc >= $min_auc"
