#!/usr/bin/env bash
# strata-predict: scores the eval file with a 2-rank run's checkpoint, in one process
# without mpirun and on 2 ranks, writing one probability per row in input order; its AUC
# and logloss are bitwise the trainer's eval metrics from the same checkpoint (the same
# batches, the same model); the file without its label column (--unlabeled) scores the
# same. A schema run's checkpoint is scored with the schema it holds (the file removed), and
# strata-inspect summary names its slots. tools/python/strata_torch.py loads both
# checkpoints into a torch.nn.Module whose probabilities agree with strata-predict's to
# 1e-5, also on a CSV with a byte order mark, CRLF and decimal labels. Bad use: a layout
# unlike the model's, a rank count that does not divide W, a malformed row (its messages
# in strata-predict's name).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
PREDICT="$BUILD/strata-predict"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 8000 --eval-rows 1500 --cardinality 3000 --seed 43 >/dev/null
run_logged "$dir/train.log" "training" $MPIRUN -np 2 "$TRAIN" --config configs/tiny.flags --pass-examples 4000 \
  --threads 1 --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv" --checkpoint-dir "$dir/ck" --metrics-out "$dir/m.jsonl"

same_metrics() {  # LOG JSONL: predict's printed metrics equal the run's eval metrics exactly
  local got; got=$(grep -o "rows=.*" "$1") || die_with_log "$1" "no metrics line"
  /usr/bin/python3 - "$got" "$2" <<'PY' || die "predictions differ from the trainer's evaluation: $got"
import json, sys
got = dict(kv.split("=") for kv in sys.argv[1].split())
final = json.loads(open(sys.argv[2]).read().splitlines()[-1])
sys.exit(0 if float(got["auc"]) == final["eval_auc"] and float(got["logloss"]) == final["eval_logloss"] else 1)
PY
}

run_logged "$dir/p1.log" "strata-predict (1 process)" "$PREDICT" --checkpoint "$dir/ck" --input "$dir/data/eval.tsv" \
  --out "$dir/p1.tsv" --threads 1
[ "$(wc -l <"$dir/p1.tsv")" -eq 1500 ] || die "$(wc -l <"$dir/p1.tsv") probabilities for 1500 rows"
same_metrics "$dir/p1.log" "$dir/m.jsonl"
run_logged "$dir/p2.log" "strata-predict (2 ranks)" $MPIRUN -np 2 "$PREDICT" --checkpoint "$dir/ck" \
  --input "$dir/data/eval.tsv" --out "$dir/p2.tsv" --threads 1
cmp -s "$dir/p1.tsv" "$dir/p2.tsv" || die "1 process and 2 ranks wrote different probabilities"
echo "ok: strata-predict's 1500 probabilities give bitwise the trainer's eval AUC and logloss, on 1 and 2 ranks"
cut -f2- "$dir/data/eval.tsv" >"$dir/unlabeled.tsv"
run_logged "$dir/pu.log" "strata-predict --unlabeled" "$PREDICT" --checkpoint "$dir/ck" --input "$dir/unlabeled.tsv" \
  --unlabeled --out "$dir/pu.tsv" --threads 1
cmp -s "$dir/p1.tsv" "$dir/pu.tsv" || die "the unlabeled copy of the eval file scored differently"
grep -q "auc=" "$dir/pu.log" && die_with_log "$dir/pu.log" "metrics printed for unlabeled input"
echo "ok: the eval file without its label column (--unlabeled) scores the same"

# A schema run: the checkpoint's recorded --schema is the default layout.
to_csv() {
  awk -F'\t' 'BEGIN { OFS = ","; print "y,a,b,c,t,p,r" }
    { print $1, $2, $15, $16 "|" $17, sprintf("2017-11-%02d %02d:%02d:00", NR % 7 + 1, NR % 24, NR % 60), $3, $4 % 10 }' "$1"
}
to_csv "$dir/data/train.tsv" >"$dir/train.csv"
to_csv "$dir/data/eval.tsv" >"$dir/eval.csv"
printf 'delimiter comma\nheader yes\ncolumn y label\ncolumn a numeric log1p\ncolumn b categorical\ncolumn c multihot | mean\ncolumn t time %%Y-%%m-%%d %%H:%%M:%%S\ncolumn p bucketize 1,10,100\ncolumn r numeric raw\n' >"$dir/s.schema"
run_logged "$dir/train-csv.log" "training on the CSV" "$TRAIN" --config configs/tiny.flags --schema "$dir/s.schema" \
  --threads 1 --train "$dir/train.csv" --eval "$dir/eval.csv" --checkpoint-dir "$dir/ck-csv" --metrics-out "$dir/csv.jsonl"
