#!/usr/bin/env bash
# `make bench`: CPU benchmarks of the built tree ($BUILD). Each section is one function that
# prints its own table and records its headline ratios with summary_add; the run ends with a
# summary block of every ratio. Timings are medians of $BENCH_RUNS runs (default 3).
#
# Sections:
#   trainer_vs_torch  strata-train (1 rank of 1 or 2 workers, 2 ranks) against tools/bench/torch_reference.py at
#                     PyTorch's best thread setting, on the same synthetic data and model, with
#                     the MLP's products in fp32 and, where the CPU has bf16 instructions, in
#                     bf16 (against PyTorch's CPU autocast to bf16); strata's train stage alone
#                     too (the pass's read, pull and push left out, as PyTorch's timed loop
#                     leaves out its parsing); and fp32 against the MLP compute ceiling
#                     measured by $BUILD/bench/mlp_bench
#   criteo_auc        eval AUC of strata-train and of the PyTorch reference on the real Criteo
#                     sample split 90/10 in file order, and of strata-train with bf16 MLP
#                     products where the CPU has them (skipped when the sample is absent)
#   samples           the shipped configs on the real Criteo, Avazu and TalkingData samples split
#                     80/20 in file order: eval AUC and logloss of strata-train and of the
#                     PyTorch reference, and the rows' bytes; and the same with slot widths
#                     (the slots whose distinct train tokens exceed 10% of the rows 8 wide, the
#                     rest 16) for Criteo and Avazu, and with --worker-input parts for
#                     TalkingData (a log sorted by time) (skipped when the samples are absent)
#   mpi               MPI bytes a training job sends (every rank, every communicator) per
#                     example on 2 and 4 ranks, against the least any design must move: each
#                     pass's distinct remote keys asked and their rows answered once, each row
#                     home once, each step's distinct remote gradients once each way, and a
#                     ring all-reduce of the dense gradient (ParamExchange's lower bound)
#   models            on the real Criteo (90/10) and Avazu (80/20) samples: eval AUC and
#                     examples/s of strata-train and its PyTorch twin for --model dnn (Adagrad and
#                     row-wise Adagrad, with the row's bytes), deepfm, dcn (3 full-rank cross
#                     layers), dlrm (bottom MLP 512-256-64-16) and wdl (skipped when absent)
#   lifecycle         on the real Criteo sample split 90/10 (skipped when it is absent): eval
#                     AUC, rows and rows evicted at --admit-min-count 0, 2 and 5 with
#                     --evict-unseen-passes 0 and 5; eval AUC and row bytes (as stored, in
#                     DRAM, in the checkpoint) with --row-dtype fp32 and bf16
#   checkpoint        $BUILD/bench/ckpt_bench: write and cold read of a BENCH_CKPT_GB (default 2)
#                     GB model in 2 rank files, as fractions of the disk's sequential write
#                     and read bandwidth measured in the same run on the same directory; and
#                     a trainer run with a checkpoint every pass and --checkpoint-incremental:
#                     an increment's bytes and time against the median full checkpoint's and
#                     against the last full one's (the model the increments build on)
#   ssd               $BUILD/bench/ssd_bench (SSD-PS against RocksDB) at BENCH_SSD_KEYS (default
#                     2000000) keys: throughput ratios, amplifications, sequential write fraction
#   cache_policy      $BUILD/bench/cache_sim on the real Criteo sample: MEM-PS policy against LRU
#                     and Belady at 5, 10 and 20% of the distinct keys, with the announced next
#                     pass (as the trainer runs it) and without (skipped when absent)
#   pipeline          strata-train with the pipeline on and off on a run whose pulls read the
#                     SSD-PS and take about as long as training: speedup and overlap efficiency
#   larger_than_memory  two models larger than their cache, each trained with a small
#                     --mem-cache-gb (and --ssd-io direct) and with every row in DRAM:
#                     examples/s ratio, peak RSS, DRAM bytes a row held, equal eval AUC. Criteo-
#                     sized rows: a BENCH_LTM_GB (default 4) GiB model of dim-16 rows, 0.5 GB
#                     cache, Zipf-1 keys; 1 KB rows: BENCH_LTM_KB_GB (default 8) GiB of dim-128
#                     rows, 1 GB cache; each case alternates the two runs BENCH_RUNS times
#                     (about 35 minutes at 3; needs 2x each model on disk; leave it out of
#                     BENCH_SECTIONS to skip)
#
# Knobs (environment): BENCH_RUNS, BENCH_SEEDS, BENCH_TRAIN_ROWS, BENCH_CARDINALITY, BENCH_SECTIONS (names
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
larger() { awk -v a="$1" -v b="$2" 'BEGIN {print (a > b ? a : b)}'; }
# torch_field LOG KEY: KEY=value from the reference's final "torch_reference:" line.
torch_field() { grep '^torch_reference:' "$1" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# stage_rate METRICS: strata's examples/s over its train stage alone (the steps), leaving out the
# pass's read and its pull, stage-in and push-back, as PyTorch's timed loop leaves out its parsing.
stage_rate() {
  "$PY" -c 'import json, sys
p = [r for r in map(json.loads, open(sys.argv[1])) if r["type"] == "pass"]
print(sum(r["examples"] for r in p) / sum(r["train_s"] for r in p))' "$1"
}

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
  local -A eps=() auc=()
  local precision
  for precision in fp32 bf16; do
    if [ "$precision" = bf16 ] && ! grep -qw -e avx512_bf16 -e amx_bf16 /proc/cpuinfo; then
      echo "  -- bf16: skipped, this CPU has no bf16 instructions (AVX512-BF16 or AMX)"
      summary_add "strata best / torch best, bf16 (examples/s)" "skipped (no bf16 on this CPU)"
      continue
    fi
    echo "  -- MLP products in $precision (strata --dense-precision; PyTorch $([ "$precision" = bf16 ] && echo "CPU autocast to bf16" || echo fp32))"
    trainer_vs_torch_runs "$precision"
  done

  # MLP ceiling: the faster fp32 GEMM rate of this machine (OpenBLAS or oneDNN) over the model's FLOPs per example.
  "$BUILD/bench/mlp_bench" --batch 4096 --mlp 512,256,128 >"$WORK/mlp.log" \
    || die "mlp_bench failed"
  sed 's/^/  mlp_bench: /' "$WORK/mlp.log"
  local ceiling
  ceiling=$(sed -n 's/.*| ceiling \([0-9.]*\) examples\/s.*/\1/p' "$WORK/mlp.log" | sort -g | tail -1)
  [ -n "$ceiling" ] || die "could not read the ceiling from mlp_bench's output"
  printf '  %-44s %9.0f examples/s\n' "MLP ceiling, fp32 (best GEMM rate) " "$ceiling"
  summary_add "strata best / MLP ceiling, fp32 (examples/s)" "$(ratio "${eps[strata best fp32]}" "$ceiling")"
  summary_add "torch best / MLP ceiling, fp32 (examples/s)" "$(ratio "${eps[torch best fp32]}" "$ceiling")"
  if [ -n "${auc[strata bf16]:-}" ]; then
    summary_add "strata eval AUC bf16 - fp32 (synthetic)" \
      "$(awk -v a="${auc[strata bf16]}" -v b="${auc[strata fp32]}" 'BEGIN {printf "%+.5f", a - b}')"
  fi
}

