#!/usr/bin/env bash
# make gpu-check: the GPU path validated in one run on a machine with CUDA, NCCL and PyTorch
# but possibly no MPI, HDF5, OpenBLAS or network. It unpacks the .deb files of `make
# gpu-bundle` (deps/gpu-bundle) into a private prefix, builds there, runs every `cuda:` unit
# test (the multi-rank ones under mpirun with 2 and 3 ranks), the GPU end-to-end test
# (test/e2e/test_gpu.sh) and the GPU benchmarks (scripts/bench-gpu.sh), and writes each
# step's log and a summary under $OUT (else $BUILD/gpu-check). Where no GPU is visible it
# runs the same steps, each GPU step ending in one "skipped" line. Exit status: 0 when no step failed.
#
#   GPU_CHECK_PREBUILT=1  use the binaries already in $BUILD for the tests and benchmarks
#                         (built elsewhere); the build is then still checked, into
#                         $BUILD-check, beside the tests.
#   GPU_CHECK_STEPS       the steps to run after the set-up, of "build unit e2e bench
#                         sanitizer" (default: all).
#   GPU_BUNDLE, GPU_PREFIX  where the .deb files are, where to unpack them.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BUNDLE=${GPU_BUNDLE:-deps/gpu-bundle}
PREFIX=${GPU_PREFIX:-${TMPDIR:-/tmp}/strata-gpu-prefix}
LOGS=${OUT:-$BUILD/gpu-check}
mkdir -p "$LOGS"
SUMMARY=$LOGS/summary.txt
: >"$SUMMARY"
failed=0

note() { echo "$*" | tee -a "$SUMMARY"; }
# step NAME CMD...: runs CMD with its output in $LOGS/NAME.log and records the outcome
# (exit 0 passed, 77 skipped, anything else failed).
step() {
  local name=$1; shift
  local start rc
  start=$(date +%s)
  "$@" >"$LOGS/$name.log" 2>&1; rc=$?
  record "$name" "$rc" $(( $(date +%s) - start ))
}
record() {
  local name=$1 rc=$2 took=$3
  case $rc in
    0) note "PASS $name (${took} s)" ;;
    77) note "SKIP $name: $(tail -1 "$LOGS/$name.log")" ;;
    *) note "FAIL $name (exit $rc, ${took} s): $(tail -3 "$LOGS/$name.log" | tr '\n' ' ')"; failed=1 ;;
  esac
}
have_gpu() { nvidia-smi -L >/dev/null 2>&1; }
wanted() { [[ " ${GPU_CHECK_STEPS:-build unit e2e bench sanitizer} " == *" $1 "* ]]; }

environment() {
  uname -a; grep PRETTY_NAME /etc/os-release
  nvidia-smi || echo "nvidia-smi: no GPU visible"
  command -v nvcc && nvcc --version | tail -2
  g++ --version | head -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())' || true
  nproc; free -g | head -2
}

