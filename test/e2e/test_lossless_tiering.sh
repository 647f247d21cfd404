#!/usr/bin/env bash
# Lossless tiering: the same run with (a) a cache big enough for everything, (b) a cache of
# about two passes' working sets over the SSD-PS, (c) the pipeline off, (d) deeper prefetch,
# (e) 1 rank instead of 2 with the same W, and (f) the small cache with O_DIRECT SSD-PS files
# gives bitwise identical eval logloss and rows; so do a big and a small cache with row-wise
# Adagrad rows.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 40000 --eval-rows 4000 --cardinality 5000 --seed 11 >/dev/null
common=(--config configs/tiny.flags --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv"
        --pass-examples 8000 --threads 1)
# Rows are 8 x 2 floats + 8 bytes = 72 bytes, plus 30 bytes of cache overhead: a pass of
# 8000 examples touches about 25k keys, so 2 passes' working sets are about 5.8 MB job-wide.
run() {
  local name=$1 np=$2; shift 2
  run_logged "$dir/$name.log" "run $name" $MPIRUN -np "$np" "$TRAIN" "${common[@]}" \
    --metrics-out "$dir/$name.jsonl" --export-rows "$dir/rows-$name" --ssd-dir "$dir/ssd-$name" "$@"
  echo "$name: eval logloss $(json_field "$dir/$name.jsonl" eval_logloss)"
}
run big 2 --workers-per-rank 2 --mem-cache-gb 1
run small 2 --workers-per-rank 2 --mem-cache-gb 0.0028
run serial 2 --workers-per-rank 2 --mem-cache-gb 0.0028 --pipeline off
run deep 2 --workers-per-rank 2 --mem-cache-gb 0.0028 --prefetch-passes 3
run one-rank 1 --workers-per-rank 4 --mem-cache-gb 0.0056
variants="small serial deep one-rank"
# (f) The small cache again with O_DIRECT SSD-PS files, where the filesystem allows it.
if /usr/bin/python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_DIRECT))' \
    "$dir/direct-probe" 2>/dev/null; then
  run direct 2 --workers-per-rank 2 --mem-cache-gb 0.0028 --ssd-io direct
  variants+=" direct"
else
  echo "direct: skipped, the scratch filesystem does not support O_DIRECT"
fi
# Pipeline off, the order of pulls, evictions and push-backs is fixed, so this holds or
# fails the same way every run (with the pipeline on it depends on the stages' timing).
grep -q "ssd read [1-9]" "$dir/serial.log" || die "the small cache (pipeline off) never read a row back from the SSD-PS"
base=$(json_field "$dir/big.jsonl" eval_logloss)
for name in $variants; do
  [ "$(json_field "$dir/$name.jsonl" eval_logloss)" = "$base" ] || die "$name differs from big"
  /usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-big" "$dir/rows-$name" 0
done
# Row-wise Adagrad's 44-byte rows (one state float) through a small cache (pipeline off, so
# that rows are read back from the SSD-PS whatever the timing).
run rw-big 2 --workers-per-rank 2 --mem-cache-gb 1 --sparse-optimizer rowwise-adagrad
run rw-small 2 --workers-per-rank 2 --mem-cache-gb 0.0016 --sparse-optimizer rowwise-adagrad --pipeline off
grep -q "ssd read [1-9]" "$dir/rw-small.log" || die "row-wise Adagrad: the small cache never read a row back"
[ "$(json_field "$dir/rw-small.jsonl" eval_logloss)" = "$(json_field "$dir/rw-big.jsonl" eval_logloss)" ] \
  || die "row-wise Adagrad: the small cache differs from the big one"
/usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-rw-big" "$dir/rows-rw-small" 0
