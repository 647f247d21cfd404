#!/usr/bin/env bash
# Splits a Criteo TSV (plain or .gz) in file order: the first floor(90%) of rows go to
# OUT_DIR/train.tsv, the remaining rows to OUT_DIR/eval.tsv (both plain text). The split is
# chronological for files in time order, as the Criteo DAC sample is; rows are not shuffled.
#
#   tools/bench/split_criteo.sh INPUT.tsv[.gz] OUT_DIR [TRAIN_PERCENT (default 90)]
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 INPUT.tsv[.gz] OUT_DIR [TRAIN_PERCENT]" >&2
  exit 2
fi
input=$1 out=$2 pct=${3:-90}
[ -r "$input" ] || { echo "$0: cannot read $input" >&2; exit 1; }
[[ "$pct" =~ ^[0-9]+$ ]] && [ "$pct" -ge 1 ] && [ "$pct" -le 99 ] \
  || { echo "$0: TRAIN_PERCENT must be an integer in 1..99, got '$pct'" >&2; exit 2; }
cat_input() { if [[ "$input" == *.gz ]]; then gzip -dc -- "$input"; else cat -- "$input"; fi; }

mkdir -p "$out"
rows=$(cat_input | wc -l)
train_rows=$((rows * pct / 100))
cat_input | awk -v n="$train_rows" -v train="$out/train.tsv" -v eval="$out/eval.tsv" \
  'NR <= n { print > train; next } { print > eval }'
: >>"$out/train.tsv"  # both files exist even when a side is empty
: >>"$out/eval.tsv"
echo "split $input: $train_rows train rows -> $out/train.tsv, $((rows - train_rows)) eval rows -> $out/eval.tsv"