# Unpacks the bundle into $PREFIX and points the loader, PATH and Open MPI at it. Open MPI
# finds its components through OPAL_PREFIX; the names Debian makes with update-alternatives
# (mpirun, mpicxx) are made here as links.
unpack_bundle() {
  local debs=("$BUNDLE"/*.deb)
  [ -e "${debs[0]}" ] || { echo "no .deb files in $BUNDLE (make gpu-bundle): using the system's packages"; return 77; }
  rm -rf "$PREFIX" && mkdir -p "$PREFIX"
  for d in "${debs[@]}"; do extract_deb "$d" || return 1; done
  ln -sf mpirun.openmpi "$PREFIX/usr/bin/mpirun"
  ln -sf mpicxx.openmpi "$PREFIX/usr/bin/mpicxx"
  echo "unpacked ${#debs[@]} packages into $PREFIX"
}
# A .deb is an ar archive whose data.tar.* holds the files; dpkg-deb where there is one.
extract_deb() {
  if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$1" "$PREFIX"; return; fi
  local member
  member=$(ar t "$1" | grep '^data\.tar') || return 1
  local unzip=(-J)
  case $member in *.zst) unzip=(--zstd) ;; *.gz) unzip=(-z) ;; esac
  ar p "$1" "$member" | tar -x "${unzip[@]}" -f - -C "$PREFIX"
}
use_prefix() {
  local lib=$PREFIX/usr/lib/x86_64-linux-gnu
  export PATH=$PREFIX/usr/bin:$PATH OPAL_PREFIX=$PREFIX/usr
  # PMIx looks for its plugins where Debian puts them; a machine's own PMIx may be there.
  export PMIX_MCA_mca_base_component_path=$lib/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
  export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread:$lib/hdf5/serial:$lib/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  BUILD_VARS=(HDF5_CFLAGS="-isystem $PREFIX/usr/include/hdf5/serial"
              HDF5_LIBS="-L$lib/hdf5/serial -lhdf5"
              EXTRA_CXXFLAGS="-isystem $PREFIX/usr/include -isystem $PREFIX/usr/include/x86_64-linux-gnu/openblas-pthread"
              EXTRA_LDFLAGS="-L$lib -L$lib/openblas-pthread $(nccl_link_dir)")
}
# -L of a folder holding libnccl.so where CUDA's own folder lacks it (PyTorch's wheel ships
# only libnccl.so.2).
nccl_link_dir() {
  local cuda_home so
  cuda_home=$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")
  [ -e "$cuda_home/lib64/libnccl.so" ] && return
  so=$(find / -name 'libnccl.so.2' -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$so" ] || return
  mkdir -p "$PREFIX/nccl" && ln -sf "$so" "$PREFIX/nccl/libnccl.so"
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$so")
  echo "-L$PREFIX/nccl"
}

# Adds to LD_LIBRARY_PATH the folder of each library the binaries miss (CUDA's libraries
# may live in PyTorch's wheels rather than the toolkit's folder); prints what each loads.
find_libraries() {
  local bin lib found
  for bin in "$BUILD/strata-train" "$BUILD/strata-unit-tests"; do
    [ -x "$bin" ] || continue
    for lib in $(ldd "$bin" | awk '/not found/ {print $1}'); do
      found=$(find /usr/local /opt /usr/lib -name "$lib" -not -path '*/stubs/*' 2>/dev/null | head -1)
      [ -n "$found" ] || { echo "$bin: $lib not found anywhere"; return 1; }
      export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$found")
      echo "$lib: from $(dirname "$found")"
    done
    ldd "$bin"
  done
}

# The build of strata-train, its unit tests and the GPU benchmark (no Parquet: the
# machine's pyarrow need not match; warnings stay warnings for other compilers).
build() {
  make --no-print-directory -j"$(nproc)" BUILD="$1" ARROW_SOS= WERROR= "${BUILD_VARS[@]}" \
    "$1/strata-train" "$1/strata-datagen" "$1/strata-unit-tests" "$1/strata-mpi-tests" "$1/bench/gpu_bench"
}

unit_tests() {
  have_gpu || echo "no CUDA device visible: each cuda: test returns at once"
  "$BUILD/strata-unit-tests" --no-colors -tc='cuda:*'
}

# The multi-rank tests, every rank on this machine's GPUs (on one GPU, NCCL connects the
# ranks over sockets): 2 ranks, and 3 for slices of uneven length; a hang fails the step,
# with NCCL's account of its set-up and network in the log.
mpi_tests() {
  have_gpu || echo "no CUDA device visible: each cuda: test returns at once"
  source test/e2e/lib.sh
  local np
  for np in 2 3; do
    echo "== $np ranks"
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET timeout -k 5 120 $MPIRUN -np "$np" "$BUILD/strata-mpi-tests" \
      --no-colors -tc='cuda:*' || return 1
  done
}

BUILD_VARS=()
note "gpu-check: $(date -u +%FT%TZ) on $(hostname); build $BUILD; logs in $LOGS"
step environment environment
unpack_bundle >"$LOGS/unpack.log" 2>&1; rc=$?
record unpack "$rc" 0
[ "$rc" -eq 0 ] && use_prefix
if [ "${GPU_CHECK_PREBUILT:-0}" = 1 ]; then
  if wanted build; then
    (step build build "$BUILD-check"; exit "$failed") &
    build_pid=$!
  fi
else
  wanted build && step build build "$BUILD"
  [ -x "$BUILD/strata-unit-tests" ] || { note "gpu-check: no build to test"; exit 1; }
fi
find_libraries >"$LOGS/libraries.log" 2>&1; record libraries $? 0
export NCCL_DEBUG=${NCCL_DEBUG:-WARN} PYTHON=python3 PY3=python3 OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
wanted unit && step unit-cuda unit_tests
wanted unit && step unit-cuda-mpi mpi_tests
wanted e2e && step e2e-gpu env BUILD="$BUILD" bash test/e2e/test_gpu.sh
if [ -n "${build_pid:-}" ]; then wait "$build_pid" || failed=1; fi
wanted bench && step bench-gpu env BUILD="$BUILD" BENCH_GPU_NO_BUILD=1 scripts/bench-gpu.sh
if wanted sanitizer && have_gpu && command -v compute-sanitizer >/dev/null; then
  # Without the case that fails an allocation on purpose, which memcheck counts as an error.
  step sanitizer timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$BUILD/strata-unit-tests" --no-colors -tc='cuda:*' -tce='*BeginPass that failed*'
fi
have_gpu || note "gpu-check: no GPU visible here: the GPU steps skipped"
note "gpu-check: $(grep -c '^PASS' "$SUMMARY") passed, $(grep -c '^FAIL' "$SUMMARY") failed, $(grep -c '^SKIP' "$SUMMARY") skipped"
exit "$failed"
