#!/usr/bin/env bash
# `make bench`: CPU benchmarks of the built tree ($BUILD). Each section is one function that
# prints its own table and records its headline ratios with summary_add; the run ends with a
# summary block of every ratio. Timings are medians of $BENCH_RUNS runs (default 3).
#
# Sections:
#   trainer_vs_torch  strata-train (1 and 2 ranks) against tools/bench/torch_reference.py at
#                     PyTorch's best thread setting, on the same synthetic data and model, and
#                     against the MLP compute ceiling measured by $BUILD/bench/mlp_bench
#   criteo_auc        eval AUC of strata-train and of the PyTorch reference on the real Criteo
#                     sample split 90/10 in file order (skipped when the sample is absent)
#
# Knobs (environment): BENCH_RUNS, BENCH_TRAIN_ROWS, BENCH_CARDINALITY, BENCH_SECTIONS (names
# to run, space-separated; default all).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
source test/e2e/lib.sh
PY=/usr/bin/python3
TORCH_REF=tools/bench/torch_reference.py
RUNS=${BENCH_RUNS:-3}
WORK=$(scratch); trap 'rm -rf "$WORK"' EXIT
SUMMARY=()

# ---- helpers ----------------------------------------------------------------------------------

summary_add() { SUMMARY+=("$(printf '%-58s %s' "$1" "$2")"); }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }
# torch_field LOG KEY: KEY=value from the reference's final "torch_reference:" line.
torch_field() { grep '^torch_reference:' "$1" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# run_strata NP LOG METRICS strata-train-flags...: one run; dies with its log on failure.
run_strata() {
  local np=$1 log=$2 metrics=$3; shift 3
  $MPIRUN -np "$np" "$TRAIN" "$@" --metrics-out "$metrics" >"$log" 2>&1 \
    || { tail -20 "$log" >&2; die "strata-train -np $np failed (log above)"; }
}

# run_torch LOG torch_reference-flags...: one run; dies with its log on failure.
run_torch() {
  local log=$1; shift
  "$PY" "$TORCH_REF" "$@" >"$log" 2>&1 || { tail -20 "$log" >&2; die "torch_reference failed"; }
  [ -n "$(torch_field "$log" examples_per_s)" ] || die "no result line in $log"
}

# ---- section: trainer vs PyTorch --------------------------------------------------------------

section_trainer_vs_torch() {
  echo "== trainer vs PyTorch: synthetic Criteo-shaped data, dim 16, MLP 512-256-128, global batch 4096"
  local data=$WORK/synthetic rows=${BENCH_TRAIN_ROWS:-200000}
  "$DATAGEN" --out-dir "$data" --train-rows "$rows" --eval-rows 20000 \
    --cardinality "${BENCH_CARDINALITY:-50000}" --seed 11 | sed 's/^/  datagen: /'
  local model=(--embedding-dim 16 --mlp 512,256,128 --epochs 1 --sparse-optimizer adagrad
               --dense-optimizer adam --lr-sparse 0.05 --lr-dense 0.001)
  local io=(--train "$data/train.tsv" --eval "$data/eval.tsv")

  # strata: 1 rank x 1 worker using both cores; 2 ranks x 1 worker x 1 thread with the
  # per-worker batch halved, so both run the same global steps of 4096 examples as PyTorch.
  local -A eps=()
  local cfg name np threads batch r v
  for cfg in "strata 1 rank:1:2:4096" "strata 2 ranks:2:1:2048"; do
    IFS=: read -r name np threads batch <<<"$cfg"
    v=()
    for r in $(seq "$RUNS"); do
      run_strata "$np" "$WORK/s.log" "$WORK/s.jsonl" "${model[@]}" "${io[@]}" \
        --threads "$threads" --batch-size "$batch" --pass-examples 4194304
      v+=("$(json_field "$WORK/s.jsonl" examples_per_s)")
    done
    eps[$name]=$(median "${v[@]}")
    printf '  %-34s %9.0f examples/s  (runs: %s)\n' "$name" "${eps[$name]}" "$(printf '%.0f ' "${v[@]}")"
  done

  # PyTorch: its two good settings on a 2-core machine; its default (2 threads, spinning
  # OpenMP pool) is slower because the pool and the BLAS threads fight.
  local policy
  for cfg in "torch 1 thread:1:" "torch 2 threads PASSIVE:2:PASSIVE"; do
    IFS=: read -r name threads policy <<<"$cfg"
    v=()
    for r in $(seq "$RUNS"); do
      run_torch "$WORK/t.log" "${model[@]}" "${io[@]}" --batch-size 4096 --threads "$threads" \
        ${policy:+--omp-wait-policy "$policy"}
      v+=("$(torch_field "$WORK/t.log" examples_per_s)")
    done
    eps[$name]=$(median "${v[@]}")
    printf '  %-34s %9.0f examples/s  (runs: %s)\n' "$name" "${eps[$name]}" "$(printf '%.0f ' "${v[@]}")"
  done

  # MLP ceiling: the SGEMM rate of this machine over the model's FLOPs per example.
  "$BUILD/bench/mlp_bench" --batch 4096 --mlp 512,256,128 >"$WORK/mlp.log" \
    || die "mlp_bench failed"
  sed 's/^/  mlp_bench: /' "$WORK/mlp.log"
  local ceiling
  ceiling=$(sed -n 's/.*| ceiling \([0-9.]*\) examples\/s.*/\1/p' "$WORK/mlp.log" | sort -g | tail -1)
  [ -n "$ceiling" ] || die "could not read the ceiling from mlp_bench's output"

  local strata_best torch_best
  strata_best=$(printf '%s\n' "${eps[strata 1 rank]}" "${eps[strata 2 ranks]}" | sort -g | tail -1)
  torch_best=$(printf '%s\n' "${eps[torch 1 thread]}" "${eps[torch 2 threads PASSIVE]}" | sort -g | tail -1)
  printf '  %-34s %9.0f examples/s\n' "strata best" "$strata_best" "torch best" "$torch_best" \
    "MLP ceiling (best SGEMM rate)" "$ceiling"
  summary_add "strata 1 rank / torch best (examples/s)" "$(ratio "${eps[strata 1 rank]}" "$torch_best")"
  summary_add "strata 2 ranks / torch best (examples/s)" "$(ratio "${eps[strata 2 ranks]}" "$torch_best")"
  summary_add "strata best / torch best (examples/s)" "$(ratio "$strata_best" "$torch_best")"
  summary_add "strata best / MLP ceiling (examples/s)" "$(ratio "$strata_best" "$ceiling")"
  summary_add "torch best / MLP ceiling (examples/s)" "$(ratio "$torch_best" "$ceiling")"
}

# ---- section: Criteo AUC ----------------------------------------------------------------------

section_criteo_auc() {
  echo "== Criteo AUC: real sample, first 90% of rows train, last 10% eval, one epoch"
  local sample="$SHARED_DATA/criteo-dac-w261-sample/criteo_dac_train_sample.tsv.gz"
  if [ ! -f "$sample" ]; then
    echo "  skipped: Criteo sample not found at $sample"
    summary_add "Criteo eval AUC strata - torch" "skipped (no data)"
    return 0
  fi
  local data=$WORK/criteo
  tools/bench/split_criteo.sh "$sample" "$data" | sed 's/^/  /'
  # Global batch 512 on both: 2 ranks x 256 for strata, 512 for PyTorch.
  local model=(--embedding-dim 16 --mlp 512,256,128 --epochs 1 --sparse-optimizer adagrad
               --dense-optimizer adam --lr-sparse 0.05 --lr-dense 0.001)
  local io=(--train "$data/train.tsv" --eval "$data/eval.tsv")
  run_strata 2 "$WORK/sc.log" "$WORK/sc.jsonl" "${model[@]}" "${io[@]}" --threads 1 --batch-size 256
  run_torch "$WORK/tc.log" "${model[@]}" "${io[@]}" --batch-size 512 --threads 1
  local s_auc s_ll t_auc t_ll
  s_auc=$(json_field "$WORK/sc.jsonl" eval_auc); s_ll=$(json_field "$WORK/sc.jsonl" eval_logloss)
  t_auc=$(torch_field "$WORK/tc.log" eval_auc); t_ll=$(torch_field "$WORK/tc.log" eval_logloss)
  printf '  %-34s eval AUC %.5f  logloss %.5f\n' "strata (2 ranks x 256)" "$s_auc" "$s_ll" \
    "torch reference (batch 512)" "$t_auc" "$t_ll"
  summary_add "Criteo eval AUC strata - torch" "$(awk -v a="$s_auc" -v b="$t_auc" 'BEGIN {printf "%+.5f", a - b}')"
}

# ---- main -------------------------------------------------------------------------------------

SECTIONS=${BENCH_SECTIONS:-"trainer_vs_torch criteo_auc"}
for s in $SECTIONS; do
  start=$(date +%s)
  "section_$s"
  echo "  (section $s: $(( $(date +%s) - start )) s)"
  echo
done
echo "== summary (medians of $RUNS runs; the machine may be shared, so timings are noisy)"
printf '  %s\n' "${SUMMARY[@]}"
