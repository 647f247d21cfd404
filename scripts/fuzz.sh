#!/usr/bin/env bash
# `make fuzz`: runs each libFuzzer target of $BUILD/fuzz (built with FUZZ=1: ASan and UBSan)
# for FUZZ_SECONDS (default 60), starting from its seed corpus in fuzz/corpus/<target>
# (copied, so the repository's seeds stay as they are). Prints each target's executions
# and findings; a crash leaves its input in runs/fuzz/<target>/ and fails the run. Turn a
# crash into a unit test before fixing it.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-fuzz.XXXXXX"); trap 'rm -rf "$work"' EXIT
failed=0
for bin in "$BUILD"/fuzz/*_fuzz; do
  name=$(basename "$bin" _fuzz)
  mkdir -p "$work/$name" "runs/fuzz/$name"
  cp -r "fuzz/corpus/$name/." "$work/$name/" 2>/dev/null || true
  TMPDIR=$work "$bin" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="runs/fuzz/$name/" \
    "$work/$name" >"$work/$name.log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log")
  crashes=$(find "runs/fuzz/$name" -type f | wc -l)
  printf '%-12s %10s executions in %ss, corpus %s inputs, findings: %s\n' "$name" "${runs:-?}" "$seconds" \
    "$(find "$work/$name" -type f | wc -l)" "$crashes"
  if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
    failed=1
    grep -E "ERROR|SUMMARY|==[0-9]+==" "$work/$name.log" | head -5 | sed 's/^/    /'
  fi
done
exit $failed
