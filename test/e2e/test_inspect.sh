#!/usr/bin/env bash
# strata-inspect on sample checkpoints (two passes of a 2-rank job and the delta between
# them, written by the checkpoint unit tests' helper): every subcommand works on good
# files, verify and fold --check pass, and damage (flipped byte, truncated file, missing
# rank file) and usage errors give clear messages with exit codes 1 and 2.
set -uo pipefail
cd "$(dirname "$0")/../.."
source test/e2e/lib.sh
[ -x "$INSPECT" ] || skip "$INSPECT not built"
[ -x "$BUILD/strata-unit-tests" ] || skip "$BUILD/strata-unit-tests not built"
dir=$(scratch)
trap 'rm -rf "$dir"' EXIT

run_logged "$dir/gen.log" "writing the sample checkpoints" \
  env STRATA_CKPT_SAMPLE_DIR="$dir" "$BUILD/strata-unit-tests" -tc="ckpt: sample checkpoints for strata-inspect"
base="$dir/ckpt/ckpt-00000001"; full="$dir/ckpt/ckpt-00000002"; delta="$dir/deltas/delta-000001"

# Good checkpoints: every subcommand, through LATEST and by name.
expect 0 "rows +3500 in" "$INSPECT" summary "$dir/ckpt"
expect 0 "slot 2 +1166 rows" "$INSPECT" summary "$full"
expect 0 "layers/0/weight +\(14, 8\)" "$INSPECT" summary "$full"
expect 0 "^OK .*3500 rows in 2 rank files" "$INSPECT" verify "$dir/ckpt"
expect 0 "^OK .*1500 rows" "$INSPECT" verify "$dir/deltas"
expect 0 "^key +slot" "$INSPECT" top "$full" 5 --by norm
expect 0 "^key +slot" "$INSPECT" top "$full" 5 --by freq
"$INSPECT" export "$full" --format tsv --out "$dir/rows.tsv" || die "export failed"
[ "$(wc -l <"$dir/rows.tsv")" -eq 3500 ] || die "export wrote $(wc -l <"$dir/rows.tsv") rows, expected 3500"
[ "$(head -1 "$dir/rows.tsv" | awk -F'\t' '{print NF}')" -eq 11 ] || die "export: expected 11 columns (key, freq, last_pass, 4+4 floats)"
key=$(head -1 "$dir/rows.tsv" | cut -f1)
expect 0 "^key $key .*freq" "$INSPECT" get "$full" "$key"
expect 1 "no row for key 42" "$INSPECT" get "$full" 42
expect 0 "500 added, 0 removed, 1000 changed" "$INSPECT" diff "$base" "$full"
expect 0 "identical +yes" "$INSPECT" diff "$full" "$dir/ckpt"
expect 0 "^OK +base \+ 1 deltas equal" "$INSPECT" fold "$base" "$delta" --check "$dir/ckpt"
for f in meta.h5 rows-0.h5 rows-1.h5; do
  h5dump -H "$full/$f" >/dev/null || die "h5dump -H cannot read $full/$f"
done

# Usage errors and arguments that do not fit together: exit 2.
expect 2 "missing command" "$INSPECT"
expect 2 "unknown command 'bogus'" "$INSPECT" bogus
expect 2 "wrong number of arguments" "$INSPECT" summary
expect 2 "unknown option --color" "$INSPECT" verify "$full" --color red
expect 2 "--by: 'size'" "$INSPECT" top "$full" 3 --by size
expect 2 "N: 'ten'" "$INSPECT" top "$full" ten
expect 2 "--format: 'csv'" "$INSPECT" export "$full" --format csv
expect 2 "applies on top of pass 1, the model is at pass 2" "$INSPECT" fold "$full" "$delta" --check "$full"

# Missing and damaged files: exit 1 with the file named.
expect 1 "neither a checkpoint" "$INSPECT" verify "$dir/nowhere"
cp -r "$full" "$dir/flip"
/usr/bin/python3 - "$dir/flip/rows-1.h5" <<'PY'
import os, sys
path = sys.argv[1]
with open(path, "r+b") as f:
    f.seek(os.path.getsize(path) // 2)
    b = f.read(1)
    f.seek(-1, 1)
    f.write(bytes([b[0] ^ 0x40]))
PY
expect 1 "rows-1.h5" "$INSPECT" verify "$dir/flip"
expect 1 "rows-1.h5" "$INSPECT" summary "$dir/flip"
cp -r "$full" "$dir/trunc"
truncate -s $(( $(stat -c %s "$dir/trunc/rows-0.h5") / 2 )) "$dir/trunc/rows-0.h5"
expect 1 "rows-0.h5.*truncated" "$INSPECT" verify "$dir/trunc"
cp -r "$full" "$dir/missing"
rm "$dir/missing/rows-1.h5"
expect 1 "rows-1.h5: missing" "$INSPECT" verify "$dir/missing"
expect 1 "rows-1.h5: missing" "$INSPECT" fold "$base" "$delta" --check "$dir/missing"
echo "PASS"
