#!/usr/bin/env bash
# tools/strata-plot turns a run's metrics file into a PNG (with eval every pass, so every
# panel has data), and names the file and line of a record that is not JSON.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 8000 --eval-rows 1000 --seed 9 >/dev/null
run_logged "$dir/run.log" "the run" $MPIRUN -np 2 "$TRAIN" --config configs/tiny.flags --train "$dir/data/train.tsv" \
  --eval "$dir/data/eval.tsv" --pass-examples 2000 --eval-every-passes 1 --metrics-out "$dir/m.jsonl"
tools/strata-plot "$dir/m.jsonl" | grep -q "4 passes -> $dir/m.png" || die "strata-plot did not report its PNG"
[ "$(head -c 8 "$dir/m.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] || die "$dir/m.png is not a PNG"
[ "$(stat -c %s "$dir/m.png")" -gt 20000 ] || die "$dir/m.png is too small to hold the panels"
echo "ok: $(stat -c %s "$dir/m.png")-byte PNG of 4 passes"
{ head -2 "$dir/m.jsonl"; echo '{"type": "pass", '; } >"$dir/bad.jsonl"
expect 1 "bad.jsonl:3: not JSON" tools/strata-plot "$dir/bad.jsonl"
