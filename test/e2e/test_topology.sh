#!/usr/bin/env bash
# Topology independence: W = 4 workers as 1x4, 2x2 and 4x1 (ranks x workers) give eval
# logloss within 1e-6, identical key counts, and rows within 1e-5 relative, with a
# learning-rate schedule (warm-up, then cosine decay) that follows the global step; for
# element-wise Adagrad, row-wise Adagrad (whose run also resumes exactly from a mid-run
# checkpoint on another topology), lazy Adam and FTRL with L1 (whose zeroed rows
# strata-inspect summary counts); with workers of 2 threads (an OpenMP team each); and with the
# MLP's products in bf16. The final records' MPI bytes are at least their lower bound.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 30000 --eval-rows 5000 --cardinality 2000 --seed 7 >/dev/null
run() {  # NAME TOPOLOGY [flags...]
  local name=$1 topo=$2; shift 2
  run_logged "$dir/$name.log" "run $name" \
    $MPIRUN -np "${topo%x*}" "$TRAIN" --config configs/tiny.flags --workers-per-rank "${topo#*x}" --threads "${THREADS:-1}" --pass-examples 6000 \
    --warmup-steps 3 --lr-decay cosine --decay-start 5 --decay-steps 20 --end-lr 0.2 \
    --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv" \
    --metrics-out "$dir/$name.jsonl" --export-rows "$dir/rows-$name" "$@"
  echo "$name: logloss $(json_field "$dir/$name.jsonl" eval_logloss) keys $(json_field "$dir/$name.jsonl" keys)"
}
same_model() {  # A B TOLERANCE: equal keys and examples, eval logloss and rows within TOLERANCE
  /usr/bin/python3 - "$dir" "$1" "$2" "$3" <<'PY'
import json, sys
d, a, b, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
ra, rb = (json.loads(open(f"{d}/{n}.jsonl").read().splitlines()[-1]) for n in (a, b))
assert ra["keys"] == rb["keys"], (a, b, ra["keys"], rb["keys"])
assert ra["examples"] == rb["examples"], (a, b, ra["examples"], rb["examples"])
diff = abs(ra["eval_logloss"] - rb["eval_logloss"])
assert diff <= max(tol, 1e-6) if tol else diff == 0, (a, b, ra["eval_logloss"], rb["eval_logloss"])
print(f"{b} vs {a}: eval logloss {rb['eval_logloss']!r} (|diff| {diff:.3g}), bitwise {ra['eval_logloss'] == rb['eval_logloss']}")
PY
  /usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-$1" "$dir/rows-$2" "$3"
}
for opt in adagrad rowwise-adagrad adam ftrl; do
  flags=(--sparse-optimizer "$opt")
  [ "$opt" = ftrl ] && flags+=(--ftrl-l1 0.002 --ftrl-l2 0.01)  # L1 strong enough to zero rows
  checkpoints=(--checkpoint-dir "$dir/ck-$opt" --checkpoint-every-passes 1 --keep-checkpoints 10)
  run "$opt-1x4" 1x4 "${flags[@]}" "${checkpoints[@]}"
  for topo in 2x2 4x1; do run "$opt-$topo" "$topo" "${flags[@]}"; done
  same_model "$opt-1x4" "$opt-2x2" 1e-5
  same_model "$opt-1x4" "$opt-4x1" 1e-5
done
# Workers of 2 threads each run their products on an OpenMP team of 2: the same model (no
# product splits a sum over threads); with OMP_WAIT_POLICY unset, rank 0 says to set it.
(unset OMP_WAIT_POLICY; THREADS=8 run adagrad-1x4-teams 1x4 --sparse-optimizer adagrad)
same_model adagrad-1x4 adagrad-1x4-teams 1e-5
grep -q "OMP_WAIT_POLICY is not set: the MLP's products run on 2 OpenMP threads a worker" "$dir/adagrad-1x4-teams.log" \
  || die_with_log "$dir/adagrad-1x4-teams.log" "no notice of the unset OMP_WAIT_POLICY"
