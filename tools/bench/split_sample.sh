#!/usr/bin/env bash
# Splits a click log (plain or .gz) in file order: the first floor(TRAIN_PERCENT) of its rows
# go to OUT_DIR/train.EXT, the remaining rows to OUT_DIR/eval.EXT (both plain text; EXT is
# csv for a .csv input, else tsv). With --header the input's first line is a header: it is
# not counted as a row and heads both outputs. The split is chronological for files in time
# order, as the shared samples are; rows are not shuffled.
#
#   tools/bench/split_sample.sh [--header] INPUT[.gz] OUT_DIR [TRAIN_PERCENT (default 90)]
set -euo pipefail
header=0
[ "${1:-}" = --header ] && { header=1; shift; }
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 [--header] INPUT[.gz] OUT_DIR [TRAIN_PERCENT]" >&2
  exit 2
fi
input=$1 out=$2 pct=${3:-90}
[ -r "$input" ] || { echo "$0: cannot read $input" >&2; exit 1; }
[[ "$pct" =~ ^[0-9]+$ ]] && [ "$pct" -ge 1 ] && [ "$pct" -le 99 ] \
  || { echo "$0: TRAIN_PERCENT must be an integer in 1..99, got '$pct'" >&2; exit 2; }
cat_input() { if [[ "$input" == *.gz ]]; then gzip -dc -- "$input"; else cat -- "$input"; fi; }
ext=tsv; [[ "${input%.gz}" == *.csv ]] && ext=csv

mkdir -p "$out"
rows=$(( $(cat_input | wc -l) - header ))
train_rows=$((rows * pct / 100))
cat_input | awk -v h="$header" -v n="$train_rows" -v train="$out/train.$ext" -v eval="$out/eval.$ext" \
  'NR <= h { print > train; print > eval; next } NR - h <= n { print > train; next } { print > eval }'
: >>"$out/train.$ext"  # both files exist even when a side is empty
: >>"$out/eval.$ext"
echo "split $input: $train_rows train rows -> $out/train.$ext, $((rows - train_rows)) eval rows -> $out/eval.$ext"
