#!/usr/bin/env bash
# Preemption and requeue: a 2-rank run started with --resume=auto on an empty
# --checkpoint-dir starts fresh; SIGUSR1 to its mpirun (which forwards it to every rank)
# stops it at the next pass boundary with exit 3 after writing a checkpoint; the same
# command run again resumes and ends bitwise equal (rows, eval metrics) to an
# uninterrupted run. Without --resume, a directory holding checkpoints is refused, not
# overwritten; a second job on a running job's directory is refused too. The stop comes at
# a pass drawn from a seed, where the job holds until its stop signal (STRATA_HOLD_AFTER_PASS),
# so it cannot run to its end first. SIGTERM to mpirun itself is no graceful stop (Open MPI stops
# relaying the ranks' output and kills them a second later): the job ends at once, its
# ranks with it, the published checkpoints stay intact, and the job resumes from the last.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 20000 --eval-rows 2000 --cardinality 5000 --seed 17 >/dev/null
common=(--config configs/tiny.flags --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv"
        --pass-examples 1000 --epochs 10 --threads 1)
run() {  # name [flags...]: one 2-rank run, logged; returns its exit status
  local name=$1; shift
  $MPIRUN -np 2 "$TRAIN" "${common[@]}" --metrics-out "$dir/$name.jsonl" --export-rows "$dir/rows-$name" \
    "$@" >>"$dir/$name.log" 2>&1
}

run full --checkpoint-dir "$dir/ck-full" || die_with_log "$dir/full.log" "the uninterrupted run failed"

# The requeued job's command, twice: stopped by SIGUSR1, then continued.
hold=$(( 3 + $(seed_pick 17 20) ))
STRATA_HOLD_AFTER_PASS=$hold run job --checkpoint-dir "$dir/ck-job" --resume=auto &
job=$!
mpirun_pid=$(mpirun_of "$job") || die "the job's mpirun did not start"
# Once it runs, a second job on its checkpoint directory is refused (the LOCK it holds).
wait_passes "$dir/job.jsonl" 1 "$job"
out=$(run second --checkpoint-dir "$dir/ck-job" --resume=auto 2>&1) && die "a second job shared $dir/ck-job"
grep -q "ck-job is in use by another job" "$dir/second.log" || die_with_log "$dir/second.log" "no in-use message"
wait_passes "$dir/job.jsonl" "$hold" "$job"
kill -USR1 "$mpirun_pid"
rc=0; wait "$job" || rc=$?
[ "$rc" -eq 3 ] || die_with_log "$dir/job.log" "exit $rc after SIGUSR1, want 3"
grep -q "stopped by SIGUSR1 after pass [0-9]*; its checkpoint is in .*--resume=auto" "$dir/job.log" \
  || die_with_log "$dir/job.log" "no stop message"
stopped=$(passes_done "$dir/job.jsonl")
[ -s "$dir/ck-job/LATEST" ] || die "no checkpoint after the stop"
echo "ok: stopped with exit 3 after $stopped passes, $(cat "$dir/ck-job/LATEST") written"

out=$(run refused --checkpoint-dir "$dir/ck-job" 2>&1) && die "a run without --resume overwrote $dir/ck-job"
grep -q "holds an earlier run's checkpoints" "$dir/refused.log" || die_with_log "$dir/refused.log" "no refusal message"
echo "ok: without --resume the checkpoints are refused, not overwritten"

run job --checkpoint-dir "$dir/ck-job" --resume=auto || die_with_log "$dir/job.log" "the requeued run failed"
grep -q "resumed after pass" "$dir/job.log" || die_with_log "$dir/job.log" "the requeued run did not resume"
for f in eval_logloss eval_auc examples steps keys; do
  [ "$(json_field "$dir/job.jsonl" $f)" = "$(json_field "$dir/full.jsonl" $f)" ] || die "requeued run: $f differs"
done
/usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-full" "$dir/rows-job" 0
echo "ok: the requeued run ends bitwise equal to the uninterrupted one"

# SIGTERM to mpirun: the job ends within seconds; the last published checkpoint verifies
# and the job resumes from it to the same end.
hold=$(( 4 + $(seed_pick 19 20) ))
STRATA_HOLD_AFTER_PASS=$hold run hard --checkpoint-dir "$dir/ck-hard" --checkpoint-every-passes 2 --resume=auto &
job=$!
mpirun_pid=$(mpirun_of "$job") || die "the job's mpirun did not start"
wait_passes "$dir/hard.jsonl" "$hold" "$job"
ranks=$(pgrep -P "$mpirun_pid" | tr '\n' ' ')
kill -TERM "$mpirun_pid"
for _ in $(seq 1 300); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
kill -0 "$job" 2>/dev/null && die "the job still runs 30 s after SIGTERM to its mpirun"
for pid in $ranks; do  # given a moment to be reaped once their parent is gone
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && die "rank process $pid outlived its mpirun by 10 s"
done
"$BUILD/strata-inspect" verify "$dir/ck-hard" >"$dir/verify.txt" 2>&1 || die_with_log "$dir/verify.txt" "the checkpoint is damaged"
last=$(cat "$dir/ck-hard/LATEST")
run hard --checkpoint-dir "$dir/ck-hard" --resume=auto || die_with_log "$dir/hard.log" "the run after SIGTERM failed"
for f in eval_logloss eval_auc examples steps keys; do
  [ "$(json_field "$dir/hard.jsonl" $f)" = "$(json_field "$dir/full.jsonl" $f)" ] || die "run after SIGTERM: $f differs"
done
echo "ok: SIGTERM to mpirun ended the job at once; it resumed from $last to the same end"
