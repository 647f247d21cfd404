#!/usr/bin/env bash
# The CUDA backend end to end (skipped where no GPU is visible or the build has no CUDA):
# (a) --device cuda reaches --device cpu's eval logloss within 1e-4, on one rank and on two
#     ranks (sharing the GPU where there is one), with --model dcn, wdl, dlrm and deepfm,
#     and with row-wise Adagrad;
# (b) lossless tiering on CUDA: a cache too small for the job over the SSD-PS, and the
#     pipeline off, give bitwise the eval logloss and rows of the all-in-DRAM run;
# (c) exact resume on CUDA: resumed from its second checkpoint, a run ends bitwise equal;
# (d) G=2 workers sharing one GPU (--cuda-devices 0,0) end bitwise as 2 ranks x 1 worker do,
#     and the start-up line says where each rank's workers train.
# (e) the rows of a one-step run agree with the host backend's to 1e-4 relative (the sparse
#     update is bitwise the same function; the gradients come from cuBLAS, not OpenBLAS).
# (f) a step's sums over NCCL (--collectives auto, the CUDA default: dense gradients on the
#     GPUs, sparse records between ranks) end bitwise as those over MPI (--collectives mpi),
#     with 2 ranks of 1 worker and 3 ranks of 2 workers (every rank on the one GPU of a
#     one-GPU machine, connected over sockets), and 3 x 2 ends as 6 x 1 does; the steps'
#     bytes are counted as NCCL's, not MPI's; a failure in one rank's dense sum ends the
#     job with exit 1 and its message.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
nvidia-smi -L >/dev/null 2>&1 || skip "no CUDA device visible"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 40000 --eval-rows 4000 --cardinality 5000 --seed 11 >/dev/null
common=(--config configs/tiny.flags --eval "$dir/data/eval.tsv" --threads 1)
# run NAME NP FLAGS...: a run on the train file (TRAIN_FILE to change it), 8000 examples a
# pass; a run that hangs fails after 5 minutes.
run() {
  local name=$1 np=$2; shift 2
  run_logged "$dir/$name.log" "run $name" timeout -k 5 300 $MPIRUN -np "$np" "$TRAIN" "${common[@]}" \
    --train "${TRAIN_FILE:-$dir/data/train.tsv}" --pass-examples "${PASS_EXAMPLES:-8000}" \
    --metrics-out "$dir/$name.jsonl" --export-rows "$dir/rows-$name" --ssd-dir "$dir/ssd-$name" "$@"
  echo "$name: eval logloss $(json_field "$dir/$name.jsonl" eval_logloss)"
}
close() {  # close A B: eval loglosses of runs A and B within 1e-4
  "$PY3" -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(abs(a - b) > 1e-4)' \
    "$(json_field "$dir/$1.jsonl" eval_logloss)" "$(json_field "$dir/$2.jsonl" eval_logloss)" \
    || die "$1's eval logloss is not within 1e-4 of $2's"
  echo "ok: $1 within 1e-4 of $2"
}

# The first CUDA run also tells whether this build has CUDA at all.
if ! $MPIRUN -np 1 "$TRAIN" "${common[@]}" --train "$dir/data/train.tsv" --pass-examples 8000 \
    --metrics-out "$dir/cuda.jsonl" --export-rows "$dir/rows-cuda" \
    --ssd-dir "$dir/ssd-cuda" --device cuda --mem-cache-gb 1 >"$dir/cuda.log" 2>&1; then
  grep -q "built without CUDA" "$dir/cuda.log" && skip "strata-train was built without CUDA"
  die_with_log "$dir/cuda.log" "run cuda failed"
fi
echo "cuda: eval logloss $(json_field "$dir/cuda.jsonl" eval_logloss)"

# (a)
run cpu 1 --device cpu --mem-cache-gb 1
close cuda cpu
run cpu-2 2 --device cpu --mem-cache-gb 1
run cuda-2 2 --device cuda --mem-cache-gb 1
close cuda-2 cpu-2
run cpu-dcn 1 --device cpu --mem-cache-gb 1 --model dcn --cross-layers 2
run cuda-dcn 1 --device cuda --mem-cache-gb 1 --model dcn --cross-layers 2
close cuda-dcn cpu-dcn
# wdl with FTRL and dlrm take SGD for the dense parameters: with Adam these runs amplify
# rounding (Adam normalizes gradients near zero, and FTRL's rows start at zero). The CPU
# backend alone, with only its product kernels changed (ONEDNN_MAX_CPU_ISA=AVX2), moves
# dlrm's eval logloss by 2.3e-3 with Adam and by 1.1e-8 with SGD, and wdl+FTRL's by 4.3e-4
# with Adam and by 1.5e-9 with SGD.
run cpu-wdl 1 --device cpu --mem-cache-gb 1 --model wdl --sparse-optimizer ftrl --dense-optimizer sgd
run cuda-wdl 1 --device cuda --mem-cache-gb 1 --model wdl --sparse-optimizer ftrl --dense-optimizer sgd
close cuda-wdl cpu-wdl
run cpu-dlrm 1 --device cpu --mem-cache-gb 1 --model dlrm --bottom-mlp 16 --dense-optimizer sgd
run cuda-dlrm 1 --device cuda --mem-cache-gb 1 --model dlrm --bottom-mlp 16 --dense-optimizer sgd
close cuda-dlrm cpu-dlrm
run cpu-deepfm 1 --device cpu --mem-cache-gb 1 --model deepfm
run cuda-deepfm 1 --device cuda --mem-cache-gb 1 --model deepfm
close cuda-deepfm cpu-deepfm
run cpu-rowwise 1 --device cpu --mem-cache-gb 1 --sparse-optimizer rowwise-adagrad
run cuda-rowwise 1 --device cuda --mem-cache-gb 1 --sparse-optimizer rowwise-adagrad
close cuda-rowwise cpu-rowwise