mv "$dir/s.schema" "$dir/s.schema.away"  # the checkpoint carries its schema: no file needed to score
run_logged "$dir/p3.log" "strata-predict on the CSV" "$PREDICT" --checkpoint "$dir/ck-csv" --input "$dir/eval.csv" \
  --out "$dir/p3.tsv" --threads 1
mv "$dir/s.schema.away" "$dir/s.schema"
same_metrics "$dir/p3.log" "$dir/csv.jsonl"
echo "ok: a schema run's checkpoint scores its CSV with its own schema (the file gone), bitwise the trainer's evaluation"
"$INSPECT" summary "$dir/ck-csv" >"$dir/summary.txt" || die_with_log "$dir/summary.txt" "strata-inspect summary failed"
for want in "mean-pooled slots 1" "input        1 file, 8001 lines" "slot 2 .* rows  t.hour" "slot 4 .* rows  p"; do
  grep -qE "$want" "$dir/summary.txt" || die_with_log "$dir/summary.txt" "the summary lacks /$want/"
done
echo "ok: strata-inspect summary names the slots, the mean-pooled ones and the training input"

# The PyTorch loader: the same probabilities to 1e-5, for both checkpoints.
# The CSV as a spreadsheet may write it (a byte order mark, CRLF, labels as 1.0 and 0.0):
# strata-predict and the torch loader read it as the plain one.
{ printf '\xef\xbb\xbf'; sed -E '2,$ s/^([01]),/\1.0,/; s/$/\r/' "$dir/eval.csv"; } >"$dir/eval-exported.csv"
run_logged "$dir/p4.log" "strata-predict on the exported CSV" "$PREDICT" --checkpoint "$dir/ck-csv" \
  --input "$dir/eval-exported.csv" --out "$dir/p4.tsv" --threads 1
cmp -s "$dir/p3.tsv" "$dir/p4.tsv" || die "strata-predict scores the exported CSV otherwise"
for c in "ck data/eval.tsv p1" "ck-csv eval.csv p3" "ck-csv eval-exported.csv p3"; do
  set -- $c
  run_logged "$dir/torch-$1.log" "strata_torch.py on $1" /usr/bin/python3 tools/python/strata_torch.py \
    --checkpoint "$dir/$1" --input "$dir/$2" --out "$dir/torch-$1.tsv"
  /usr/bin/python3 - "$dir/$3.tsv" "$dir/torch-$1.tsv" <<'PY' || die "strata_torch.py disagrees with strata-predict on $1"
import sys
import numpy as np
a, b = np.loadtxt(sys.argv[1]), np.loadtxt(sys.argv[2])
print(f"  {len(a)} rows, max |strata - torch| = {np.abs(a - b).max():.2e}")
sys.exit(0 if a.shape == b.shape and np.abs(a - b).max() <= 1e-5 else 1)
PY
done
echo "ok: tools/python/strata_torch.py loads both checkpoints into torch and agrees with strata-predict to 1e-5"

expect 1 "input layout \(.*s.schema\) has 5 slots and 2 dense features, the checkpoint's model 26 and 13" \
  "$PREDICT" --checkpoint "$dir/ck" --schema "$dir/s.schema" --input "$dir/eval.csv" --out "$dir/x.tsv"
expect 1 "trained by 2 workers: run on a number of ranks that divides it \(not 3\)" \
  $MPIRUN -np 3 "$PREDICT" --checkpoint "$dir/ck" --input "$dir/data/eval.tsv" --out "$dir/x.tsv"
expect 2 "\-\-out is required" "$PREDICT" --checkpoint "$dir/ck" --input "$dir/data/eval.tsv"
# A malformed row fails the scoring (every input row gets a probability), named by file and
# line in messages that start with strata-predict's name, not the trainer's.
{ head -3 "$dir/data/eval.tsv"; printf '1\t2\t3\n'; } >"$dir/bad.tsv"
expect 1 "^strata-predict: error: .*malformed row: .*bad.tsv:4: .*1 in all; strata-predict writes a probability for every input row" \
  "$PREDICT" --checkpoint "$dir/ck" --input "$dir/bad.tsv" --out "$dir/x.tsv"
out=$("$PREDICT" --checkpoint "$dir/ck" --input "$dir/bad.tsv" --out "$dir/x.tsv" 2>&1) && die "a malformed row passed"
if grep -q "strata-train" <<<"$out"; then die "strata-predict's output names strata-train: $out"; fi
echo "ok: strata-predict's messages carry its own name"
