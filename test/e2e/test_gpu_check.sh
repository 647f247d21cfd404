#!/usr/bin/env bash
# scripts/gpu-check.sh runs end to end on this machine with the build at hand (no bundle,
# no rebuild): where no GPU is visible each GPU step ends in one "skipped" line and the
# check still succeeds; where one is, its steps must pass.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
out=$(OUT="$dir/logs" GPU_BUNDLE="$dir/no-bundle" GPU_CHECK_STEPS="unit e2e bench" BUILD="$BUILD" \
      scripts/gpu-check.sh 2>&1) || { echo "$out"; die "gpu-check failed"; }
echo "$out"
grep -q "^PASS unit-cuda" <<<"$out" || die "no unit-cuda step"
for f in summary.txt environment.log unit-cuda.log e2e-gpu.log bench-gpu.log; do
  [ -s "$dir/logs/$f" ] || die "gpu-check wrote no $f"
done
if ! nvidia-smi -L >/dev/null 2>&1; then
  grep -q "^SKIP e2e-gpu: skipped: no CUDA device visible" <<<"$out" || die "the GPU e2e step did not skip"
  grep -q "^SKIP bench-gpu: bench-gpu: skipped: no CUDA device visible" <<<"$out" || die "the GPU bench did not skip"
fi
grep -q "0 failed" "$dir/logs/summary.txt" || die "summary counts a failure"
echo "ok: gpu-check runs end to end here"
