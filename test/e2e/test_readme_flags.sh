#!/usr/bin/env bash
# README.md's flag tables are exactly what `strata-train --help-markdown` prints, so the
# documentation cannot drift from the flag table that parses the flags.
set -uo pipefail
cd "$(dirname "$0")/../.."
source test/e2e/lib.sh
scripts/update-readme-flags.sh --check \
  || die "README.md's flag table is stale; regenerate it with: BUILD=$BUILD scripts/update-readme-flags.sh"
echo "README.md's flag table matches $TRAIN --help-markdown"