# trainer_vs_torch_runs PRECISION: strata at three settings that each run the same global
# steps of 4096 examples as PyTorch: 1 rank x 1 worker using both cores (its products on an
# OpenMP team of two), 1 rank x 2 workers of 2048 examples (one core each, the dense
# gradient summed in the rank), and 2 ranks x 1 worker x 1 thread of 2048 (summed over
# MPI); PyTorch at its two good settings on a 2-core machine (its default, 2 threads with a
# spinning OpenMP pool, is slower: the pool and the BLAS threads fight). The settings take
# turns, one run each a round, so a change in the machine's load over the section weighs on
# every one alike. Fills eps[...] and auc[...] of the caller.
trainer_vs_torch_runs() {
  local precision=$1 cfg name np workers threads batch policy r
  local strata_cfgs=("strata 1 rank:1:1:2:4096" "strata 1 rank x 2 workers:1:2:2:2048" "strata 2 ranks:2:1:1:2048")
  local torch_cfgs=("torch 1 thread:1:" "torch 2 threads PASSIVE:2:PASSIVE")
  local -A runs=() last_auc=() stage=()
  for r in $(seq "$RUNS"); do
    for cfg in "${strata_cfgs[@]}"; do
      IFS=: read -r name np workers threads batch <<<"$cfg"
      run_strata "$np" "$WORK/s.log" "$WORK/s.jsonl" "${model[@]}" "${io[@]}" --workers-per-rank "$workers" \
        --threads "$threads" --batch-size "$batch" --pass-examples 4194304 --dense-precision "$precision"
      runs[$name]+="$(json_field "$WORK/s.jsonl" examples_per_s) "
      stage[$name]+="$(stage_rate "$WORK/s.jsonl") "
      last_auc[$name]=$(json_field "$WORK/s.jsonl" eval_auc)
    done
    for cfg in "${torch_cfgs[@]}"; do
      IFS=: read -r name threads policy <<<"$cfg"
      run_torch "$WORK/t.log" "${model[@]}" "${io[@]}" --batch-size 4096 --threads "$threads" \
        --dense-precision "$precision" ${policy:+--omp-wait-policy "$policy"}
      runs[$name]+="$(torch_field "$WORK/t.log" examples_per_s) "
      last_auc[$name]=$(torch_field "$WORK/t.log" eval_auc)
    done
  done
  for cfg in "${strata_cfgs[@]}" "${torch_cfgs[@]}"; do
    name=${cfg%%:*}
    # shellcheck disable=SC2086  # the runs are a space-separated list
    eps[$name $precision]=$(median ${runs[$name]})
    printf '  %-44s %9.0f examples/s  eval AUC %.5f  (runs: %s)\n' "$name" "${eps[$name $precision]}" \
      "${last_auc[$name]}" "$(printf '%.0f ' ${runs[$name]})"
  done
  local strata_best=0 stage_best=0 torch_best=0
  for cfg in "${strata_cfgs[@]}"; do
    name=${cfg%%:*}
    # shellcheck disable=SC2086  # the rates are a space-separated list
    eps[$name stage $precision]=$(median ${stage[$name]})
    printf '  %-44s %9.0f examples/s  (runs: %s)\n' "$name, train stage alone" "${eps[$name stage $precision]}" \
      "$(printf '%.0f ' ${stage[$name]})"
    strata_best=$(larger "$strata_best" "${eps[$name $precision]}")
    stage_best=$(larger "$stage_best" "${eps[$name stage $precision]}")
  done
  for cfg in "${torch_cfgs[@]}"; do torch_best=$(larger "$torch_best" "${eps[${cfg%%:*} $precision]}"); done
  auc[strata $precision]=${last_auc[strata 2 ranks]}
  eps[strata best $precision]=$strata_best
  eps[torch best $precision]=$torch_best
  printf '  %-44s %9.0f examples/s\n' "strata best" "$strata_best" "torch best" "$torch_best"
  for cfg in "${strata_cfgs[@]}"; do
    name=${cfg%%:*}
    summary_add "$name / torch best, $precision (examples/s)" "$(ratio "${eps[$name $precision]}" "$torch_best")"
  done
  summary_add "strata best / torch best, $precision (examples/s)" "$(ratio "$strata_best" "$torch_best")"
  summary_add "strata best train stage / torch best, $precision" "$(ratio "$stage_best" "$torch_best")"
}

# criteo_split DIR SUMMARY_LINE: DIR/{train,eval}.tsv from the real Criteo sample split 90/10
# in file order (once a run); without the sample, records SUMMARY_LINE as skipped and fails.
criteo_split() {
  local sample="$SHARED_DATA/criteo-dac-w261-sample/criteo_dac_train_sample.tsv.gz"
  if [ ! -f "$sample" ]; then
    echo "  skipped: Criteo sample not found at $sample"
    summary_add "$2" "skipped (no data)"
    return 1
  fi
  [ -f "$1/train.tsv" ] || tools/bench/split_sample.sh "$sample" "$1" | sed 's/^/  /'
}

# ---- section: mpi ------------------------------------------------------------------------------

