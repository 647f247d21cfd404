#!/usr/bin/env bash
# --model deepfm (the MLP's logit plus the FM term over the slots' embeddings), dcn (DCN-v2
# cross layers before the MLP, full and low rank), dlrm (bottom MLP, dot interaction) and wdl
# (a wide weight a key in its row): 1x4, 4x1, the pipeline off (deepfm) and a small cache
# over the SSD-PS give bitwise the same eval logloss and rows; a resume on another topology
# is bitwise the uninterrupted run, and a resume with another --model (or cross shape, or
# bottom MLP) is refused naming the flag; strata-predict scores as the trainer evaluated and
# strata_torch.py agrees; strata-inspect names the model. (Each model on the CUDA backend:
# test_gpu.sh.)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 24000 --eval-rows 4000 --cardinality 20000 --seed 13 >/dev/null
run() {  # NAME TOPOLOGY [flags...]
  run_topology "$dir" "$1" "$2" --pass-examples 6000 --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv" "${@:3}"
}
run dnn 1x4
run deepfm 1x4 --model deepfm --checkpoint-dir "$dir/ck" --checkpoint-every-passes 1 --keep-checkpoints 10
grep -q "(deepfm model, host backend" "$dir/deepfm.log" || die_with_log "$dir/deepfm.log" "the start line does not name the deepfm model"
[ "$(json_field "$dir/deepfm.jsonl" eval_logloss)" != "$(json_field "$dir/dnn.jsonl" eval_logloss)" ] \
  || die "deepfm's eval logloss is dnn's: the FM term was not used"
for spec in "4x1:4x1" "no-pipeline:2x2 --pipeline off" \
            "small-cache:2x2 --mem-cache-gb 0.0002 --ssd-dir $dir/ssd --ssd-segment-mb 1"; do
  run "deepfm-${spec%%:*}" ${spec#*:} --model deepfm
  same_run "$dir" deepfm "deepfm-${spec%%:*}"
done
run resumed 2x2 --model deepfm --resume="$dir/ck/ckpt-00000002"
same_run "$dir" deepfm resumed
expect 1 "cannot resume: --model deepfm in the checkpoint, dnn now" \
  run refused 2x2 --resume="$dir/ck/ckpt-00000002"
scores_as_trained "$dir/ck" "$dir/data/eval.tsv" "$dir/deepfm.jsonl"
echo "ok: strata-predict and strata_torch.py score the deepfm model as the trainer did"
"$INSPECT" summary "$dir/ck" | grep -q "^model        deepfm:" || die "strata-inspect summary does not name the deepfm model"

# check_model NAME FLAGS...: NAME on 1x4 (checkpointed every pass), 4x1 and 2x2 over a small
# cache, and resumed on 2x2 from its second checkpoint: bitwise the same; strata-predict and
# strata_torch.py score its checkpoint as the trainer evaluated.
check_model() {
  local name=$1; shift
  run "$name" 1x4 "$@" --checkpoint-dir "$dir/ck-$name" --checkpoint-every-passes 1 --keep-checkpoints 10
  run "$name-4x1" 4x1 "$@"
  same_run "$dir" "$name" "$name-4x1"
  run "$name-small-cache" 2x2 "$@" --mem-cache-gb 0.0002 --ssd-dir "$dir/ssd-$name" --ssd-segment-mb 1
  same_run "$dir" "$name" "$name-small-cache"
  run "$name-resumed" 2x2 "$@" --resume="$dir/ck-$name/ckpt-00000002"
  same_run "$dir" "$name" "$name-resumed"
  scores_as_trained "$dir/ck-$name" "$dir/data/eval.tsv" "$dir/$name.jsonl"
  echo "ok: $name: topology independent, through a small cache, resumable, scored alike by strata-predict and strata_torch.py"
}

# --model dcn: DCN-v2 cross layers before the MLP, full rank and low rank (--cross-rank).
check_model dcn --model dcn --cross-layers 2
expect 1 "cannot resume: --cross-layers 2 in the checkpoint, 3 now" \
  run dcn-refused 2x2 --model dcn --resume="$dir/ck-dcn/ckpt-00000002"
check_model dcn-low --model dcn --cross-layers 2 --cross-rank 4
"$INSPECT" summary "$dir/ck-dcn-low" | grep -q "cross/1/u  *(221, 4)" || die "strata-inspect summary lacks the low-rank cross tensors"

# --model dlrm: a bottom MLP of the dense features and the dot interaction before the MLP.
check_model dlrm --model dlrm --bottom-mlp 16
expect 1 "cannot resume: --bottom-mlp 16 in the checkpoint, 512,256,64 now" \
  run dlrm-refused 2x2 --model dlrm --resume="$dir/ck-dlrm/ckpt-00000002"
"$INSPECT" summary "$dir/ck-dlrm" | grep -q "bottom/1/weight  *(16, 8)" || die "strata-inspect summary lacks the bottom MLP"

# --model wdl: a wide weight a key, after its embedding in the row (dim 8: rows of 80 B, not 72).
check_model wdl --model wdl
grep -q "rows of 80 B with adagrad state" "$dir/wdl.log" || die_with_log "$dir/wdl.log" "wdl's rows are not 80 bytes"
