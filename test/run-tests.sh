#!/usr/bin/env bash
# Runs every test of `make test` and ends with one line "N passed, N failed".
#   unit: doctest cases of $BUILD/strata-unit-tests (each case counts once)
#   mpi:  doctest cases of $BUILD/strata-mpi-tests under mpirun -np 3, then -np 1
#   e2e:  each test/e2e/*.sh and test/slurm/*.sh counts once (exit 0 pass, 77 skip, else fail)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
source test/e2e/lib.sh
passed=0; failed=0; skipped=0
log_dir=$(mktemp -d)

count_doctest() {  # $1 = log file
  local line
  line=$(grep -E '^\[doctest\] test cases:' "$1" | tail -1)
  if [ -z "$line" ]; then failed=$((failed + 1)); return; fi
  local p f s
  p=$(sed -E 's/.*\| *([0-9]+) passed.*/\1/' <<<"$line")
  f=$(sed -E 's/.*\| *([0-9]+) failed.*/\1/' <<<"$line")
  s=$(sed -E 's/.*\| *([0-9]+) skipped.*/\1/' <<<"$line")
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
}

echo "== unit tests"
"$BUILD/strata-unit-tests" --no-colors 2>&1 | tee "$log_dir/unit.log" | grep -E '^\[doctest\]|ERROR|FATAL|SKIP' || true
count_doctest "$log_dir/unit.log"

if [ -x "$BUILD/strata-mpi-tests" ]; then
  for np in 3 1; do  # one rank takes paths of its own (no MPI call for its own keys and sums)
    echo "== mpi tests ($np rank$([ "$np" -gt 1 ] && echo s))"
    $MPIRUN -np "$np" "$BUILD/strata-mpi-tests" --no-colors 2>&1 | tee "$log_dir/mpi$np.log" | grep -E '^\[doctest\]|ERROR|FATAL' || true
    count_doctest "$log_dir/mpi$np.log"
  done
fi

echo "== end-to-end tests (test/e2e, and Slurm in test/slurm)"
for t in test/e2e/test_*.sh test/slurm/test_*.sh; do
  name=$(basename "$t" .sh)
  start=$(date +%s)
  bash "$t" >"$log_dir/$name.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  if [ $rc -eq 0 ]; then passed=$((passed + 1)); echo "PASS $name (${secs}s)"
  elif [ $rc -eq 77 ]; then skipped=$((skipped + 1)); echo "SKIP $name: $(tail -1 "$log_dir/$name.log")"
  else failed=$((failed + 1)); echo "FAIL $name (rc=$rc, ${secs}s); last lines:"; tail -25 "$log_dir/$name.log" | sed 's/^/    /'
  fi
done
rm -rf "$log_dir"
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