section_mpi() {
  echo "== MPI bytes of training against their lower bound: synthetic Criteo-shaped data, dim 16, MLP"
  echo "   512-256-128, global batch 4096, passes of 50000 examples; 2 and 4 ranks of 1 worker (bytes are"
  echo "   deterministic, so oversubscribed ranks are fine)"
  local data=$WORK/synthetic-mpi np
  "$DATAGEN" --out-dir "$data" --train-rows "${BENCH_TRAIN_ROWS:-200000}" --eval-rows 1000 \
    --cardinality "${BENCH_CARDINALITY:-50000}" --seed 11 | sed 's/^/  datagen: /'
  for np in 2 4; do
    run_strata "$np" "$WORK/mpi.log" "$WORK/mpi.jsonl" --embedding-dim 16 --mlp 512,256,128 --threads 1 \
      --batch-size $((4096 / np)) --pass-examples 50000 --train "$data/train.tsv"
    local sent bound examples
    sent=$(json_field "$WORK/mpi.jsonl" mpi_bytes_job)
    bound=$(json_field "$WORK/mpi.jsonl" mpi_bytes_lower_bound)
    examples=$(json_field "$WORK/mpi.jsonl" examples)
    printf '  %d ranks: %9.1f bytes/example sent, lower bound %9.1f bytes/example: %.2fx\n' "$np" \
      "$(awk -v b="$sent" -v e="$examples" 'BEGIN {print b / e}')" \
      "$(awk -v b="$bound" -v e="$examples" 'BEGIN {print b / e}')" "$(ratio "$sent" "$bound")"
    summary_add "MPI bytes / lower bound, $np ranks (goal <= 1.2)" "$(ratio "$sent" "$bound")"
  done
}

# ---- section: models --------------------------------------------------------------------------

section_models() {
  echo "== models: eval AUC of strata-train and of its PyTorch twin (same model, optimizers, global batch"
  echo "   512; strata on 2 ranks x 256) on the real Criteo sample (90/10) and Avazu sample (80/20), file order"
  local criteo=$WORK/criteo avazu=$WORK/avazu
  local avazu_sample="$SHARED_DATA/avazu-ctr-head-sample/avazu_train_head_sample.csv.gz"
  local -a sets=()
  criteo_split "$criteo" "models: Criteo" && sets+=(criteo)
  if [ -f "$avazu_sample" ]; then
    [ -f "$avazu/train.csv" ] || tools/bench/split_sample.sh --header "$avazu_sample" "$avazu" 80 | sed 's/^/  /'
    sets+=(avazu)
  else
    echo "  skipped Avazu: sample not found at $avazu_sample"
  fi
  local set cfg model sparse
  for set in "${sets[@]}"; do
    local io shape
    case $set in
      criteo) io=(--train "$criteo/train.tsv" --eval "$criteo/eval.tsv"); shape=(--embedding-dim 16 --mlp 512,256,128) ;;
      avazu) io=(--train "$avazu/train.csv" --eval "$avazu/eval.csv" --schema configs/avazu.schema)
             shape=(--embedding-dim 16 --mlp 256,128) ;;  # configs/avazu.flags
    esac
    printf '  %-8s %-26s %13s %13s %9s %11s %11s\n' "$set" "model, sparse optimizer" "strata AUC" "torch AUC" "diff" "strata ex/s" "torch ex/s"
    for cfg in "dnn:adagrad" "dnn:rowwise-adagrad" "deepfm:adagrad" "dcn:adagrad" "dlrm:adagrad" "wdl:adagrad"; do
      IFS=: read -r model sparse <<<"$cfg"
      models_case "$set" "$model" "$sparse"
    done
    rowwise_seeds_case "$set"
  done
}

# model_flags MODEL SPARSE: the section's flags for MODEL with SPARSE rows on the caller's io
# and shape, into the caller's array `flags` (both strata's and PyTorch's).
model_flags() {
  flags=("${shape[@]}" --model "$1" --epochs 1 --sparse-optimizer "$2" --dense-optimizer adam
         --lr-sparse 0.05 --lr-dense 0.001 "${io[@]}")
}

# rowwise_seeds_case SET: row-wise against element-wise Adagrad on the caller's io and shape,
# over the parameter seeds in $BENCH_SEEDS (default 1 2 3). The two differ by less than one
# seed's draw moves either, so one run pair says little; the mean difference is what counts.
rowwise_seeds_case() {
  local set=$1 seed opt auc sum=0 n=0 flags
  local -A got=()
  printf '  %-8s %-26s %13s %13s %9s\n' "" "seed" "adagrad AUC" "rowwise AUC" "diff"
  for seed in ${BENCH_SEEDS:-1 2 3}; do
    for opt in adagrad rowwise-adagrad; do
      model_flags dnn "$opt"
      run_strata 2 "$WORK/rw.log" "$WORK/rw.jsonl" "${flags[@]}" --threads 1 --batch-size 256 --seed "$seed"
      got[$opt]=$(json_field "$WORK/rw.jsonl" eval_auc)
    done
    auc=$(awk -v a="${got[rowwise-adagrad]}" -v b="${got[adagrad]}" 'BEGIN {print a - b}')
    printf '  %-8s %-26s %13.5f %13.5f %+9.5f\n' "" "dnn, --seed $seed" "${got[adagrad]}" "${got[rowwise-adagrad]}" "$auc"
    sum=$(awk -v s="$sum" -v d="$auc" 'BEGIN {print s + d}'); n=$((n + 1))
  done
  auc=$(awk -v s="$sum" -v n="$n" 'BEGIN {printf "%+.5f", s / n}')
  echo "           row-wise - element-wise Adagrad, mean of $n seeds: $auc"
  summary_add "models: $set rowwise - adagrad eval AUC, mean of $n seeds" "$auc"
}

# models_case SET MODEL SPARSE: one strata run and one PyTorch run of MODEL with SPARSE rows
# on the caller's io and shape; prints a table row and records the AUC difference.
models_case() {
  local set=$1 model=$2 sparse=$3 flags
  model_flags "$model" "$sparse"
  run_strata 2 "$WORK/m.log" "$WORK/m.jsonl" "${flags[@]}" --threads 1 --batch-size 256
  run_torch "$WORK/mt.log" "${flags[@]}" --batch-size 512 --threads 1
  local s t
  s=$(json_field "$WORK/m.jsonl" eval_auc); t=$(torch_field "$WORK/mt.log" eval_auc)
  local bytes; bytes=$(grep -o "rows of [0-9]* B" "$WORK/m.log" | head -1)
  printf '  %-8s %-26s %13.5f %13.5f %+9.5f %11.0f %11.0f  (%s)\n' "" "$model, $sparse" "$s" "$t" \
    "$(awk -v a="$s" -v b="$t" 'BEGIN {print a - b}')" "$(json_field "$WORK/m.jsonl" examples_per_s)" \
    "$(torch_field "$WORK/mt.log" examples_per_s)" "$bytes"
  summary_add "models: $set $model $sparse eval AUC strata - torch" "$(awk -v a="$s" -v b="$t" 'BEGIN {printf "%+.5f", a - b}')"
}

