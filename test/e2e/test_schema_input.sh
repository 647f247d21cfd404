#!/usr/bin/env bash
# Input schemas end to end: configs/criteo.schema trains bitwise the same model as
# --format criteo (2 ranks); a CSV with a header, string ids and a multi-hot column trains,
# and the same with a byte order mark, CRLF line ends and decimal labels, bitwise;
# a bad schema fails with exit 2 naming the schema's file and line; a file whose header
# does not match fails before the first pass naming the file; a bad value is reported at
# file:line.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 6000 --eval-rows 1000 --cardinality 3000 --seed 41 >/dev/null
common=(--config configs/tiny.flags --pass-examples 2000 --threads 1)

for how in format schema; do
  layout=(--format criteo); [ $how = schema ] && layout=(--schema configs/criteo.schema)
  run_logged "$dir/$how.log" "training with --$how" $MPIRUN -np 2 "$TRAIN" "${common[@]}" "${layout[@]}" \
    --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv" --metrics-out "$dir/$how.jsonl" --export-rows "$dir/rows-$how"
done
for f in eval_logloss eval_auc keys; do
  [ "$(json_field "$dir/format.jsonl" $f)" = "$(json_field "$dir/schema.jsonl" $f)" ] || die "criteo.schema: $f differs from --format criteo"
done
/usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-format" "$dir/rows-schema" 0
echo "ok: configs/criteo.schema trains bitwise the model of --format criteo"

# The synthetic rows as a CSV with a header: a string id, the label, the first 4 integer
# columns, the tokens of C1..C3 as strings, C4..C6 joined into one multi-hot column, and
# C7..C26 as they are.
to_csv() {
  awk -F'\t' 'BEGIN { OFS = ","; h = "row_id,label,i1,i2,i3,i4,ad,site,user,recent"
                     for (c = 7; c <= 26; ++c) h = h ",c" c; print h }
    { line = "row-" NR OFS $1 OFS $2 OFS $3 OFS $4 OFS $5 OFS "ad-" $15 OFS "site-" $16 OFS "u" $17 OFS $18 "|" $19 "|" $20
      for (f = 21; f <= 40; ++f) line = line OFS $f; print line }' "$1"
}
to_csv "$dir/data/train.tsv" >"$dir/train.csv"
to_csv "$dir/data/eval.tsv" >"$dir/eval.csv"
cat >"$dir/ads.schema" <<'SCHEMA'
delimiter comma
header yes
column row_id ignore
column label label
column i1 numeric log1p
column i2 numeric log1p
column i3 bucketize 0,1,10,100
column i4 numeric raw
column ad categorical
column site categorical
column user categorical
column recent multihot |
SCHEMA
for c in $(seq 7 26); do echo "column c$c categorical" >>"$dir/ads.schema"; done
run_logged "$dir/csv.log" "training on the CSV" $MPIRUN -np 2 "$TRAIN" "${common[@]}" --schema "$dir/ads.schema" \
  --train "$dir/train.csv" --eval "$dir/eval.csv" --metrics-out "$dir/csv.jsonl"
grep -q "2 ranks x 1 workers" "$dir/csv.log" || die_with_log "$dir/csv.log" "no start line"
auc=$(json_field "$dir/csv.jsonl" eval_auc)
/usr/bin/python3 -c "import sys; sys.exit(0 if $auc > 0.6 else 1)" || die "the CSV run's eval AUC $auc is below 0.6"
echo "ok: a CSV with a header, string ids and a multi-hot column trains to eval AUC $auc"

# The same CSV as a spreadsheet or a data frame may write it: a UTF-8 byte order mark before
# the header, CRLF line ends and labels as decimals (1.0, 0.0) train the same model.
for f in train eval; do
  { printf '\xef\xbb\xbf'; sed -E 's/^(row-[0-9]+,)([01]),/\1\2.0,/; s/$/\r/' "$dir/$f.csv"; } >"$dir/$f-exported.csv"
done
grep -q '^row-1,[01]\.0,' "$dir/train-exported.csv" || die "the exported CSV lacks decimal labels"
run_logged "$dir/exported.log" "training on the exported CSV" $MPIRUN -np 2 "$TRAIN" "${common[@]}" \
  --schema "$dir/ads.schema" --train "$dir/train-exported.csv" --eval "$dir/eval-exported.csv" \
  --metrics-out "$dir/exported.jsonl"
for f in eval_logloss eval_auc keys train_logloss; do
  [ "$(json_field "$dir/csv.jsonl" $f)" = "$(json_field "$dir/exported.jsonl" $f)" ] || die "the exported CSV: $f differs"
done
echo "ok: a byte order mark, CRLF line ends and decimal labels train bitwise the same model"

run() { $MPIRUN -np 2 "$TRAIN" "${common[@]}" "$@"; }
printf 'delimiter comma\nheader yes\ncolumn row_id ignore\ncolumn label lable\n' >"$dir/typo.schema"
expect 2 "\-\-schema .*typo.schema:4: unknown role 'lable'" run --schema "$dir/typo.schema" --train "$dir/train.csv"
sed 's/^column recent multihot |$/column recent_ads multihot |/' "$dir/ads.schema" >"$dir/renamed.schema"
expect 1 "train.csv:1: the header names column 10 'recent', the schema 'recent_ads' \(.*renamed.schema:12\)" \
  run --schema "$dir/renamed.schema" --train "$dir/train.csv"
run --schema "$dir/renamed.schema" --train "$dir/train.csv" 2>&1 | grep -q "^pass" && die "a pass ran before the header check"
sed '5s/^row-4,\([01]\),[^,]*,/row-4,\1,many,/' "$dir/train.csv" >"$dir/bad.csv"
expect 1 "bad.csv:5: column i1 is not a finite number: 'many'" run --schema "$dir/ads.schema" --train "$dir/bad.csv" --max-bad-rows 0
