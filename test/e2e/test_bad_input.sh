#!/usr/bin/env bash
# Bad input gets a clear message naming the file, line or flag and a nonzero exit:
# malformed rows, an empty file or one without an example, a missing file, bad flags, a
# config with an unknown key, a truncated .gz or one with trailing bytes, unwritable output
# directories, a diverging run, a dense model that does not fit in memory.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 2000 --eval-rows 500 --seed 3 >/dev/null || die "datagen"
good="$dir/data/train.tsv"

run1() { $MPIRUN -np 1 "$TRAIN" --config configs/tiny.flags "$@"; }
run2() { $MPIRUN -np 2 "$TRAIN" --config configs/tiny.flags "$@"; }

# Malformed rows: line 3 has too few columns, line 5 a non-numeric integer, line 7 label 2.
{ head -2 "$good"; printf '1\t2\t3\n'; sed -n 3p "$good"
  sed -n 4p "$good" | awk -F'\t' 'BEGIN{OFS="\t"}{$3="x7"; print}'; sed -n 5p "$good"
  sed -n 6p "$good" | awk -F'\t' 'BEGIN{OFS="\t"}{$1="2"; print}'; sed -n '7,400p' "$good"; } >"$dir/bad.tsv"
expect 1 "bad.tsv:3: .*column" run2 --train "$dir/bad.tsv" --max-bad-rows 0
expect 0 "bad.tsv:5: " run2 --train "$dir/bad.tsv" --max-bad-rows 10
expect 0 "bad.tsv:7: .*label" run1 --train "$dir/bad.tsv" --max-bad-rows 10
# An empty file, a missing file, a glob that matches nothing.
: >"$dir/empty.tsv"
expect 1 "no examples.*empty.tsv" run2 --train "$dir/empty.tsv"
# Lines but not one example (blank lines, or only rows skipped as malformed) fail the job
# as an empty file does, in training and in evaluation (after the training's checkpoint).
printf '\n\n\n' >"$dir/blank.tsv"
printf '1\t2\t3\n' >"$dir/one-bad.tsv"
expect 1 "no examples in .*blank.tsv: 3 lines read, each blank or a malformed row" run2 --train "$dir/blank.tsv"
expect 1 "no examples in .*one-bad.tsv: 1 line read" run1 --train "$dir/one-bad.tsv"
expect 1 "no examples in .*one-bad.tsv" run2 --train "$good" --eval "$dir/one-bad.tsv" --checkpoint-dir "$dir/ckpt-bad-eval"
ls "$dir/ckpt-bad-eval" | grep -q . || die "the checkpoint of a run whose evaluation found no examples is missing"
# An eval set of one class is no error, but its AUC is undefined: a note says why, once.
awk -F'\t' 'BEGIN {OFS = "\t"} {$1 = "0"; print}' "$dir/data/eval.tsv" >"$dir/no-clicks.tsv"
expect 0 "note: the eval AUC is undefined: all 500 eval examples are non-clicks" \
  run2 --train "$good" --eval "$dir/no-clicks.tsv" --eval-every-passes 1 --pass-examples 500
[ "$(run2 --train "$good" --eval "$dir/no-clicks.tsv" --eval-every-passes 1 --pass-examples 500 2>&1 | grep -c "AUC is undefined")" = 1 ] \
  || die "the note on an eval set of one class is not printed exactly once"