# ---- section: Criteo AUC ----------------------------------------------------------------------

section_criteo_auc() {
  echo "== Criteo AUC: real sample, first 90% of rows train, last 10% eval, one epoch"
  local data=$WORK/criteo
  criteo_split "$data" "Criteo eval AUC strata - torch" || return 0
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
  grep -qw -e avx512_bf16 -e amx_bf16 /proc/cpuinfo || return 0
  run_strata 2 "$WORK/sc16.log" "$WORK/sc16.jsonl" "${model[@]}" "${io[@]}" --threads 1 --batch-size 256 \
    --dense-precision bf16
  local b_auc
  b_auc=$(json_field "$WORK/sc16.jsonl" eval_auc)
  printf '  %-34s eval AUC %.5f  logloss %.5f\n' "strata, bf16 MLP products" "$b_auc" "$(json_field "$WORK/sc16.jsonl" eval_logloss)"
  summary_add "Criteo eval AUC strata bf16 - fp32" "$(awk -v a="$b_auc" -v b="$s_auc" 'BEGIN {printf "%+.5f", a - b}')"
}

# ---- section: real samples --------------------------------------------------------------------

section_samples() {
  echo "== samples: the shipped configs on the real samples, first 80% of rows train, last 20% eval,"
  echo "   file order, one epoch, global batch 256 (strata on 2 ranks x 128)"
  printf '  %-20s %11s %9s %11s %9s %9s %8s\n' sample "strata AUC" logloss "torch AUC" logloss diff "rows MB"
  local name sample split_flags
  for name in criteo avazu talkingdata; do
    case $name in
      criteo) sample="$SHARED_DATA/criteo-dac-w261-sample/criteo_dac_train_sample.tsv.gz"; split_flags=() ;;
      avazu) sample="$SHARED_DATA/avazu-ctr-head-sample/avazu_train_head_sample.csv.gz"; split_flags=(--header) ;;
      talkingdata) sample="$SHARED_DATA/talkingdata-adtracking-sample/talkingdata_train_sample.csv.gz"; split_flags=(--header) ;;
    esac
    if [ ! -f "$sample" ]; then
      echo "  skipped $name: sample not found at $sample"
      continue
    fi
    local data=$WORK/samples-$name
    tools/bench/split_sample.sh "${split_flags[@]}" "$sample" "$data" 80 >/dev/null
    local ext; ext=$(ls "$data"/train.* | sed 's/.*\.//')
    samples_case "$name" configs/$name.schema "$data/train.$ext" "$data/eval.$ext"
    if [ $name = talkingdata ]; then  # a log sorted by time: the workers' reading order shows
      samples_case "$name, parts" configs/$name.schema "$data/train.$ext" "$data/eval.$ext" --worker-input parts
      continue
    fi
    widths_schema configs/$name.schema "$data/train.$ext" >"$data/widths.schema"
    samples_case "$name, widths" "$data/widths.schema" "$data/train.$ext" "$data/eval.$ext"
  done
}

# widths_schema SCHEMA TRAIN: SCHEMA with `width 16`, and `width 8` on each slot column whose
# distinct tokens in TRAIN exceed 10% of its rows.
widths_schema() {
  "$PY" - "$1" "$2" <<'PY'
import sys
sys.path.insert(0, "tools/python")
import strata_schema
text = open(sys.argv[1]).read()
schema = strata_schema.Schema(text, sys.argv[1])
rows = strata_schema.read_rows([sys.argv[2]], schema)
large = {name for i, (name, role, _) in enumerate(schema.columns)
         if role in ("categorical", "multihot") and len({r[i] for r in rows}) > 0.1 * len(rows)}
print("width 16")
for line in text.splitlines():
    words = line.split("#", 1)[0].split()
    print(line.split("#", 1)[0].rstrip() + " width 8" if len(words) >= 3 and words[0] == "column" and words[1] in large else line)
PY
}

# samples_case LABEL SCHEMA TRAIN EVAL [strata flags...]: strata-train (configs/<sample>.flags)
# and the PyTorch reference of the same shape; prints a table row and records the AUC
# difference.
samples_case() {
  local label=$1 schema=$2 cfg="configs/${1%%,*}.flags"
  local mlp; mlp=$(awk '$1 == "mlp" {print $2}' "$cfg")
  local io=(--schema "$schema" --train "$3" --eval "$4" --epochs 1)
  run_strata 2 "$WORK/s.log" "$WORK/s.jsonl" --config "$cfg" "${io[@]}" --threads 1 --batch-size 128 "${@:5}"
  run_torch "$WORK/st.log" "${io[@]}" --embedding-dim 16 --mlp "$mlp" --lr-sparse 0.05 --lr-dense 0.001 \
    --batch-size 256 --threads 1
  local s t row_bytes
  s=$(json_field "$WORK/s.jsonl" eval_auc); t=$(torch_field "$WORK/st.log" eval_auc)
  row_bytes=$(grep -o "rows of [0-9]* B" "$WORK/s.log" | head -1 | tr -dc 0-9)
  printf '  %-20s %11.5f %9.5f %11.5f %9.5f %+9.5f %8.2f\n' "$label" "$s" "$(json_field "$WORK/s.jsonl" eval_logloss)" \
    "$t" "$(torch_field "$WORK/st.log" eval_logloss)" "$(awk -v a="$s" -v b="$t" 'BEGIN {print a - b}')" \
    "$(awk -v k="$(json_field "$WORK/s.jsonl" keys)" -v b="$row_bytes" 'BEGIN {print k * b / 1e6}')"
  summary_add "samples: $label eval AUC strata - torch" "$(awk -v a="$s" -v b="$t" 'BEGIN {printf "%+.5f", a - b}')"
}

