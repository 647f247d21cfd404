#!/usr/bin/env bash
# make bench-gpu: the GPU benchmarks, side by side in one run.
#   table   GPU hash table insert, find and accumulate (keys/s) at 8 and 64 floats a value,
#           against the device's own copy bandwidth measured in the same run
#           ($BUILD/bench/gpu_bench, medians of 3 runs);
#   train   strata-train --device cuda against tools/bench/torch_reference.py --device cuda:
#           the same model (dim 16, MLP 512-256-128, adagrad + adam, batch 4096) on the same
#           synthetic Criteo-shaped files and GPU; examples/s (medians of $RUNS runs) of the
#           whole run, of its later passes and of its train stage alone, and eval AUC; and
#           the later passes' median seconds per pipeline stage (which stage bounds them).
#   BENCH_GPU_SECTIONS    "table train" (default) or either one.
# Without a visible GPU it prints one line and exits 77 (skipped).
#   BENCH_GPU_NO_BUILD=1  use the binaries in $BUILD as they are.
#   BENCH_GPU_ROWS        training rows (default 1000000).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
RUNS=${RUNS:-3}
PY=${PYTHON:-python3}
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "bench-gpu: skipped: no CUDA device visible"
  exit 77
fi
[ "${BENCH_GPU_NO_BUILD:-0}" = 1 ] || make --no-print-directory -j"$(nproc)" BUILD="$BUILD" \
  "$BUILD/bench/gpu_bench" "$BUILD/strata-train" "$BUILD/strata-datagen"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/strata-bench-gpu.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
source test/e2e/lib.sh
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
torch_field() { grep '^torch_reference:' "$1" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"; }
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv,noheader | sed 's/^/gpu: /'

sections=${BENCH_GPU_SECTIONS:-table train}
if [[ " $sections " == *" table "* ]]; then
  echo "== table: GpuHashTable against the device's copy bandwidth"
  "$BUILD/bench/gpu_bench" --dim 8 --keys $((1 << 26)) --runs 3
  "$BUILD/bench/gpu_bench" --dim 64 --keys $((1 << 23)) --runs 3
fi
[[ " $sections " == *" train "* ]] || exit 0

echo "== train: strata-train --device cuda against PyTorch on the same GPU"
rows=${BENCH_GPU_ROWS:-1000000}
"$DATAGEN" --out-dir "$WORK/data" --train-rows "$rows" --eval-rows 100000 --cardinality 200000 --seed 11 >/dev/null
model=(--embedding-dim 16 --mlp 512,256,128 --epochs 1 --sparse-optimizer adagrad --dense-optimizer adam
       --lr-sparse 0.05 --lr-dense 0.001 --batch-size 4096)
io=(--train "$WORK/data/train.tsv" --eval "$WORK/data/eval.tsv")
# rates JSONL: the run's examples/s overall (reading the files included), in its later half
# of passes (the pipeline full), and of its train stage alone (examples over the seconds
# the GPU steps took, what PyTorch's loop over tensors already in memory measures).
rates() {
  "$PY" - "$1" <<'PY'
import json, statistics, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
passes = [r for r in recs if r["type"] == "pass"]
final = [r for r in recs if r["type"] == "final"][-1]
late = passes[len(passes) // 2:]
train = sum(p["examples"] for p in passes) / sum(p["train_s"] for p in passes)
print(final["examples_per_s"], statistics.median(p["examples_per_s"] for p in late), train, final["eval_auc"])
PY
}
# stages JSONL: the later passes' median seconds per pipeline stage, which shows the bound.
stages() {
  "$PY" - "$1" <<'PY'
import json, statistics, sys
passes = [r for r in map(json.loads, open(sys.argv[1])) if r["type"] == "pass"]
late = passes[len(passes) // 2:]
print("  later passes, median s:", " ".join(
    f"{k}={statistics.median(p[k] for p in late):.3f}" for k in ("read_s", "pull_s", "stage_s", "train_s", "push_s", "wall_s")),
    f"keys={int(statistics.median(p['keys'] for p in late))}")
PY
}
all=() late=() stage=() t=()
for r in $(seq "$RUNS"); do
  $MPIRUN -np 1 "$TRAIN" "${model[@]}" "${io[@]}" --device cuda --pass-examples 131072 \
    --ssd-dir "$WORK/ssd-$r" --metrics-out "$WORK/s-$r.jsonl" >"$WORK/s.log" 2>&1 || { tail -20 "$WORK/s.log"; exit 1; }
  read -r a l g auc <<<"$(rates "$WORK/s-$r.jsonl")"
  all+=("$a") late+=("$l") stage+=("$g")
  "$PY" tools/bench/torch_reference.py "${model[@]}" "${io[@]}" --device cuda >"$WORK/t.log" 2>&1 \
    || { tail -20 "$WORK/t.log"; exit 1; }
  t+=("$(torch_field "$WORK/t.log" examples_per_s)")
done
grep -m1 "trains on" "$WORK/s.log" | sed 's/^/  /' || true
stages "$WORK/s-$RUNS.jsonl"
line() { printf '  %-44s %10.0f examples/s  (runs: %s)\n' "$1" "$(median "${@:2}")" "$(printf '%.0f ' "${@:2}")"; }
line "strata-train --device cuda, whole run" "${all[@]}"
line "strata-train --device cuda, later passes" "${late[@]}"
line "strata-train --device cuda, train stage" "${stage[@]}"
line "torch --device cuda, training loop" "${t[@]}"
echo "  eval AUC: strata $auc, torch $(torch_field "$WORK/t.log" eval_auc)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
tm=$(median "${t[@]}")
echo "bench-gpu: strata/torch examples/s: whole run $(ratio "$(median "${all[@]}")" "$tm"), later passes $(ratio "$(median "${late[@]}")" "$tm"), train stage $(ratio "$(median "${stage[@]}")" "$tm")"
