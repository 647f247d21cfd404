#!/usr/bin/env bash
# The command line wins over --config; --help lists every flag with its default; a .gz copy
# of the input, and a directory of its part files, train to bit-identical metrics, with
# either --worker-input; the JSONL ends with the final record.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 8000 --eval-rows 2000 --seed 5 >/dev/null
gzip -k "$dir/data/train.tsv"
help=$($MPIRUN -np 1 "$TRAIN" --help)
for flag in train eval format workers-per-rank threads batch-size pass-examples epochs embedding-dim mlp \
            sparse-optimizer dense-optimizer lr-sparse lr-dense seed metrics-out config max-bad-rows device; do
  grep -q -- "--$flag" <<<"$help" || die "--help lacks --$flag"
done
grep -q "default: 512,256,128" <<<"$help" || die "--help lacks the --mlp default"
{ cat configs/tiny.flags; printf 'batch-size = 128\n--epochs 3  # overridden\n'; } >"$dir/run.flags"
$MPIRUN -np 2 "$TRAIN" --config "$dir/run.flags" --epochs 1 \
  --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv" --metrics-out "$dir/plain.jsonl" >/dev/null
$MPIRUN -np 2 "$TRAIN" --config configs/tiny.flags --batch-size 128 \
  --train "$dir/data/train.tsv.gz" --eval "$dir/data/eval.tsv" --metrics-out "$dir/gz.jsonl" >/dev/null
[ "$(json_field "$dir/plain.jsonl" type)" = final ] || die "last record is not final"
a=$(json_field "$dir/plain.jsonl" eval_logloss); b=$(json_field "$dir/gz.jsonl" eval_logloss)
[ "$a" = "$b" ] || die "plain $a vs gz $b"
steps=$(json_field "$dir/plain.jsonl" steps)
[ "$steps" -eq $(( (8000 + 255) / 256 )) ] || die "steps $steps: config epochs 3 should lose to --epochs 1"
echo "plain and gz agree bitwise: $a; $steps steps"

# --worker-input parts: each worker one contiguous part, on a plain file as on its .gz; a
# model other than the stripes' on 2 workers, the same on one.
for input in train.tsv train.tsv.gz; do
  $MPIRUN -np 2 "$TRAIN" --config configs/tiny.flags --batch-size 128 --worker-input parts \
    --train "$dir/data/$input" --eval "$dir/data/eval.tsv" --metrics-out "$dir/parts-$input.jsonl" >/dev/null
done
p=$(json_field "$dir/parts-train.tsv.jsonl" eval_logloss)
[ "$p" = "$(json_field "$dir/parts-train.tsv.gz.jsonl" eval_logloss)" ] || die "--worker-input parts: plain and gz differ"
[ "$p" != "$a" ] || die "--worker-input parts trained the stripes' model"
for split in stripes parts; do
  $MPIRUN -np 1 "$TRAIN" --config configs/tiny.flags --batch-size 128 --worker-input $split \
    --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv" --metrics-out "$dir/one-$split.jsonl" >/dev/null
done
[ "$(json_field "$dir/one-stripes.jsonl" eval_logloss)" = "$(json_field "$dir/one-parts.jsonl" eval_logloss)" ] \
  || die "one worker: --worker-input parts and stripes differ"
echo "--worker-input parts: plain and gz agree bitwise ($p), unlike stripes on 2 workers; alike on one"

# A directory as Spark writes one (part files beside _SUCCESS and .crc files) trains as its
# part files named in order; the split of the rows between files does not change the model.
mkdir -p "$dir/parts"
split -l 3000 -d -a 5 "$dir/data/train.tsv" "$dir/parts/part-"
head -5 "$dir/data/train.tsv" >"$dir/parts/_SUCCESS"  # rows, so that reading them would show
head -5 "$dir/data/train.tsv" >"$dir/parts/.part-00000.crc"
$MPIRUN -np 2 "$TRAIN" --config configs/tiny.flags --batch-size 128 \
  --train "$dir/parts" --eval "$dir/data/eval.tsv" --metrics-out "$dir/dir.jsonl" >/dev/null
c=$(json_field "$dir/dir.jsonl" eval_logloss)
[ "$a" = "$c" ] || die "a directory of part files: eval logloss $c, the file's $a"
echo "a directory of part files trains bitwise as the file: $c"

# --worker-input files: file k, whole, to worker k mod W, plain as gzip; a model other than
# the stripes'; a resume from a checkpoint in the middle ends bitwise alike; fewer files
# than workers is refused, naming the flag.
mkdir -p "$dir/gzparts"
for f in "$dir"/parts/part-*; do gzip -c "$f" >"$dir/gzparts/$(basename "$f").gz"; done
files_run() {  # input name [flags...]
  local input=$1 name=$2; shift 2
  $MPIRUN -np 2 "$TRAIN" --config configs/tiny.flags --batch-size 128 --worker-input files --pass-examples 2000 \
    --train "$dir/$input" --eval "$dir/data/eval.tsv" --metrics-out "$dir/files-$name.jsonl" "$@" >"$dir/files-$name.log"
}
files_run parts parts
files_run gzparts gzparts --checkpoint-dir "$dir/ck-files" --checkpoint-every-passes 1 --keep-checkpoints 9
files_run gzparts resumed --checkpoint-dir "$dir/ck-files" --resume="$dir/ck-files/ckpt-00000002"
grep -q "whole files dealt out in turn: 1 to 2 a worker" "$dir/files-gzparts.log" || die "start line lacks the files split"
f=$(json_field "$dir/files-parts.jsonl" eval_logloss)
[ "$f" = "$(json_field "$dir/files-gzparts.jsonl" eval_logloss)" ] || die "--worker-input files: plain and gz differ"
[ "$f" = "$(json_field "$dir/files-resumed.jsonl" eval_logloss)" ] || die "--worker-input files: the resumed run differs"
[ "$f" != "$a" ] || die "--worker-input files trained the stripes' model"
if $MPIRUN -np 4 "$TRAIN" --config configs/tiny.flags --worker-input files --train "$dir/gzparts" \
     >"$dir/few.log" 2>&1; then
  die "3 files for 4 workers were accepted"
fi
grep -q -- "--worker-input files: 3 training files for 4 workers" "$dir/few.log" || { cat "$dir/few.log"; die "no message naming the flag"; }
echo "--worker-input files: plain and gz part files, and a resumed run, agree bitwise ($f); 3 files for 4 workers refused"
