#!/usr/bin/env bash
# `make crash`: the crash campaign. (1) The SSD-PS crash test over CRASH_POINTS (default 1000)
# seeded kill -9 points: each recovery must hold exactly the last completed sync. (2) The
# trainer killed with SIGKILL (ranks and mpirun, by PID) after a seeded number of passes,
# TRAINER_KILLS (default 50) times, each resumed from its newest checkpoint: every resumed
# run must end bitwise equal (rows, eval metrics) to the uninterrupted one. Prints the counts.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
source test/e2e/lib.sh
points=${CRASH_POINTS:-1000}
kills=${TRAINER_KILLS:-50}

echo "== SSD-PS: $points kill -9 points"
STRATA_CRASH_POINTS=$points "$BUILD/strata-unit-tests" -tc="ssd: kill -9 at random*" -s 2>&1 \
  | grep -E "SSD-PS crash points|test cases|ERROR" | sed 's/^.*MESSAGE: /  /'

echo "== trainer: $kills kill points"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 12000 --eval-rows 2000 --cardinality 5000 --seed 31 >/dev/null
common=(--config configs/tiny.flags --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv"
        --pass-examples 1000 --epochs 2 --threads 1 --checkpoint-every-passes 1)
train() {  # name [flags...]
  local name=$1; shift
  $MPIRUN -np 2 "$TRAIN" "${common[@]}" --checkpoint-dir "$dir/ck-$name" --metrics-out "$dir/$name.jsonl" \
    --export-rows "$dir/rows-$name" "$@" >>"$dir/$name.log" 2>&1
}
train full || die_with_log "$dir/full.log" "the uninterrupted run failed"
passes=$(json_field "$dir/full.jsonl" passes)
equal=0
for k in $(seq 1 "$kills"); do
  rm -rf "$dir/ck-k" "$dir/rows-k" "$dir/k.jsonl" "$dir/k.log"
  ( train k || true ) 2>/dev/null &
  runner=$!
  mpirun_pid=$(mpirun_of "$runner") || die "run $k: mpirun did not start"
  wait_passes "$dir/k.jsonl" $(( 1 + $(seed_pick "$k" $(( passes - 1 ))) )) "$runner"
  kill -KILL $(pgrep -P "$mpirun_pid") "$mpirun_pid" 2>/dev/null || true
  wait "$runner" || true
  at=$(cat "$dir/ck-k/LATEST" 2>/dev/null || echo none)
  rm -f "$dir/k.jsonl"
  train k --resume=auto || die_with_log "$dir/k.log" "kill $k: the resume failed"
  for f in eval_logloss eval_auc examples steps keys; do
    [ "$(json_field "$dir/k.jsonl" $f)" = "$(json_field "$dir/full.jsonl" $f)" ] || die "kill $k: $f differs"
  done
  /usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-full" "$dir/rows-k" 0 >/dev/null || die "kill $k: rows differ"
  equal=$((equal + 1))
  echo "  kill $k: killed with $at selected, resumed, bitwise equal"
done
echo "trainer kill points: $kills, resumed bitwise equal: $equal, rows lost: 0"
