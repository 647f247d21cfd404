#!/usr/bin/env bash
# The SSD-PS filesystem fills while training: 2 ranks whose SSD-PS directories share a
# 3 MiB tmpfs, checkpointing every 4 passes to a roomy directory. The job must end on its
# own (no hang: a time limit far above the run's length kills it otherwise) with a nonzero
# exit and a message naming the SSD-PS directory and the full disk; the last checkpoint
# must verify and a resume from it, with the SSD-PS on a roomy disk, must finish the run.
# Then the same with the checkpoints on the full disk (below). Needs root to mount the
# tmpfs; skipped otherwise.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch)
small=$dir/small
cleanup() { umount "$small" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
mkdir -p "$small"
mount -t tmpfs -o size=3m tmpfs "$small" 2>/dev/null || skip "cannot mount a tmpfs here (needs root)"

"$DATAGEN" --out-dir "$dir/data" --train-rows 60000 --eval-rows 5000 --cardinality 20000 --seed 5 >/dev/null
common=(--config configs/tiny.flags --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv"
        --pass-examples 1000 --batch-size 250 --epochs 2 --threads 1 --mem-cache-gb 0.0006
        --ssd-segment-mb 1 --checkpoint-dir "$dir/ckpt" --checkpoint-every-passes 4)
# About 6 MB of records per rank: the tmpfs fills within the first epoch.
rc=0
timeout -k 5 300 $MPIRUN -np 2 "$TRAIN" "${common[@]}" --ssd-dir "$small/ssd" >"$dir/full.log" 2>&1 || rc=$?
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || die_with_log "$dir/full.log" "the job hung on a full SSD-PS disk"
[ "$rc" -ne 0 ] || die_with_log "$dir/full.log" "the job exited 0 on a full SSD-PS disk"
grep -qE "$small/ssd/rank-[01].*(No space left|full)" "$dir/full.log" \
  || die_with_log "$dir/full.log" "no error naming the SSD-PS directory and the full disk"
echo "ok: exit $rc; $(grep -m1 -oE "$small/ssd/rank-[01][^\"]*" "$dir/full.log" | head -c 200)"

latest=$(cat "$dir/ckpt/LATEST")
[ -n "$latest" ] || die "no checkpoint was written before the disk filled"
run_logged "$dir/verify.log" "strata-inspect verify of $latest" "$INSPECT" verify "$dir/ckpt/$latest"
run_logged "$dir/resume.log" "the resume from $latest" \
  $MPIRUN -np 2 "$TRAIN" "${common[@]}" --ssd-dir "$dir/ssd" --resume
echo "ok: $latest verifies and the run resumed from it to the end"

# The checkpoint filesystem fills: checkpoints go to the 3 MiB tmpfs (rows in DRAM). The
# job exits 1 (no crash at exit) naming the file and the full disk; the previous checkpoint
# stays selected and verifies, no temporary directory is left, and the run resumes from it
# into a roomy directory.
rm -rf "${small:?}"/*
ck=(--config configs/tiny.flags --train "$dir/data/train.tsv" --pass-examples 1000 --epochs 2 --threads 1
    --checkpoint-every-passes 4)
rc=0
timeout -k 5 300 $MPIRUN -np 2 "$TRAIN" "${ck[@]}" --checkpoint-dir "$small/ckpt" >"$dir/ckfull.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || die_with_log "$dir/ckfull.log" "exit $rc with a full checkpoint disk, want 1"
grep -q "$small/ckpt/.*No space left on device" "$dir/ckfull.log" || die_with_log "$dir/ckfull.log" "no error naming the file and the full disk"
latest=$(cat "$small/ckpt/LATEST")
[ -n "$latest" ] || die "no checkpoint was written before the disk filled"
ls -a "$small/ckpt" | grep -q '^\.tmp' && die "a temporary checkpoint directory was left in $small/ckpt"
run_logged "$dir/ckverify.log" "strata-inspect verify of $latest" "$INSPECT" verify "$small/ckpt/$latest"
run_logged "$dir/ckresume.log" "the resume from $latest" \
  $MPIRUN -np 2 "$TRAIN" "${ck[@]}" --checkpoint-dir "$dir/ck2" --resume="$small/ckpt/$latest"
echo "ok: exit 1 on a full checkpoint disk; $latest stays selected, verifies and resumes"
