#!/usr/bin/env bash
# Resume continues the same run only: another --train input, another --batch-size (the
# stripes the workers read) or another --seed is refused with a message naming the flag. --init-from starts a new run from a checkpoint's model
# on new input, on another topology: every row of the model carries over, pass numbers go
# on, and with --resume=auto a requeued job continues its own checkpoints instead.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/day1" --train-rows 12000 --eval-rows 2000 --cardinality 4000 --seed 31 >/dev/null
"$DATAGEN" --out-dir "$dir/day2" --train-rows 8000 --eval-rows 2000 --cardinality 4000 --seed 32 >/dev/null
common=(--config configs/tiny.flags --pass-examples 4000 --threads 1)
run() { local np=$1; shift; $MPIRUN -np "$np" "$TRAIN" "${common[@]}" "$@"; }

run_logged "$dir/day1.log" "day 1" run 2 --train "$dir/day1/train.tsv" --checkpoint-dir "$dir/ck1" \
  --export-rows "$dir/rows1" --metrics-out "$dir/day1.jsonl"
passes1=$(json_field "$dir/day1.jsonl" passes)

expect 1 "\-\-resume: the checkpoint was trained on \-\-train input \(1 file, 12000 lines in stripes of [0-9]+, id [0-9a-f]+\) other than this run's \(1 file, 8000 lines.*\-\-init-from" \
  run 2 --train "$dir/day2/train.tsv" --checkpoint-dir "$dir/ck1" --resume
expect 1 "in stripes of 256, id [0-9a-f]+\) other than this run's \(1 file, 12000 lines in stripes of 64, .*\-\-batch-size" \
  run 2 --train "$dir/day1/train.tsv" --checkpoint-dir "$dir/ck1" --resume --batch-size 64
expect 1 "cannot resume: \-\-seed 2026 in the checkpoint, 7 now" \
  run 2 --train "$dir/day1/train.tsv" --checkpoint-dir "$dir/ck1" --resume --seed 7
expect 2 "\-\-init-from and \-\-resume exclude each other" \
  run 1 --train "$dir/day2/train.tsv" --checkpoint-dir "$dir/ck2" --resume --init-from "$dir/ck1"

# Day 2 on one rank from day 1's model: new input, another topology.
run_logged "$dir/day2.log" "day 2" run 1 --train "$dir/day2/train.tsv" --init-from "$dir/ck1" \
  --checkpoint-dir "$dir/ck2" --resume=auto --export-rows "$dir/rows2" --metrics-out "$dir/day2.jsonl"
grep -q "starting from the model of $dir/ck1 (after pass $passes1) on new input" "$dir/day2.log" \
  || die_with_log "$dir/day2.log" "day 2 did not start from day 1's model"
[ "$(json_field "$dir/day2.jsonl" passes)" -eq $(( passes1 + 2 )) ] || die "day 2's pass numbers do not go on from day 1's"
/usr/bin/python3 - "$dir/rows1" "$dir/rows2" <<'PY' || die "rows of day 1's model are missing after day 2"
import glob, sys
def keys(d):
    return {line.split('\t', 1)[0] for f in glob.glob(d + '/rows-*.tsv') for line in open(f)}
day1, day2 = keys(sys.argv[1]), keys(sys.argv[2])
sys.exit(0 if day1 <= day2 and len(day2) > len(day1) else 1)
PY
echo "ok: day 2 started from day 1's model (pass $passes1) on one rank and kept its rows"

# Requeued with the same command, the job continues its own checkpoint, not day 1's.
run_logged "$dir/again.log" "day 2 requeued" run 1 --train "$dir/day2/train.tsv" --init-from "$dir/ck1" \
  --checkpoint-dir "$dir/ck2" --resume=auto
grep -q "resumed after pass $(( passes1 + 2 ))" "$dir/again.log" || die_with_log "$dir/again.log" "the requeued job did not resume its own checkpoint"
echo "ok: with --resume=auto a requeued job resumes its own checkpoint"