! grep -q "OMP_WAIT_POLICY is not set" "$dir/adagrad-1x4.log" || die "a notice of OMP_WAIT_POLICY with one thread a worker"
echo "ok: workers of 2 OpenMP threads train the same model, and the notice of the unset wait policy"
grep -q "rows of 44 B with rowwise-adagrad state" "$dir/rowwise-adagrad-1x4.log" \
  || die_with_log "$dir/rowwise-adagrad-1x4.log" "the start line does not report row-wise Adagrad's 44-byte rows (dim 8)"
second=$(ls -d "$dir"/ck-rowwise-adagrad/ckpt-* | sed -n 2p)
run rowwise-resumed 2x2 --sparse-optimizer rowwise-adagrad --resume="$second"
same_model rowwise-adagrad-1x4 rowwise-resumed 1e-5
expect 1 "cannot resume: --sparse-optimizer rowwise-adagrad in the checkpoint, adagrad now" \
  run refused 1x4 --resume="$second"
"$INSPECT" summary "$dir/ck-ftrl" >"$dir/ftrl-summary.txt" || die_with_log "$dir/ftrl-summary.txt" "summary failed"
zero=$(sed -n 's/^rows .* \([0-9][0-9]*\) with every weight 0$/\1/p' "$dir/ftrl-summary.txt")
[ "${zero:-0}" -gt 0 ] || die_with_log "$dir/ftrl-summary.txt" "FTRL's L1 left no row at exactly 0"
echo "ok: FTRL with L1: $zero rows with every weight exactly 0 (strata-inspect summary)"

# --dense-precision bf16: the MLP's products in bf16 stay topology independent (OnednnGemm
# splits no sum over threads); on a CPU without bf16 instructions the run says so and
# computes in fp32.
run bf16-1x4 1x4 --dense-precision bf16
run bf16-4x1 4x1 --dense-precision bf16
same_model bf16-1x4 bf16-4x1 1e-5
if grep -qw -e avx512_bf16 -e amx_bf16 /proc/cpuinfo; then
  grep -q "host backend with bf16 MLP products" "$dir/bf16-1x4.log" || die_with_log "$dir/bf16-1x4.log" "the start line does not report bf16 products"
  [ "$(json_field "$dir/bf16-1x4.jsonl" eval_logloss)" != "$(json_field "$dir/adagrad-1x4.jsonl" eval_logloss)" ] \
    || die "the bf16 run's eval logloss is fp32's: bf16 was not used"
  echo "ok: bf16 MLP products on 1x4 and 4x1"
else
  grep -q "the MLP computes in fp32" "$dir/bf16-1x4.log" || die_with_log "$dir/bf16-1x4.log" "no notice of the fp32 fallback"
  echo "ok: no bf16 instructions on this CPU: the notice, and fp32 on 1x4 and 4x1"
fi

# The final record's MPI bytes of training (every rank and communicator) are at least their
# lower bound, and both grow with the ranks.
/usr/bin/python3 - "$dir" <<'PY' || die "mpi_bytes_job and mpi_bytes_lower_bound are inconsistent"
import json, sys
final = {t: json.loads(open(f"{sys.argv[1]}/adagrad-{t}.jsonl").read().splitlines()[-1]) for t in ("1x4", "2x2", "4x1")}
for t, r in final.items():
    print(f"{t}: mpi_bytes_job {r['mpi_bytes_job']}, lower bound {r['mpi_bytes_lower_bound']}")
assert final["1x4"]["mpi_bytes_job"] == 0 and final["1x4"]["mpi_bytes_lower_bound"] == 0
assert 0 < final["2x2"]["mpi_bytes_lower_bound"] <= final["2x2"]["mpi_bytes_job"]
assert final["2x2"]["mpi_bytes_lower_bound"] < final["4x1"]["mpi_bytes_lower_bound"] <= final["4x1"]["mpi_bytes_job"]
PY