# ---- section: feature lifecycle ---------------------------------------------------------------

section_lifecycle() {
  echo "== Feature admission and eviction: real Criteo sample split 90/10, passes of 20000 examples"
  local data=$WORK/criteo
  criteo_split "$data" "admission 2: rows kept, eval AUC change" || return 0
  local flags=(--embedding-dim 16 --mlp 512,256,128 --epochs 1 --threads 1 --batch-size 256
               --train "$data/train.tsv" --eval "$data/eval.tsv")
  local n e name auc rows evicted base_auc base_rows
  printf '  %-18s %-22s %10s %10s %10s %12s\n' "--admit-min-count" "--evict-unseen-passes" "eval AUC" "rows" \
    "evicted" "rows kept"
  for n in 0 2 5; do
    for e in 0 5; do
      name=life-$n-$e
      run_strata 2 "$WORK/$name.log" "$WORK/$name.jsonl" "${flags[@]}" --pass-examples 20000 \
        --admit-min-count "$n" --evict-unseen-passes "$e"
      auc=$(json_field "$WORK/$name.jsonl" eval_auc); rows=$(json_field "$WORK/$name.jsonl" keys)
      evicted=$("$PY" -c "import json; print(sum(r.get('rows_evicted', 0) for r in map(json.loads, open('$WORK/$name.jsonl'))))")
      if [ "$n$e" = 00 ]; then base_auc=$auc; base_rows=$rows; fi
      printf '  %-18s %-22s %10.5f %10d %10d %12s\n' "$n" "$e" "$auc" "$rows" "$evicted" "$(ratio "$rows" "$base_rows")"
      if [ "$n$e" = 20 ] || [ "$n$e" = 05 ]; then
        summary_add "$([ "$n" = 2 ] && echo "admission 2" || echo "eviction 5"): rows kept, eval AUC change" \
          "$(ratio "$rows" "$base_rows"), $(awk -v a="$auc" -v b="$base_auc" 'BEGIN {printf "%+.5f", a - b}')"
      fi
    done
  done
  row_dtype_case "${flags[@]}"
}

# --row-dtype fp32 and bf16 on the same split, for Adagrad and row-wise Adagrad: eval AUC,
# the row's bytes, what a row takes in DRAM (the store's allocation) and in the checkpoint.
row_dtype_case() {
  echo "== Row precision: the same split, --row-dtype fp32 and bf16"
  local opt t name auc row_b dram_b ckpt_b base_auc base_b
  printf '  %-26s %10s %8s %12s %12s\n' "optimizer, row dtype" "eval AUC" "row B" "DRAM B/row" "ckpt B/row"
  for opt in adagrad rowwise-adagrad; do
    for t in fp32 bf16; do
      name=dt-$opt-$t
      run_strata 2 "$WORK/$name.log" "$WORK/$name.jsonl" "$@" --sparse-optimizer "$opt" --row-dtype "$t" --pass-examples 100000 \
        --checkpoint-dir "$WORK/$name-ck"
      auc=$(json_field "$WORK/$name.jsonl" eval_auc)
      row_b=$(sed -n 's/.*rows of \([0-9]*\) B.*/\1/p' "$WORK/$name.log")
      dram_b=$(last_pass_field "$WORK/$name.jsonl" dram_bytes_per_row)
      ckpt_b=$(( $(du -cb "$WORK/$name-ck"/ckpt-*/rows-*.h5 | tail -1 | cut -f1) / $(json_field "$WORK/$name.jsonl" keys) ))
      printf '  %-26s %10.5f %8d %12.1f %12d\n' "$opt, $t" "$auc" "$row_b" "$dram_b" "$ckpt_b"
      if [ "$t" = fp32 ]; then base_auc=$auc; base_b=$row_b; continue; fi
      summary_add "bf16 rows ($opt): row bytes, eval AUC change" \
        "$(ratio "$row_b" "$base_b"), $(awk -v a="$auc" -v b="$base_auc" 'BEGIN {printf "%+.5f", a - b}')"
    done
  done
}

# ---- section: checkpoint bandwidth ------------------------------------------------------------

section_checkpoint() {
  local gb=${BENCH_CKPT_GB:-2} log=$WORK/ckpt.log
  echo "== checkpoint: write and cold read of a $gb GB model against the disk's sequential bandwidth"
  "$BUILD/bench/ckpt_bench" --gb "$gb" --runs "$RUNS" --dir "$WORK" >"$log" 2>&1 \
    || { tail -20 "$log" >&2; die "ckpt_bench failed"; }
  sed 's/^/  /' "$log"
  local last
  last=$(grep '^ckpt_bench:' "$log" | tail -1)
  [ -n "$last" ] || die "no result line in $log"
  summary_add "checkpoint write / disk sequential write (goal > 0.5)" "$(sed -n 's/.*write_fraction=\([0-9.]*\).*/\1/p' <<<"$last")"
  summary_add "checkpoint read / disk sequential read (goal > 0.5)" "$(sed -n 's/.*read_fraction=\([0-9.]*\).*/\1/p' <<<"$last")"
  incremental_case
}

# A checkpoint every pass with --checkpoint-incremental 10 on a model far larger than a
# pass's keys: an increment's bytes and time against the full checkpoints'.
incremental_case() {
  local data=$WORK/inc-data log=$WORK/inc.log
  echo "== incremental checkpoints: a checkpoint every pass of 20000 examples, a full one every 10"
  "$DATAGEN" --out-dir "$data" --train-rows 400000 --eval-rows 1000 --cardinality 100000000 --zipf 1.0 --seed 3 >/dev/null
  run_strata 2 "$log" "$WORK/inc.jsonl" --embedding-dim 16 --mlp 64 --threads 1 --pass-examples 20000 \
    --train "$data/train.tsv" --checkpoint-dir "$WORK/inc-ck" --checkpoint-every-passes 1 --checkpoint-incremental 10
  "$PY" - "$log" >"$WORK/inc.txt" <<'PY'
import re, statistics, sys
pat = re.compile(r"checkpoint \S+ \((full|increment)[^)]*\): (\d+) rows, ([\d.]+) MB in ([\d.]+) s")
got = {"full": [], "increment": []}
for m in map(pat.search, open(sys.argv[1])):
    if m: got[m[1]].append((int(m[2]), float(m[3]), float(m[4])))
med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in got.items()}
for k in ("full", "increment"):
    print(f"  {k:<10} x{len(got[k]):<3} median {med[k][0]:>9.0f} rows {med[k][1]:>8.2f} MB {med[k][2]:>7.3f} s")
