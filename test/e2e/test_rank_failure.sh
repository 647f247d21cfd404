#!/usr/bin/env bash
# One rank's failure ends the whole job: rank 1 of 2 gets an I/O error (STRATA_FAIL_AT, an
# error seam in each stage: read, pull, stage-in, train, push, checkpoint) with the pipeline
# on (and a MEM-PS over an SSD-PS) and off. Every run must end on its own (a time limit far
# above a run's length turns a hang into a failure) with exit 1 and the first error's
# message, naming the rank.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 8000 --eval-rows 500 --cardinality 5000 --seed 21 >/dev/null
common=(--config configs/tiny.flags --train "$dir/data/train.tsv" --pass-examples 1000 --threads 1
        --checkpoint-every-passes 2)
for mode in on off; do
  extra=(--pipeline off)
  [ "$mode" = on ] && extra=(--pipeline on --mem-cache-gb 0.0003 --ssd-dir "$dir/ssd")
  for stage in read pull stage train push checkpoint; do
    rm -rf "$dir/ssd" "$dir/ckpt"
    rc=0
    STRATA_FAIL_AT=$stage:1 timeout -k 5 120 $MPIRUN -x STRATA_FAIL_AT -np 2 "$TRAIN" "${common[@]}" "${extra[@]}" \
      --checkpoint-dir "$dir/ckpt" >"$dir/$stage-$mode.log" 2>&1 || rc=$?
    [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || die_with_log "$dir/$stage-$mode.log" "$stage, pipeline $mode: the job hung"
    [ "$rc" -eq 1 ] || die_with_log "$dir/$stage-$mode.log" "$stage, pipeline $mode: exit $rc, want 1"
    grep -q "strata-train: error: .*injected failure at $stage on rank 1" "$dir/$stage-$mode.log" \
      || die_with_log "$dir/$stage-$mode.log" "$stage, pipeline $mode: no message of the failure"
    echo "ok: $stage on rank 1, pipeline $mode: exit 1 with the error"
  done
done