# (b)
run cuda-small 1 --device cuda --mem-cache-gb 0.0028
same_run "$dir" cuda cuda-small
run cuda-serial 1 --device cuda --mem-cache-gb 0.0028 --pipeline off
same_run "$dir" cuda cuda-serial
echo "ok: lossless tiering on CUDA"

# (c)
run cuda-ck 1 --device cuda --mem-cache-gb 1 --checkpoint-dir "$dir/ck" --checkpoint-every-passes 1 \
  --keep-checkpoints 10
same_run "$dir" cuda cuda-ck
run cuda-resumed 1 --device cuda --mem-cache-gb 1 --resume="$dir/ck/ckpt-00000002"
same_run "$dir" cuda cuda-resumed
echo "ok: exact resume on CUDA"

# (d)
run cuda-1x2 1 --device cuda --mem-cache-gb 1 --workers-per-rank 2 --cuda-devices 0,0
same_run "$dir" cuda-2 cuda-1x2
grep -q "rank 0 trains on GPU 0, GPU 0 (shared)" "$dir/cuda-1x2.log" || die_with_log "$dir/cuda-1x2.log" "no device line"
echo "ok: two workers sharing a GPU train as two ranks do"

# (e) one batch of 256 examples: one step.
head -256 "$dir/data/train.tsv" >"$dir/data/one-step.tsv"
for d in cpu cuda; do
  TRAIN_FILE=$dir/data/one-step.tsv PASS_EXAMPLES=256 run "step-$d" 1 --device "$d"
done
"$PY3" test/e2e/compare_rows.py "$dir/rows-step-cpu" "$dir/rows-step-cuda" 1e-4 || {
  "$PY3" - "$dir/rows-step-cpu" "$dir/rows-step-cuda" <<'PY'
import glob, sys
def load(d):
    return {l.split("\t")[0]: l.rstrip("\n") for p in glob.glob(d + "/rows-*.tsv") for l in open(p)}
a, b = load(sys.argv[1]), load(sys.argv[2])
diff = [k for k in a if a[k] != b[k]]
print(len(diff), "rows differ; the first three, cpu then cuda:")
for k in diff[:3]:
    print(a[k]); print(b[k])
PY
  die "one-step rows differ by more than 1e-4"
}
echo "ok: one-step rows within 1e-4 of the host backend's"

# (f)
grep -q "a step's sums over NCCL (2 ranks x 1 workers)" "$dir/cuda-2.log" \
  || die_with_log "$dir/cuda-2.log" "no NCCL line"
run cuda-2-mpi 2 --device cuda --mem-cache-gb 1 --collectives mpi
same_run "$dir" cuda-2 cuda-2-mpi
# The steps' bytes left MPI for NCCL; the lower bound is the same either way.
"$PY3" - "$dir/cuda-2.jsonl" "$dir/cuda-2-mpi.jsonl" <<'PY' || die "the NCCL run's byte counts are wrong"
import json, sys
nccl, mpi = (json.loads(open(p).read().splitlines()[-1]) for p in sys.argv[1:])
print("bytes (nccl run, mpi run): mpi", nccl["mpi_bytes_job"], mpi["mpi_bytes_job"], "nccl", nccl["nccl_bytes_job"],
      mpi["nccl_bytes_job"], "lower bound", nccl["mpi_bytes_lower_bound"], mpi["mpi_bytes_lower_bound"])
sys.exit(not (nccl["nccl_bytes_job"] > 0 and mpi["nccl_bytes_job"] == 0 and nccl["mpi_bytes_job"] < mpi["mpi_bytes_job"]
              and nccl["mpi_bytes_lower_bound"] == mpi["mpi_bytes_lower_bound"]))
PY
run cuda-3x2 3 --device cuda --mem-cache-gb 1 --workers-per-rank 2 --cuda-devices 0,0
run cuda-3x2-mpi 3 --device cuda --mem-cache-gb 1 --workers-per-rank 2 --cuda-devices 0,0 --collectives mpi
same_run "$dir" cuda-3x2 cuda-3x2-mpi
run cuda-6 6 --device cuda --mem-cache-gb 1 --cuda-devices 0
same_run "$dir" cuda-3x2 cuda-6
echo "ok: a step's sums over NCCL equal those over MPI, bitwise, for 2 x 1, 3 x 2 and 6 x 1"
rc=0
STRATA_FAIL_AT=dense-sum:1 timeout -k 5 120 $MPIRUN -x STRATA_FAIL_AT -np 2 "$TRAIN" "${common[@]}" \
  --train "$dir/data/train.tsv" --pass-examples 8000 --ssd-dir "$dir/ssd-fail" --device cuda \
  --mem-cache-gb 1 >"$dir/fail.log" 2>&1 || rc=$?
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || die_with_log "$dir/fail.log" "a failed dense sum: the job hung"
[ "$rc" -ne 0 ] || die_with_log "$dir/fail.log" "a failed dense sum: exit 0"
grep -q "rank 1: fatal: dense gradient sum on the devices: .*injected failure at dense-sum on rank 1" "$dir/fail.log" \
  || die_with_log "$dir/fail.log" "a failed dense sum: no message naming it"
echo "ok: a failed dense sum on rank 1 ends the job (exit $rc) with its message"
