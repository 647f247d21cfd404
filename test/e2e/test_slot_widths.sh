#!/usr/bin/env bash
# Slots of several widths (a schema's `width`): a CSV whose slots are 8, 24 and 16 wide trains
# as unit slots of 8 floats (the start-up line says so); each unit of a slot holds one row a
# token, so the checkpoint holds as many rows in each unit slot of a column; 2x1 and 1x2 give
# bitwise the same model; strata-predict scores it as the trainer did and strata_torch.py
# agrees; a schema of one width everywhere trains bitwise the model of --embedding-dim; the
# models that compare slots' vectors and a conflicting --embedding-dim are refused.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 6000 --eval-rows 1000 --cardinality 3000 --seed 47 >/dev/null
to_csv() {
  awk -F'\t' 'BEGIN { OFS = ","; print "y,a,b,c,t,p" }
    { print $1, $2, $15, $16 "|" $17, sprintf("2017-11-%02d %02d", NR % 7 + 1, NR % 24), $3 }' "$1"
}
to_csv "$dir/data/train.tsv" >"$dir/train.csv"
to_csv "$dir/data/eval.tsv" >"$dir/eval.csv"
schema() {  # NAME B_WIDTH C_WIDTH: a schema with the default width 8
  printf 'delimiter comma\nheader yes\nwidth 8\ncolumn y label\ncolumn a numeric log1p\ncolumn b categorical%s\n' "$2" >"$dir/$1"
  printf 'column c multihot | mean%s\ncolumn t time %%Y-%%m-%%d %%H\ncolumn p bucketize 1,10,100\n' "$3" >>"$dir/$1"
}
schema wide.schema " width 24" " width 16"
schema even.schema "" ""
inputs=(--train "$dir/train.csv" --eval "$dir/eval.csv" --pass-examples 2000)

run_topology "$dir" 2x1 2x1 --schema "$dir/wide.schema" "${inputs[@]}" --checkpoint-dir "$dir/ck" >/dev/null
grep -q "dnn model, slots 8..24 wide: 8 unit slots of 8 floats, .* rows of 72 B with adagrad state" "$dir/2x1.log" ||
  die_with_log "$dir/2x1.log" "the start-up line does not give the widths and the 72-byte unit rows"
run_topology "$dir" 1x2 1x2 --schema "$dir/wide.schema" "${inputs[@]}" >/dev/null
same_run "$dir" 2x1 1x2
echo "ok: slots 8, 24 and 16 wide train as 8 unit slots of 8 floats, bitwise the same on 2x1 and 1x2"

"$PY3" - "$dir/ck" <<'PY' || die "the unit slots of a column hold different numbers of rows"
import glob, os, sys
import h5py
import numpy as np
ck = os.path.join(sys.argv[1], open(os.path.join(sys.argv[1], "LATEST")).read().strip())
keys = np.concatenate([h5py.File(f, "r")["rows/keys"][:] for f in glob.glob(os.path.join(ck, "rows-*.h5"))])
rows = np.bincount((keys >> np.uint64(56)).astype(np.int64), minlength=8)
print(f"  rows per unit slot: {rows.tolist()}")
sys.exit(0 if rows[0] == rows[1] == rows[2] > 0 and rows[3] == rows[4] > 0 and len(rows) == 8 else 1)
PY
scores_as_trained "$dir/ck" "$dir/eval.csv" "$dir/2x1.jsonl"
echo "ok: each unit slot holds a row a token; strata-predict and strata_torch.py score the model as trained"

run_topology "$dir" even 2x1 --schema "$dir/even.schema" "${inputs[@]}" >/dev/null
sed '/^width/d' "$dir/even.schema" >"$dir/plain.schema"
run_topology "$dir" plain 2x1 --schema "$dir/plain.schema" "${inputs[@]}" --embedding-dim 8 >/dev/null
same_run "$dir" even plain
echo "ok: a schema of width 8 everywhere trains bitwise the model of --embedding-dim 8"

run() { $MPIRUN -np 1 "$TRAIN" --config configs/tiny.flags --schema "$dir/wide.schema" "${inputs[@]}" "$@"; }
expect 2 "\-\-model deepfm needs one width for every slot; the schema .*wide.schema gives slots 8..24 wide" run --model deepfm
expect 2 "\-\-embedding-dim 16: the schema .*wide.schema gives the slots' widths \(its default: width 8\)" run --embedding-dim 16
printf 'column y label\ncolumn b categorical width 8\ncolumn c categorical\n' >"$dir/partial.schema"
expect 2 "partial.schema:3: column c has no width while others have one" run --schema "$dir/partial.schema"
echo "ok: deepfm with mixed widths, another --embedding-dim and a slot without a width are refused"
