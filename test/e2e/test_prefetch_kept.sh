#!/usr/bin/env bash
# PrefetchSpan (strata/common/prefetch.h) survives the optimizer: a loop that prefetches
# each row a few places ahead, compiled with the build's flags, holds a prefetch
# instruction for each cache line of the span. (GCC drops a call, not yet inlined, to a
# function of prefetches alone as free of effects; the table loops had lost theirs so.)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
cat >"$dir/loop.cc" <<'SRC'
#include "strata/common/prefetch.h"
float SumFirsts(const float* const* rows, int n) {
  float sum = 0;
  for (int i = 0; i < n; ++i) {
    if (i + 8 < n) strata::PrefetchSpan(rows[i + 8], 136);
    sum += rows[i][0];
  }
  return sum;
}
SRC
opt=$(make -s --no-print-directory print-OPT)
# shellcheck disable=SC2086  # the flags are a space-separated list
"${CXX:-g++}" -std=c++23 $opt -Iinclude -S -o "$dir/loop.s" "$dir/loop.cc"
n=$(grep -cE '^[[:space:]]*prefetch' "$dir/loop.s" || true)
[ "$n" -ge 3 ] || die "PrefetchSpan over 136 bytes in a loop compiled ($opt) to $n prefetch instructions, want 3 or more"
echo "ok: $n prefetch instructions ($opt)"
