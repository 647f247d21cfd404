#!/usr/bin/env bash
# README.md's flag tables are generated: this rewrites the lines between its "BEGIN flag
# table" and "END flag table" markers with `strata-train --help-markdown`. With --check it
# changes nothing and exits 1, showing the difference, when the README is stale.
#   BUILD=build scripts/update-readme-flags.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
source test/e2e/lib.sh
readme=README.md
tmp=$(mktemp); trap 'rm -f "$tmp" "$tmp.table"' EXIT
{ echo; $MPIRUN -np 1 "$TRAIN" --help-markdown; echo; } >"$tmp.table"
grep -q '^<!-- BEGIN flag table' "$readme" && grep -q '^<!-- END flag table' "$readme" \
  || { echo "$readme lacks the BEGIN/END flag table markers" >&2; exit 1; }
awk -v table="$tmp.table" '
  /^<!-- END flag table/ { skip = 0 }
  !skip { print }
  /^<!-- BEGIN flag table/ { while ((getline line < table) > 0) print line; skip = 1 }
' "$readme" >"$tmp"
if [ "${1:-}" = --check ]; then
  diff -u "$readme" "$tmp" && exit 0
  echo "$readme's flag table differs from '$TRAIN --help-markdown'; regenerate it with: BUILD=$BUILD scripts/update-readme-flags.sh" >&2
  exit 1
fi
cat "$tmp" >"$readme"
