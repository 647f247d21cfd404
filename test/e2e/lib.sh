# Shared helpers for end-to-end tests: mpirun flags that work as root and with more ranks
# than cores, a scratch directory, and small assertions that exit 1 with a message.
BUILD=${BUILD:-build}
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader,tcp --mca btl_tcp_if_include lo"
export OMPI_MCA_rmaps_base_oversubscribe=1
# OpenBLAS's and OpenMP's idle threads would spin, taking the pipeline's cores (README).
export OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
TRAIN="$BUILD/strata-train"
DATAGEN="$BUILD/strata-datagen"
INSPECT="$BUILD/strata-inspect"
SHARED_DATA=${SHARED_DATA:-../shared/data}
# The Python of the helpers below (a machine whose python3 with numpy is elsewhere sets PY3).
PY3=${PY3:-/usr/bin/python3}

scratch() { mktemp -d "${TMPDIR:-/tmp}/strata-e2e.XXXXXX"; }
die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "skipped: $*"; exit 77; }
# json_field FILE KEY: value of KEY in the last JSONL record of FILE.
json_field() { tail -1 "$1" | "$PY3" -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }
# expect STATUS PATTERN CMD...: runs CMD, checks its exit status and that its stdout+stderr
# match PATTERN (grep -E); dies showing the output otherwise. Works with and without set -e.
expect() {
  local want=$1 pattern=$2; shift 2
  local out rc
  out=$("$@" 2>&1) && rc=0 || rc=$?
  [ "$rc" -eq "$want" ] || die "exit $rc (want $want) from: $* -- output: $out"
  grep -qE -- "$pattern" <<<"$out" || die "output of '$*' lacks /$pattern/: $out"
  echo "ok: exit $rc, /$pattern/"
}
# die_with_log LOG MESSAGE: prints LOG (the output of what failed), then dies with MESSAGE.
die_with_log() { cat "$1"; die "$2"; }
# run_logged LOG WHAT CMD...: runs CMD with its stdout+stderr in LOG; if CMD fails, prints
# LOG and dies with "WHAT failed".
run_logged() {
  local log=$1 what=$2; shift 2
  "$@" >"$log" 2>&1 || die_with_log "$log" "$what failed"
}
# seed_pick SEED N: a number in [0, N) fixed by SEED (the same on every machine and run).
seed_pick() { echo $(( ($1 * 1103515245 + 12345) % 2147483648 % $2 )); }
# passes_done JSONL: the per-pass records a run's metrics file holds so far.
passes_done() { local n; n=$(grep -c '"type":"pass"' "$1" 2>/dev/null); echo "${n:-0}"; }
# wait_passes JSONL N PID: returns once the run has N pass records or PID has ended.
wait_passes() { while [ "$(passes_done "$1")" -lt "$2" ] && kill -0 "$3" 2>/dev/null; do sleep 0.1; done; }
# mpirun_of PID: the mpirun that PID (a background subshell of this test) started.
mpirun_of() { local p; until p=$(pgrep -P "$1" -x mpirun); do kill -0 "$1" 2>/dev/null || return 1; sleep 0.05; done; echo "$p"; }
# scores_as_trained CKPT EVAL JSONL: strata-predict scores EVAL with CKPT to bitwise the
# eval logloss of the run's final JSONL record, and tools/python/strata_torch.py agrees with
# its probabilities to 1e-5.
scores_as_trained() {
  local out; out=$(mktemp -d "${TMPDIR:-/tmp}/strata-scores.XXXXXX")
  run_logged "$out/predict.log" "strata-predict" "$BUILD/strata-predict" --checkpoint "$1" --input "$2" \
    --out "$out/predict.tsv" --threads 1
  local got; got=$(grep -o "logloss=[0-9.e-]*" "$out/predict.log") || die_with_log "$out/predict.log" "no metrics line"
  "$PY3" -c "import sys; sys.exit(float(sys.argv[1]) != float(sys.argv[2]))" "${got#logloss=}" \
    "$(json_field "$3" eval_logloss)" || die "strata-predict's $got differs from the trainer's eval"
  run_logged "$out/torch.log" "strata_torch.py" "$PY3" tools/python/strata_torch.py \
    --checkpoint "$1" --input "$2" --out "$out/torch.tsv"
  "$PY3" - "$out/predict.tsv" "$out/torch.tsv" <<'PY' || die "strata_torch.py disagrees with strata-predict"
import sys
import numpy as np
a, b = np.loadtxt(sys.argv[1]), np.loadtxt(sys.argv[2])
sys.exit(0 if a.shape == b.shape and np.abs(a - b).max() <= 1e-5 else 1)
PY
  rm -rf "$out"
}
# same_run DIR A B: runs A and B of run_topology ended with bitwise the same eval logloss and
# exported rows.
same_run() {
  [ "$(json_field "$1/$2.jsonl" eval_logloss)" = "$(json_field "$1/$3.jsonl" eval_logloss)" ] \
    || die "$3's eval logloss differs from $2's"
  "$PY3" test/e2e/compare_rows.py "$1/rows-$2" "$1/rows-$3" 0
}
# run_topology DIR NAME RxG [flags...]: strata-train with configs/tiny.flags on R ranks of G
# workers (one thread each); its log, JSONL and exported rows are named NAME in DIR. Prints
# the run's eval logloss.
run_topology() {
  local dir=$1 name=$2 topo=$3; shift 3
  run_logged "$dir/$name.log" "run $name" \
    $MPIRUN -np "${topo%x*}" "$TRAIN" --config configs/tiny.flags --workers-per-rank "${topo#*x}" --threads 1 \
    --metrics-out "$dir/$name.jsonl" --export-rows "$dir/rows-$name" "$@"
  echo "$name: eval logloss $(json_field "$dir/$name.jsonl" eval_logloss)"
}