print(f"  increment / full: bytes {med['increment'][1] / med['full'][1]:.3f}, time {med['increment'][2] / med['full'][2]:.3f}")
# The first full checkpoint holds one pass's rows, as an increment does; the last holds
# the model the increments after it build on.
last = got["full"][-1]
print(f"  last full   {last[0]:>9.0f} rows {last[1]:>8.2f} MB {last[2]:>7.3f} s")
print(f"  increment / last full: bytes {med['increment'][1] / last[1]:.3f}, time {med['increment'][2] / last[2]:.3f}")
PY
  cat "$WORK/inc.txt"
  summary_add "checkpoint increment / full (bytes, time)" "$(sed -n 's/.*increment \/ full: //p' "$WORK/inc.txt")"
  summary_add "checkpoint increment / last full (bytes, time)" "$(sed -n 's/.*increment \/ last full: //p' "$WORK/inc.txt")"
}

# ---- sections: SSD-PS, cache policy, pipeline, larger than memory ----------------------------

# disk_dir NAME: a fresh folder for files whose speed is measured, on the repo's filesystem
# ($WORK when it shares it, else under $BUILD, never a tmpfs). The caller removes it.
disk_dir() {
  local d=$WORK/$1
  [ "$(df --output=source "$WORK" | tail -1)" = "$(df --output=source . | tail -1)" ] || d=$BUILD/bench-$1
  rm -rf "$d" && mkdir -p "$d" && echo "$d"
}

# pass_stat JSONL KEY mean|median: KEY over the per-pass records of a metrics file.
pass_stat() {
  "$PY" -c "import json, statistics
v = [r['$2'] for r in map(json.loads, open('$1')) if r['type'] == 'pass']
print(statistics.$3(v))"
}

section_ssd() {
  local keys=${BENCH_SSD_KEYS:-2000000} log=$WORK/ssd.log dir
  echo "== SSD-PS vs RocksDB: $BUILD/bench/ssd_bench, $keys keys of 64 B, Zipf(1.05) get+put rounds"
  dir=$(disk_dir ssd)
  local -A v=()
  local r k line seq
  for r in $(seq "$RUNS"); do
    "$BUILD/bench/ssd_bench" --keys "$keys" --dir "$dir" >"$log" 2>&1 \
      || { tail -20 "$log" >&2; die "ssd_bench failed"; }
    sed "s/^/  run $r: /" "$log"
    line=$(grep '^ssd_bench:' "$log" | tail -1)
    seq=$(sed -n 's/^sequential write:.*= \([0-9.]*\)% of the disk.*/\1/p' "$log")
    [ -n "$line" ] && [ -n "$seq" ] || die "no result lines in $log"
    for k in get_ratio put_ratio space_amp write_amp index_bytes_per_key; do
      v[$k]+="$(sed -n "s/.*$k=\([0-9.]*\).*/\1/p" <<<"$line") "
    done
    v[seq]+="$(awk -v p="$seq" 'BEGIN {printf "%.2f", p / 100}') "
  done
  rm -rf "$dir"
  summary_add "SSD-PS / RocksDB get keys/s (bar >= 4)" "$(median ${v[get_ratio]})"
  summary_add "SSD-PS / RocksDB put keys/s (bar >= 10)" "$(median ${v[put_ratio]})"
  summary_add "SSD-PS space amplification (bar <= 2.0)" "$(median ${v[space_amp]})"
  summary_add "SSD-PS write amplification" "$(median ${v[write_amp]})"
  summary_add "SSD-PS DRAM index bytes per key (bar <= 8, goal 1)" "$(median ${v[index_bytes_per_key]})"
  summary_add "SSD-PS load appends / disk sequential write (goal > 0.7)" "$(median ${v[seq]})"
}

