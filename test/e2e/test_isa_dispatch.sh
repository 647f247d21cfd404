#!/usr/bin/env bash
# The optimizers' vector kernels (strata/model/update_kernels.h) chosen by the CPU: a run
# on each instruction set this CPU has (STRATA_ISA=baseline, avx2, avx512, avx512bf16)
# trains bitwise the same model, for sparse Adagrad with dense Adam, on 2 ranks, with the
# MLP's products in bf16 where the CPU has them (the sets round their operands alike); the
# start line names the set in use.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 20000 --eval-rows 4000 --cardinality 2000 --seed 5 >/dev/null
isas=(baseline)
grep -qw avx2 /proc/cpuinfo && isas+=(avx2)
avx512=0
grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && avx512=1
[ "$avx512" = 1 ] && isas+=(avx512)
precision=fp32
if [ "$avx512" = 1 ] && grep -qw avx512_bf16 /proc/cpuinfo; then
  isas+=(avx512bf16)
  precision=bf16
fi
for isa in "${isas[@]}"; do
  STRATA_ISA=$isa run_logged "$dir/$isa.log" "run on $isa" \
    $MPIRUN -np 2 "$TRAIN" --config configs/tiny.flags --threads 1 --pass-examples 5000 \
    --sparse-optimizer adagrad --dense-optimizer adam --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv" \
    --dense-precision "$precision" --metrics-out "$dir/$isa.jsonl" --export-rows "$dir/rows-$isa"
  grep -q "threads/rank, $isa kernels" "$dir/$isa.log" || die_with_log "$dir/$isa.log" "the start line does not name $isa kernels"
  echo "$isa: eval logloss $(json_field "$dir/$isa.jsonl" eval_logloss)"
done
for isa in "${isas[@]:1}"; do
  [ "$(json_field "$dir/$isa.jsonl" eval_logloss)" = "$(json_field "$dir/baseline.jsonl" eval_logloss)" ] \
    || die "eval logloss on $isa differs from the baseline's"
  /usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-baseline" "$dir/rows-$isa" 0 \
    || die "rows trained on $isa differ from the baseline's"
done
echo "ok: ${isas[*]}: the same model bit for bit (MLP products in $precision)"
