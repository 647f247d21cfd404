#!/usr/bin/env bash
# --dry-run prints the memory plan (HBM, DRAM, disk a rank) from the flags and the input's
# first passes and exits 0 with nothing written; a run's final record holds its plan; a
# plan over --dram-limit-gb is refused on
# every rank with exit 2 before any pass, naming the flag to lower, and leaves an existing
# checkpoint directory as it was.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 6000 --eval-rows 1000 --seed 11 >/dev/null
flags=(--config configs/tiny.flags --pass-examples 2000 --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv")

out=$($MPIRUN -np 2 "$TRAIN" "${flags[@]}" --mem-cache-gb 0.01 --ssd-dir "$dir/ssd" --checkpoint-dir "$dir/ckpt" \
        --metrics-out "$dir/m.jsonl" --dry-run)
for part in "memory plan of a rank" "DRAM" "MEM-PS cache" "SSD-PS index" "pass tables" "checkpoint batches" "disk" "checkpoints"; do
  grep -q "$part" <<<"$out" || die "the plan lacks '$part': $out"
done
! grep -q "^pass " <<<"$out" || die "--dry-run trained"
[ ! -e "$dir/ssd" ] && [ ! -e "$dir/ckpt" ] && [ ! -e "$dir/m.jsonl" ] || die "--dry-run wrote files"
keys=$(sed -n 's/.*: \([0-9]*\) keys a pass.*/\1/p' <<<"$out")
[ "$keys" -gt 1000 ] || die "a pass of 2000 examples has $keys keys in the plan"

# A real run leaves a checkpoint and records its plan beside its peak; a refused rerun must
# not touch the checkpoint.
$MPIRUN -np 2 "$TRAIN" "${flags[@]}" --checkpoint-dir "$dir/ckpt" --metrics-out "$dir/m.jsonl" >/dev/null
planned=$(json_field "$dir/m.jsonl" planned_dram_bytes)
[ "$planned" -gt 0 ] && [ "$(json_field "$dir/m.jsonl" peak_rss_bytes)" -gt 0 ] || die "no planned_dram_bytes ($planned)"
before=$(find "$dir/ckpt" -type f -exec md5sum {} + | sort)
set +e
err=$($MPIRUN -np 2 "$TRAIN" "${flags[@]}" --checkpoint-dir "$dir/ckpt" --resume=auto --epochs 2 \
        --dram-limit-gb 0.05 2>&1 >/dev/null)
rc=$?
set -e
[ "$rc" -eq 2 ] || die "a plan over --dram-limit-gb exited $rc, not 2: $err"
grep -q "more than the 0.05 GB available" <<<"$err" || die "the refusal does not say the limit: $err"
grep -q "lower --" <<<"$err" || die "the refusal names no flag: $err"
[ "$(find "$dir/ckpt" -type f -exec md5sum {} + | sort)" = "$before" ] || die "the refused run changed the checkpoint"
echo "plan of $keys keys a pass printed; over the limit: exit 2 ($(grep -o 'lower --[a-z-]*' <<<"$err" | head -1))"
