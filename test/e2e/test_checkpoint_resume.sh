#!/usr/bin/env bash
# Checkpoints: a 2-rank run (with a learning-rate schedule by global step, which resume must
# continue) killed with SIGKILL at a random point after its first checkpoint, then resumed,
# ends bitwise identical (rows, dense parameters, eval metrics) to
# the uninterrupted run; so does a run killed in the middle of writing a checkpoint (the
# previous one is used). A 2-rank checkpoint resumes on 1 (with a small MEM-PS over the
# SSD-PS) and on 4 ranks with the same W.
# h5dump reads every file; strata-inspect verify passes (also on rank files written with
# Fletcher32), and fails on a flipped byte, a
# truncated file and a missing rank file; base + deltas fold to the full checkpoint.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
INSPECT="$BUILD/strata-inspect"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 40000 --eval-rows 4000 --cardinality 5000 --seed 13 >/dev/null
common=(--config configs/tiny.flags --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv"
        --pass-examples 4000 --checkpoint-every-passes 1 --keep-checkpoints 20 --threads 1
        --warmup-steps 4 --lr-decay polynomial --decay-start 8 --decay-steps 40 --end-lr 0.1)
train() {  # name np workers-per-rank [flags...]
  local name=$1 np=$2 g=$3; shift 3
  $MPIRUN -np "$np" "$TRAIN" "${common[@]}" --workers-per-rank "$g" --checkpoint-dir "$dir/ck-$name" \
    --metrics-out "$dir/$name.jsonl" --export-rows "$dir/rows-$name" "$@" >>"$dir/$name.log" 2>&1
}
same_as_full() {  # name: eval metrics, rows and the final checkpoint equal the full run's
  local name=$1
  for f in eval_logloss eval_auc examples steps keys; do
    [ "$(json_field "$dir/$name.jsonl" $f)" = "$(json_field "$dir/full.jsonl" $f)" ] || die "$name: $f differs"
  done
  /usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-full" "$dir/rows-$name" 0
  "$INSPECT" diff "$dir/ck-full" "$dir/ck-$name" >"$dir/diff-$name.txt" || die_with_log "$dir/diff-$name.txt" "$name: diff failed"
  grep -qE "changed 0\b|identical" "$dir/diff-$name.txt" || die_with_log "$dir/diff-$name.txt" "$name: checkpoints differ"
}

train full 2 2 --export-delta-dir "$dir/deltas" || die_with_log "$dir/full.log" "full run failed"
passes=$(json_field "$dir/full.jsonl" passes)
echo "full run: $passes passes, eval logloss $(json_field "$dir/full.jsonl" eval_logloss)"

# Killed with SIGKILL (its ranks and mpirun, by PID) once it has finished a number of
# passes drawn from a seed (a checkpoint follows every pass), then resumed.
( train killed 2 2 || true ) &
runner=$!
mpirun_pid=$(mpirun_of "$runner") || die "the run's mpirun did not start"
wait_passes "$dir/killed.jsonl" $(( 1 + $(seed_pick 13 8) )) "$runner"
kill -KILL $(pgrep -P "$mpirun_pid") "$mpirun_pid" 2>/dev/null || true
wait $runner || true
echo "killed after $(cat "$dir/ck-killed/LATEST")"
train killed 2 2 --resume || die_with_log "$dir/killed.log" "resume failed"
same_as_full killed

# Killed while writing its third checkpoint: the second is selected and resumed from.
STRATA_CRASH_AT=checkpoint-before-publish:3 train midckpt 2 2 && die "the crash point did not fire"
[ "$(cat "$dir/ck-midckpt/LATEST")" = "$(basename "$(ls -d "$dir"/ck-full/ckpt-* | sed -n 2p)")" ] \
  || die "LATEST is $(cat "$dir/ck-midckpt/LATEST") after a crash in the third checkpoint"
train midckpt 2 2 --resume || die_with_log "$dir/midckpt.log" "resume after a mid-checkpoint crash failed"
same_as_full midckpt