expect 1 "missing.tsv" run2 --train "$dir/missing.tsv"
expect 1 "nothing-\*.tsv" run2 --train "$dir/nothing-*.tsv"
expect 1 "missing-eval.tsv" run1 --train "$good" --eval "$dir/missing-eval.tsv"
# Bad flags: unknown, a non-number, out of range, an unknown choice, --train missing.
expect 2 "no-such-flag" run1 --train "$good" --no-such-flag 3
expect 2 "\-\-batch-size.*abc" run1 --train "$good" --batch-size abc
expect 2 "\-\-epochs must be positive" run1 --train "$good" --epochs 0
expect 2 "\-\-prefetch-passes must be at most 16" run1 --train "$good" --prefetch-passes 17
expect 2 "\-\-sparse-optimizer.*rmsprop" run1 --train "$good" --sparse-optimizer rmsprop
expect 2 "\-\-ssd-io: 'dma' is not direct or buffered" run1 --train "$good" --ssd-io dma
expect 2 "\-\-mlp" run1 --train "$good" --mlp 64,,x
expect 2 "\-\-train is required" $MPIRUN -np 1 "$TRAIN"
expect 1 "\-\-collectives nccl is for the CUDA backend" run1 --train "$good" --collectives nccl --device cpu
# A config file with an unknown key names the file and line.
printf '# comment\nbatch-size 64\nlearning-rate 0.1\n' >"$dir/bad.flags"
expect 2 "bad.flags:3: unknown flag --learning-rate" run1 --train "$good" --config "$dir/bad.flags"
expect 2 "cannot open .*nope.flags" run1 --train "$good" --config "$dir/nope.flags"
# A truncated gzip input names the file (it is not taken for a shorter one).
gzip -c "$good" | head -c 100000 >"$dir/cut.tsv.gz"
expect 1 "cut.tsv.gz: truncated gzip data" run2 --train "$dir/cut.tsv.gz"
# Bytes after the gzip stream (a damaged or partly overwritten file) are refused too.
{ gzip -c "$good"; printf 'junk'; } >"$dir/tail.tsv.gz"
expect 1 "tail.tsv.gz: data after the end of the gzip stream" run2 --train "$dir/tail.tsv.gz"
# Output directories that cannot be written fail the job before its first pass.
: >"$dir/a-file"
for flag in --checkpoint-dir --export-rows --export-delta-dir; do
  extra=(); [ "$flag" = --export-delta-dir ] && extra=(--checkpoint-dir "$dir/ckpt")
  expect 1 "\\$flag .*a-file/out: cannot create the directory" run2 --train "$good" "${extra[@]}" "$flag" "$dir/a-file/out"
  run2 --train "$good" "${extra[@]}" "$flag" "$dir/a-file/out" 2>&1 | grep -q "^pass" && die "$flag: a pass ran before the check"
done
# A diverging run stops at the pass whose loss is not finite, on every rank.
expect 1 "training diverged in pass 0: its train logloss is .*nan" run2 --train "$good" --eval "$dir/data/eval.tsv" --lr-dense 1e38
# A dense model larger than the node is refused by the memory plan before setup (exit 2,
# naming --mlp); one of about 4 GB, within the plan but not within the address-space
# limit, ends every rank within seconds with one line per rank (not an uncaught
# std::bad_alloc's abort).
expect 2 "its largest part is dense model.*lower --mlp" run2 --train "$good" --mlp 100000,100000
limited() { (ulimit -v 4000000; "$@"); }
expect 1 "rank [01]: fatal: out of memory .*lower --pass-examples|more than this machine's" \
  limited run2 --train "$good" --mlp 14000,14000
# A huge bad field is quoted by its start and length, not echoed whole.
/usr/bin/python3 -c "
import sys
rows = open(sys.argv[1]).read().splitlines()[:50]
fields = rows[3].split('\t'); fields[2] = 'x' * 1000000; rows[3] = '\t'.join(fields)
open(sys.argv[2], 'w').write('\n'.join(rows) + '\n')" "$good" "$dir/huge.tsv"
out=$(run1 --train "$dir/huge.tsv" --max-bad-rows 0 2>&1) && die "a run with a bad row and --max-bad-rows 0 passed"
grep -q "huge.tsv:4: .*'xxxx*\.\.\.' (1000000 bytes)" <<<"$out" || die "the bad field is not quoted by its start and length: ${out:0:500}"
[ "${#out}" -lt 20000 ] || die "a 1 MB bad field made ${#out} bytes of output"
echo "ok: a 1 MB bad field is quoted in ${#out} bytes of output"
# A bare `resume` line in a config file means what --resume alone does.
printf 'resume\n' >"$dir/resume.flags"
expect 1 "neither a checkpoint .*nor a checkpoint directory" run1 --train "$good" --config "$dir/resume.flags" --checkpoint-dir "$dir/no-ckpt"
