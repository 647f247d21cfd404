#!/usr/bin/env bash
# Apache Arrow's C++ Parquet reader, for Parquet input. Debian 12 packages no Arrow, and
# building it takes an hour; the pyarrow wheel on PyPI ships libarrow, libparquet and their
# headers, built for manylinux_2_28 with the new C++ ABI, so Debian's g++ 12 links them.
# This unpacks that wheel, and numpy 2 (pyarrow's Python side needs it; the tests write
# Parquet files with it), into deps/python, used in place: nothing is installed system-wide,
# and a build without it still works (it reads no Parquet). Runs once; pinned versions.
set -euo pipefail
cd "$(dirname "$0")/.."
PYARROW=26.0.1
NUMPY=2.4.6
DEST=deps/python
[ -f "$DEST/.complete-$PYARROW" ] && exit 0
PY=/usr/bin/python3
pyver=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
echo "make deps: fetching pyarrow $PYARROW and numpy $NUMPY wheels (Parquet input)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m pip download --quiet --no-deps --only-binary=:all: --python-version "$pyver" \
  --platform manylinux_2_28_x86_64 --dest "$tmp" "pyarrow==$PYARROW" "numpy==$NUMPY"
rm -rf "$DEST"
mkdir -p "$DEST"
for wheel in "$tmp"/*.whl; do "$PY" -m zipfile -e "$wheel" "$DEST"; done
touch "$DEST/.complete-$PYARROW"