# Resharding: the second checkpoint of the 2x2 run resumes on 1x4 and 4x1; the 1-rank
# resume loads it into a MEM-PS far smaller than the model, over the SSD-PS.
second=$(ls -d "$dir"/ck-full/ckpt-* | sed -n 2p)
for topo in 1x4 4x1; do
  extra=()
  [ "$topo" = 1x4 ] && extra=(--mem-cache-gb 0.0002 --ssd-dir "$dir/ssd-re$topo")
  train "re$topo" "${topo%x*}" "${topo#*x}" --resume="$second" "${extra[@]}" \
    || die_with_log "$dir/re$topo.log" "resume on $topo failed"
  same_as_full "re$topo"
done

# A resume that would change the model's shape, or W, is refused naming the flag.
out=$(train shape 2 2 --resume="$second" --embedding-dim 16 2>&1) && die "a resume with another --embedding-dim ran"
grep -q -- "--embedding-dim 8 in the checkpoint, 16 now" "$dir/shape.log" || die_with_log "$dir/shape.log" "no clear refusal of --embedding-dim"
out=$(train workers 2 3 --resume="$second" 2>&1) && die "a resume with another W ran"
grep -q -- "written by 4 workers, this job has 6" "$dir/workers.log" || die_with_log "$dir/workers.log" "no clear refusal of W"

# Every file is HDF5 that h5dump reads; verify passes on good checkpoints.
for f in "$dir"/ck-full/*/*.h5 "$dir"/deltas/*/*.h5; do h5dump -H "$f" >/dev/null || die "h5dump -H $f"; done
"$INSPECT" verify "$dir/ck-full" >/dev/null || die "verify failed on a good checkpoint"
# Base + deltas fold to the full checkpoint of the same pass.
mapfile -t deltas < <(ls -d "$dir"/deltas/delta-*)
"$INSPECT" fold "${deltas[0]}" "${deltas[@]:1}" --check "$dir/ck-full" || die "fold of base + deltas differs"
# Damage: a flipped byte (in the rows: HDF5 allocates whole chunks, and a byte past the last
# row is no data), a truncated file, a missing rank file.
flip_a_key_byte() {  # FILE: flips a byte of the last key that /rows/keys holds
  h5dump -d /rows/keys -b LE -o "$dir/keys.bin" "$1" >/dev/null
  /usr/bin/python3 - "$1" "$dir/keys.bin" <<'PY'
import sys
path, keys = sys.argv[1], open(sys.argv[2], "rb").read()
data = bytearray(open(path, "rb").read())
at = data.find(keys[-8:])
assert at >= 0, "the last key's bytes are not in the file"
data[at + 3] ^= 0xFF
open(path, "wb").write(data)
PY
}
last=$(ls -d "$dir"/ck-full/ckpt-* | tail -1)
for damage in flip truncate remove; do
  rm -rf "$dir/bad"; cp -r "$last" "$dir/bad"
  f="$dir/bad/rows-1.h5"
  case $damage in
    flip) flip_a_key_byte "$f" ;;
    truncate) truncate -s 3000 "$f" ;;
    remove) rm "$f" ;;
  esac
  if out=$("$INSPECT" verify "$dir/bad" 2>&1); then die "verify passed on a $damage"; fi
  grep -q "rows-1.h5" <<<"$out" || die "verify on a $damage does not name the file: $out"
  echo "verify on $damage: $(head -1 <<<"$out")"
done
# Rank files whose datasets carry HDF5's Fletcher32 filter (as rank files were once written)
# read the same: verify passes, and they hold the same model.
rm -rf "$dir/fletcher"; cp -r "$last" "$dir/fletcher"
for f in "$dir"/fletcher/rows-*.h5; do
  h5repack -f FLET "$f" "$f.repacked" && mv "$f.repacked" "$f"
  h5dump -p -H "$f" | grep -q FLETCHER32 || die "h5repack left $f without Fletcher32"
done
"$INSPECT" verify "$dir/fletcher" >/dev/null || die "verify failed on rank files with Fletcher32"
"$INSPECT" diff "$last" "$dir/fletcher" >"$dir/diff-fletcher.txt" || die_with_log "$dir/diff-fletcher.txt" "diff failed"
grep -qE "changed 0\b|identical" "$dir/diff-fletcher.txt" || die_with_log "$dir/diff-fletcher.txt" "rank files with Fletcher32 read differently"
