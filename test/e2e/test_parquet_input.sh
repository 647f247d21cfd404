#!/usr/bin/env bash
# Parquet input end to end: the rows of a CSV written as Parquet (all strings in row groups
# of 500; typed columns with a dictionary-encoded one, in two files with row groups of 777)
# train with --format parquet on 2 ranks x 2 workers to bitwise the model of the CSV; a
# run resumed from a checkpoint whose position lies inside a row group ends the same; bad
# inputs fail naming the file:
# a CSV given as --format parquet, Parquet without a named-column schema, a truncated
# Parquet file, --format parquet without --schema. strata-predict scores Parquet as its CSV.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
PYARROW=deps/python
[ -d "$PYARROW/pyarrow/include/parquet" ] || skip "no Arrow in deps/python: run make deps"
help=$("$TRAIN" --help 2>&1)
grep -q "parquet" <<<"$help" || die "strata-train --help does not mention parquet"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 6000 --eval-rows 1000 --cardinality 3000 --seed 43 >/dev/null

# The synthetic Criteo rows as a CSV with a header, and the schema naming its columns. (A
# Parquet file is read as its CSV with a header line, so the same rows in the same files
# give the same lines, the same shard plan and the same model.)
header="label"; for i in $(seq 13); do header="$header,I$i"; done; for c in $(seq 26); do header="$header,C$c"; done
for split in train eval; do { echo "$header"; tr '\t' ',' <"$dir/data/$split.tsv"; } >"$dir/$split.csv"; done
sed -e 's/^delimiter tab$/delimiter comma/' -e 's/^header no$/header yes/' configs/criteo.schema >"$dir/named.schema"

PYTHONPATH=$PYARROW /usr/bin/python3 - "$dir" <<'PY'
import sys
import pyarrow as pa, pyarrow.csv as pcsv, pyarrow.parquet as pq
d = sys.argv[1]
for split in ("train", "eval"):
    names = pcsv.read_csv(f"{d}/{split}.csv").column_names
    strings = pcsv.read_csv(f"{d}/{split}.csv", convert_options=pcsv.ConvertOptions(
        column_types={n: pa.string() for n in names}, strings_can_be_null=False))
    pq.write_table(strings, f"{d}/{split}-strings.parquet", row_group_size=500)
    # Typed: label and counts as int64 (empty counts null), tokens as strings, C1
    # dictionary-encoded; the train rows in two files.
    typed = pcsv.read_csv(f"{d}/{split}.csv", convert_options=pcsv.ConvertOptions(
        column_types={n: (pa.int64() if n == "label" or n.startswith("I") else pa.string()) for n in names},
        strings_can_be_null=False))
    typed = typed.set_column(names.index("C1"), "C1", typed.column("C1").dictionary_encode())
    half = typed.num_rows // 2 if split == "train" else typed.num_rows
    pq.write_table(typed.slice(0, half), f"{d}/{split}-typed-1.parquet", row_group_size=777)
    if half < typed.num_rows:
        pq.write_table(typed.slice(half), f"{d}/{split}-typed-2.parquet", row_group_size=777)
PY
common=(--config configs/tiny.flags --pass-examples 1000 --threads 1 --workers-per-rank 2 --schema "$dir/named.schema")
train() {  # NAME TRAIN-FILES EVAL-FILE [flags...]
  local name=$1 files=$2 eval=$3; shift 3
  run_logged "$dir/$name.log" "training on $name" $MPIRUN -np 2 "$TRAIN" "${common[@]}" --train "$files" --eval "$eval" \
    --metrics-out "$dir/$name.jsonl" --export-rows "$dir/rows-$name" "$@"
}
train csv "$dir/train.csv" "$dir/eval.csv"
# The same rows in two CSV files, as the typed Parquet has them (a header each).
{ echo "$header"; tr '\t' ',' <"$dir/data/train.tsv" | sed -n '1,3000p'; } >"$dir/train-1.csv"
{ echo "$header"; tr '\t' ',' <"$dir/data/train.tsv" | sed -n '3001,$p'; } >"$dir/train-2.csv"
train csv2 "$dir/train-*.csv" "$dir/eval.csv"
train strings "$dir/train-strings.parquet" "$dir/eval-strings.parquet" --format parquet
train typed "$dir/train-typed-*.parquet" "$dir/eval-typed-1.parquet" --format parquet \
  --checkpoint-dir "$dir/ck-typed" --checkpoint-every-passes 1 --keep-checkpoints 20
grep -q "6002 train lines" "$dir/typed.log" || die_with_log "$dir/typed.log" "the typed run does not read 2 files (a header line each)"
same_as_csv() {  # NAME CSV-RUN: eval metrics and rows equal the CSV run's
  for f in eval_logloss eval_auc keys; do
    [ "$(json_field "$dir/$2.jsonl" $f)" = "$(json_field "$dir/$1.jsonl" $f)" ] || die "Parquet ($1): $f differs from the CSV's"
  done
  /usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-$2" "$dir/rows-$1" 0
}
same_as_csv strings csv
same_as_csv typed csv2
echo "ok: Parquet (strings; typed, dictionary, two files) trains bitwise the model of the CSV, 2 ranks x 2 workers"

# strata-predict scores the Parquet eval file as it scores its CSV.
PREDICT="$BUILD/strata-predict"
for input in eval.csv eval-typed-1.parquet; do
  run_logged "$dir/predict-$input.log" "strata-predict on $input" "$PREDICT" --checkpoint "$dir/ck-typed" \
    --input "$dir/$input" --out "$dir/p-$input.txt"
done
cmp -s "$dir/p-eval.csv.txt" "$dir/p-eval-typed-1.parquet.txt" || die "strata-predict: Parquet and CSV predictions differ"
echo "ok: strata-predict scores the Parquet eval file bitwise as its CSV ($(wc -l <"$dir/p-eval.csv.txt") rows)"

# Resumed from the checkpoint after pass 3, whose data position lies inside a row group.
third=$(ls -d "$dir"/ck-typed/ckpt-* | sed -n 3p)
train resumed "$dir/train-typed-*.parquet" "$dir/eval-typed-1.parquet" --format parquet --resume="$third"
same_as_csv resumed csv2
echo "ok: a Parquet run resumed mid-way ends bitwise as the CSV's"

run() { $MPIRUN -np 2 "$TRAIN" --config configs/tiny.flags --threads 1 "$@"; }
expect 1 "--format parquet: .*train.csv is not a Parquet file" run --schema "$dir/named.schema" --format parquet --train "$dir/train.csv"
expect 1 "train-strings.parquet is a Parquet file: read it with a --schema whose columns are named" \
  run --train "$dir/train-strings.parquet"
head -c 20000 "$dir/train-strings.parquet" >"$dir/cut.parquet"
expect 1 "input file .*cut.parquet: " run --schema "$dir/named.schema" --train "$dir/cut.parquet"
expect 2 "--format parquet needs --schema" run --format parquet --train "$dir/train-strings.parquet"
