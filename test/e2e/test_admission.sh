#!/usr/bin/env bash
# Feature admission (--admit-min-count 3): 1x4, 2x2 and 4x1 (ranks x workers), the pipeline
# off, and a small MEM-PS cache over the SSD-PS all give bitwise the same eval logloss,
# rows, and per-pass rows_admitted and keys_pending; the model holds fewer rows than without
# admission; a resume from a mid-run checkpoint (its pending counts in pending-<r>.h5) on
# another topology is bitwise the uninterrupted run.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 30000 --eval-rows 5000 --cardinality 20000 --seed 7 >/dev/null
run() {  # NAME TOPOLOGY [flags...]
  run_topology "$dir" "$1" "$2" --pass-examples 6000 --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv" "${@:3}"
}
same_run() {  # A B: bitwise the same eval logloss, keys, admission ledger and rows
  /usr/bin/python3 - "$dir/$1.jsonl" "$dir/$2.jsonl" <<'PY' || die "$2 differs from $1"
import json, sys
a, b = ([json.loads(line) for line in open(p)] for p in sys.argv[1:3])
fields = ("rows_admitted", "keys_pending")
ledger = lambda recs: [(r["pass"],) + tuple(r[f] for f in fields) for r in recs if r["type"] == "pass"]
assert ledger(a)[-len(ledger(b)):] == ledger(b), (ledger(a), ledger(b))
assert a[-1]["keys"] == b[-1]["keys"] and a[-1]["eval_logloss"] == b[-1]["eval_logloss"], (a[-1], b[-1])
PY
  /usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-$1" "$dir/rows-$2" 0
}
run all 1x4
run admit 1x4 --admit-min-count 3 --checkpoint-dir "$dir/ck" --checkpoint-every-passes 1 --keep-checkpoints 10
grep -q "rows admitted [0-9]* pending [0-9]*" "$dir/admit.log" || die_with_log "$dir/admit.log" "no admission in the progress line"
for spec in "2x2:2x2" "4x1:4x1" "no-pipeline:2x2 --pipeline off" "prefetch-2:2x2 --prefetch-passes 2" \
            "small-cache:2x2 --mem-cache-gb 0.0002 --ssd-dir $dir/ssd --ssd-segment-mb 1"; do
  run "${spec%%:*}" ${spec#*:} --admit-min-count 3
  same_run admit "${spec%%:*}"
done
/usr/bin/python3 - "$dir/all.jsonl" "$dir/admit.jsonl" <<'PY' || die "admission did not shrink the model as its ledger says"
import json, sys
(all_, admit) = ([json.loads(line) for line in open(p)] for p in sys.argv[1:3])
passes = [r for r in admit if r["type"] == "pass"]
admitted = sum(r["rows_admitted"] for r in passes)
print(f"rows: {all_[-1]['keys']} without admission, {admit[-1]['keys']} with --admit-min-count 3 "
      f"({admitted} admitted, {passes[-1]['keys_pending']} pending); eval auc {all_[-1]['eval_auc']:.5f} -> {admit[-1]['eval_auc']:.5f}")
assert admit[-1]["keys"] == admitted and admitted < all_[-1]["keys"] // 2
assert passes[-1]["keys_pending"] > 0 and passes[-1]["admission_bytes"] > 0
PY
ls "$dir"/ck/ckpt-00000002/pending-0.h5 >/dev/null || die "the checkpoint holds no pending counts"
run resumed 2x2 --admit-min-count 3 --resume="$dir/ck/ckpt-00000002"
same_run admit resumed
# The admitting run's final checkpoint scores the eval file with strata-predict bitwise as
# the trainer evaluated it (a key without a row is zero there too), and the PyTorch loader
# agrees to 1e-5.
scores_as_trained "$dir/ck" "$dir/data/eval.tsv" "$dir/admit.jsonl"
echo "ok: strata-predict and strata_torch.py score the admitting model as the trainer did"
"$BUILD/strata-inspect" summary "$dir/ck" >"$dir/summary.txt" || die_with_log "$dir/summary.txt" "summary failed"
grep -q "admission: a key gets a row once 3 examples held it" "$dir/summary.txt" \
  || die_with_log "$dir/summary.txt" "strata-inspect summary does not show the admission rule"