section_cache_policy() {
  local sample="$SHARED_DATA/criteo-dac-w261-sample/criteo_dac_train_sample.tsv.gz"
  echo "== cache policy: MEM-PS vs LRU vs Belady on the real Criteo sample, passes of 10000 examples"
  if [ ! -f "$sample" ]; then
    echo "  skipped: Criteo sample not found at $sample"
    summary_add "cache memps / belady" "skipped (no data)"
    return 0
  fi
  local log=$WORK/cache.log model flag cap memps lru belady bar lru_bar
  for model in "per pass:" "per example:--per-example" "per pass, no lookahead:--lookahead 0"; do
    flag=${model#*:}; model=${model%%:*}
    echo "  access model: $model ($([ "$flag" = --per-example ] && echo "one access per key per example" \
      || echo "one access per distinct key per pass, the trainer's pull"))"
    "$BUILD/bench/cache_sim" --input "$sample" --pass-examples 10000 --capacities 0.05,0.10,0.20 \
      $flag >"$log" 2>&1 || { tail -20 "$log" >&2; die "cache_sim failed"; }
    sed 's/^/    /' "$log"
    for cap in 5.0 10.0 20.0; do
      read -r memps lru belady < <(awk -v c="$cap%" '$1 == c {print $3, $4, $5}' "$log") \
        || die "no $cap% row in $log"
      bar=" (bar >= 0.9)"; lru_bar=" (bar > 1)"
      [ "$flag" = "--lookahead 0" ] && { bar=" (reference)"; lru_bar=" (reference)"; }
      summary_add "cache $model ${cap%.0}%: memps / belady$bar" "$(ratio "$memps" "$belady")"
      summary_add "cache $model ${cap%.0}%: memps / lru$lru_bar" "$(ratio "$memps" "$lru")"
    done
  done
}

section_pipeline() {
  echo "== pipeline: MEM-PS of 0.05 GB over the SSD-PS, 520k keys of 1032 B rows, pipeline on vs off"
  # About 49k distinct keys a pass, most read back from the SSD-PS: pulling a pass and training
  # it take comparable time here (the medians of pull_s and train_s are printed below). One
  # training thread leaves the second core to the other stages; it is also the faster setting
  # for the pipeline-off run at this MLP size.
  local data=$WORK/pipe dir
  "$DATAGEN" --out-dir "$data" --train-rows 100000 --eval-rows 5000 --cardinality 20000 --zipf 0.5 \
    --seed 5 | sed 's/^/  datagen: /'
  dir=$(disk_dir pipe-ssd)
  local flags=(--train "$data/train.tsv" --eval "$data/eval.tsv" --embedding-dim 128 --mlp 256,128
               --batch-size 1000 --pass-examples 4000 --threads 1 --mem-cache-gb 0.05)
  local -A eps=() pull=() train=() overlap=()
  local r mode m
  for r in $(seq "$RUNS"); do  # on and off alternate, so drifting load hits both alike
    for mode in on off; do
      rm -rf "$dir"
      m=$WORK/pipe-$mode.jsonl
      run_strata 1 "$WORK/pipe.log" "$m" "${flags[@]}" --ssd-dir "$dir" --pipeline "$mode"
      eps[$mode]+="$(json_field "$m" examples_per_s) "
      pull[$mode]+="$(pass_stat "$m" pull_s median) "
      train[$mode]+="$(pass_stat "$m" train_s median) "
      overlap[$mode]+="$(pass_stat "$m" overlap_efficiency mean) "
    done
  done
  rm -rf "$dir"
  for mode in on off; do
    printf '  pipeline %-3s %7.0f examples/s  pull %.3f s  train %.3f s a pass  overlap %.2f  (runs: %s)\n' \
      "$mode" "$(median ${eps[$mode]})" "$(median ${pull[$mode]})" "$(median ${train[$mode]})" \
      "$(median ${overlap[$mode]})" "$(printf '%.0f ' ${eps[$mode]})"
  done
  summary_add "pipeline on / off (examples/s; bar >= 1.3)" "$(ratio "$(median ${eps[on]})" "$(median ${eps[off]})")"
  summary_add "pipeline on: mean overlap efficiency (bar >= 0.8)" "$(printf '%.2f' "$(median ${overlap[on]})")"
  summary_add "pipeline off: pull_s / train_s a pass" "$(ratio "$(median ${pull[off]})" "$(median ${train[off]})")"
}

# last_pass_field JSONL KEY: KEY of the last per-pass record.
last_pass_field() {
  "$PY" -c "import json
print([r for r in map(json.loads, open('$1')) if r['type'] == 'pass'][-1]['$2'])"
}

# late_passes_median JSONL KEY: the median of KEY over the second half of the per-pass
# records (a cache is full by then; its rows still vary from pass to pass).
late_passes_median() {
  "$PY" -c "import json, statistics
p = [r['$2'] for r in map(json.loads, open('$1')) if r['type'] == 'pass']
print(statistics.median(p[len(p) // 2:]))"
}

# ltm_case NAME GIB DIM CACHE_GB ZIPF KEYS_PER_ROW PASS_EXAMPLES: one larger-than-memory case,
# a GIB GiB model of dim-DIM rows trained with --mem-cache-gb CACHE_GB (and --ssd-io direct,
# so the page cache holds none of it either) and with every row in DRAM, 1 rank. The data
# has about KEYS_PER_ROW distinct keys a training row at this cardinality and skew, which
# sizes the training set (2% spare). The two runs alternate $RUNS times, so drifting load
# hits both alike; the speed is the median of the pairs' ratios.
ltm_case() {
  local name=$1 gb=$2 dim=$3 cache=$4 zipf=$5 keys_per_row=$6 pass=$7
  local row_bytes=$(( 2 * dim * 4 + 8 )) rows keys_bytes
  rows=$(awk -v g="$gb" -v b="$row_bytes" -v k="$keys_per_row" 'BEGIN {printf "%d", g * 2^30 / b / k * 1.02 + 1}')
  keys_bytes=$(awk -v g="$gb" 'BEGIN {printf "%.0f", g * 2^30}')
  echo "  -- $name: $gb GiB of $row_bytes B rows (Zipf $zipf), --mem-cache-gb $cache --ssd-io direct vs every row in DRAM"
  local dir avail mem
  dir=$(disk_dir ltm-ssd)
  avail=$(df --output=avail -B1 "$dir" | tail -1)
  mem=$(awk '/^MemAvailable:/ {printf "%.0f", $2 * 1024}' /proc/meminfo)
  if [ "$avail" -lt $(( 2 * keys_bytes + (2 << 30) )) ] || [ "$mem" -lt $(( keys_bytes * 13 / 10 + (3 << 30) )) ]; then
    echo "  skipped: needs 2x the model on disk ($((avail >> 30)) GiB free) and 1.3x it plus 3 GiB of DRAM ($((mem >> 30)) GiB available)"
    rm -rf "$dir"
    summary_add "larger than memory, $name: cached / in DRAM (examples/s)" "skipped (no room)"
    return 0
  fi
  local data=$WORK/ltm-$name
  "$DATAGEN" --out-dir "$data" --train-rows "$rows" --eval-rows 20000 --cardinality $(( 1 << 40 )) \
    --zipf "$zipf" --seed 7 | sed 's/^/  datagen: /'
  local flags=(--train "$data/train.tsv" --eval "$data/eval.tsv" --embedding-dim "$dim" --mlp 128,64
               --batch-size 1024 --pass-examples "$pass" --threads 2)
  local cached=(--mem-cache-gb "$cache" --ssd-dir "$dir" --ssd-io direct)
  local plan
  plan=$($MPIRUN -np 1 "$TRAIN" "${flags[@]}" "${cached[@]}" --dry-run | awk '$1 == "DRAM" {print $2 * 1e9}')
  local r ratios=()
  for r in $(seq "$RUNS"); do
    run_strata 1 "$WORK/ltm-$name-cached-$r.log" "$WORK/ltm-$name-cached-$r.jsonl" "${flags[@]}" "${cached[@]}"
    rm -rf "$dir"
    run_strata 1 "$WORK/ltm-$name-dram-$r.log" "$WORK/ltm-$name-dram-$r.jsonl" "${flags[@]}" --mem-cache-gb 0
    ratios+=("$(ratio "$(json_field "$WORK/ltm-$name-cached-$r.jsonl" examples_per_s)" \
                      "$(json_field "$WORK/ltm-$name-dram-$r.jsonl" examples_per_s)")")
    echo "  pair $r: cached / in DRAM ${ratios[-1]}"
  done
  rm -rf "$data"
  ltm_report "$name" "$row_bytes" "$cache" "$plan" "$(median "${ratios[@]}")"
}

# ltm_report NAME ROW_BYTES CACHE_GB PLAN_BYTES SPEED_RATIO: the lines and summary of one
# ltm_case from its runs' JSONL (the peak RSS is the largest of the runs; the AUC and the
# DRAM a row held are those of the first pair: the cached run's over its later passes, the
# stored run's at the end).
ltm_report() {
  local name=$1 row_bytes=$2 cache=$3 plan=$4 speed=$5
  local -A eps=() rss=() auc=() per_row=()
  local run keys read
  for run in cached dram; do
    local m=$WORK/ltm-$name-$run-1.jsonl
    eps[$run]=$(median $(for f in "$WORK/ltm-$name-$run"-*.jsonl; do json_field "$f" examples_per_s; done))
    rss[$run]=$(for f in "$WORK/ltm-$name-$run"-*.jsonl; do json_field "$f" peak_rss_bytes; done | sort -g | tail -1)
    auc[$run]=$(json_field "$m" eval_auc)
    if [ "$run" = cached ]; then
      per_row[$run]=$(late_passes_median "$m" dram_bytes_per_row)
    else
      per_row[$run]=$(last_pass_field "$m" dram_bytes_per_row)  # every row stored by then
    fi
  done
  keys=$(json_field "$WORK/ltm-$name-cached-1.jsonl" keys)
  read=$("$PY" -c "import json; print(sum(r.get('ssd_rows_read', 0) for r in map(json.loads, open('$WORK/ltm-$name-cached-1.jsonl')) if r['type'] == 'pass'))")
  printf '  model: %s keys x %s B = %.2f GiB of rows; the cached run read %s rows back from the SSD-PS\n' \
    "$keys" "$row_bytes" "$(awk -v k="$keys" -v b="$row_bytes" 'BEGIN {print k * b / 2^30}')" "$read"
  printf '  %-22s %7.0f examples/s  peak RSS %5.2f GB  DRAM %5.1f B a row held (%.2fx)  eval AUC %s\n' \
    "--mem-cache-gb $cache" "${eps[cached]}" "$(awk -v r="${rss[cached]}" 'BEGIN {print r / 1e9}')" \
    "${per_row[cached]}" "$(ratio "${per_row[cached]}" "$row_bytes")" "${auc[cached]}" \
    "every row in DRAM" "${eps[dram]}" "$(awk -v r="${rss[dram]}" 'BEGIN {print r / 1e9}')" \
    "${per_row[dram]}" "$(ratio "${per_row[dram]}" "$row_bytes")" "${auc[dram]}"
  summary_add "larger than memory, $name: cached / in DRAM (examples/s)" "$speed"
  summary_add "larger than memory, $name: peak RSS cached, GB" "$(awk -v r="${rss[cached]}" 'BEGIN {printf "%.2f", r / 1e9}')"
  printf '  --dry-run plan of the cached run: %.2f GB of DRAM against its peak RSS of %.2f GB\n' \
    "$(awk -v p="$plan" 'BEGIN {print p / 1e9}')" "$(awk -v r="${rss[cached]}" 'BEGIN {print r / 1e9}')"
  summary_add "larger than memory, $name: --dry-run DRAM plan / peak RSS (bar 0.8-1.2)" "$(ratio "$plan" "${rss[cached]}")"
  summary_add "larger than memory, $name: DRAM a cached row / row bytes" "$(ratio "${per_row[cached]}" "$row_bytes")"
  summary_add "larger than memory, $name: DRAM a stored row / row bytes" "$(ratio "${per_row[dram]}" "$row_bytes")"
  summary_add "larger than memory, $name: eval AUC cached == in DRAM" "$([ "${auc[cached]}" = "${auc[dram]}" ] && echo yes || echo "no (${auc[cached]} vs ${auc[dram]})")"
}

# Criteo-sized rows (dim 16) on a Zipf-1 key stream, where rows come back from the SSD-PS
# (bars: cached/DRAM >= 0.9, peak RSS < 1.5 GB, equal AUC); then 1 KB rows (dim 128) on a
# stream of nearly all new keys (bars 0.5 and 3 GB).
section_larger_than_memory() {
  echo "== larger than memory, 1 rank"
  ltm_case criteo "${BENCH_LTM_GB:-4}" 16 0.5 1.0 14.5 25000
  ltm_case 1kb "${BENCH_LTM_KB_GB:-8}" 128 1 0.5 24.7 5000
}

# ---- main -------------------------------------------------------------------------------------

# OpenBLAS picks its kernels by CPU model at load time, and a release older than the CPU takes
# it for a Prescott (SSE3): Debian 12's 0.3.21 does so on an Emerald Rapids Xeon, where
# PyTorch's fp32 products then run at a third of their speed. Where that happens and
# OPENBLAS_CORETYPE is unset, it names the newest kernels the CPU's flags allow, for both
# sides (strata's output layer uses OpenBLAS too), so the peer runs at its best.
openblas_coretype() {
  [ -z "${OPENBLAS_CORETYPE+set}" ] || return 0
  local core flags
  core=$(OPENBLAS_VERBOSE=2 "$PY" -c "import ctypes; ctypes.CDLL('libopenblas.so.0')" 2>&1 | sed -n 's/^Core: //p')
  [ "$core" = Prescott ] || return 0
  flags=" $(grep -m1 '^flags' /proc/cpuinfo) "
  case "$flags" in
    *" avx512_bf16 "*) export OPENBLAS_CORETYPE=Cooperlake ;;
    *" avx512f "*) export OPENBLAS_CORETYPE=SkylakeX ;;
    *" avx2 "*) export OPENBLAS_CORETYPE=Haswell ;;
    *) return 0 ;;
  esac
  echo "== OpenBLAS took this CPU for a Prescott: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE for every run"
  echo
}

openblas_coretype

SECTIONS=${BENCH_SECTIONS:-"trainer_vs_torch criteo_auc samples mpi models lifecycle checkpoint ssd cache_policy pipeline larger_than_memory"}
for s in $SECTIONS; do
  start=$(date +%s)
  "section_$s"
  echo "  (section $s: $(( $(date +%s) - start )) s)"
  echo
done
echo "== summary (medians of $RUNS runs; the machine may be shared, so timings are noisy)"
printf '  %s\n' "${SUMMARY[@]}"
