#!/usr/bin/env bash
# 16-bit rows (--row-dtype bf16, and fp16): 1x4, 2x2 and 4x1 (ranks x workers), the
# pipeline off and a small cache over the SSD-PS give bitwise the same eval logloss and
# rows; rows are 16 bytes smaller at dim 8 and the checkpoint stores the embedding as u16; a
# resume on another topology is bitwise the uninterrupted run, and a resume with another
# --row-dtype is refused naming the flag; strata-predict scores as the trainer evaluated and
# strata_torch.py agrees; an odd --embedding-dim is refused.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 24000 --eval-rows 4000 --cardinality 20000 --seed 11 >/dev/null
run() {  # NAME TOPOLOGY [flags...]
  run_topology "$dir" "$1" "$2" --pass-examples 6000 --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv" "${@:3}"
}
run fp32 1x4 --checkpoint-dir "$dir/ck-fp32"
run bf16 1x4 --row-dtype bf16 --checkpoint-dir "$dir/ck" --checkpoint-every-passes 1 --keep-checkpoints 10
grep -q "rows of 56 B with adagrad state, bf16 embeddings" "$dir/bf16.log" \
  || die_with_log "$dir/bf16.log" "the start line does not show 56-byte bf16 rows (72 in fp32)"
for spec in "2x2:2x2" "4x1:4x1" "no-pipeline:2x2 --pipeline off" \
            "small-cache:2x2 --mem-cache-gb 0.0002 --ssd-dir $dir/ssd --ssd-segment-mb 1"; do
  run "bf16-${spec%%:*}" ${spec#*:} --row-dtype bf16
  same_run "$dir" bf16 "bf16-${spec%%:*}"
done
run fp16 1x4 --row-dtype fp16
run fp16-2x2 2x2 --row-dtype fp16
same_run "$dir" fp16 fp16-2x2
/usr/bin/python3 - "$dir" <<'PY' || die "16-bit rows changed the model more than rounding should"
import json, sys
d = sys.argv[1]
auc = {n: json.loads(open(f"{d}/{n}.jsonl").read().splitlines()[-1])["eval_auc"] for n in ("fp32", "bf16", "fp16")}
print("eval auc " + ", ".join(f"{n} {a:.5f}" for n, a in auc.items()))
sys.exit(0 if abs(auc["bf16"] - auc["fp32"]) < 0.005 and abs(auc["fp16"] - auc["fp32"]) < 0.005 else 1)
PY
h5ls -v "$dir/ck/ckpt-00000004/rows-0.h5/rows/embedding" | grep -q "Type: *native unsigned short" \
  || die "the bf16 checkpoint does not store the embedding in 16 bits"

run resumed 2x2 --row-dtype bf16 --resume="$dir/ck/ckpt-00000002"
same_run "$dir" bf16 resumed
expect 1 "cannot resume: --row-dtype bf16 in the checkpoint, fp32 now" \
  run refused 2x2 --resume="$dir/ck/ckpt-00000002"
scores_as_trained "$dir/ck" "$dir/data/eval.tsv" "$dir/bf16.jsonl"
echo "ok: strata-predict and strata_torch.py score the bf16 model as the trainer did"
expect 2 "--row-dtype bf16 needs rows of an even number of floats: --embedding-dim 7 makes 7" $MPIRUN -np 1 "$TRAIN" --config configs/tiny.flags \
  --train "$dir/data/train.tsv" --row-dtype bf16 --embedding-dim 7
