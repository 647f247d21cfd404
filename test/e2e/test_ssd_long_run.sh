#!/usr/bin/env bash
# Out-of-core over a long run: 120 passes (2 epochs of 60) with a MEM-PS far smaller than
# the rows, over SSD-PS segments of 1 MiB. Every pass's JSONL record must show the SSD-PS
# within its disk bound (ssd_disk_bytes <= 2 x ssd_live_bytes + one segment per rank),
# compaction must have run, and the eval logloss and every row must be bitwise those of the
# same run with all rows in DRAM. The bound is checked on the snapshot the trainer takes at
# each pass end after waiting for the compactor when over the bound, so it holds whatever
# the timing.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 60000 --eval-rows 5000 --cardinality 20000 --seed 5 >/dev/null
segment_mb=1
common=(--config configs/tiny.flags --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv"
        --pass-examples 1000 --batch-size 250 --epochs 2 --threads 1)
run() {
  local name=$1 np=$2; shift 2
  $MPIRUN -np "$np" "$TRAIN" "${common[@]}" --metrics-out "$dir/$name.jsonl" \
    --export-rows "$dir/rows-$name" "$@" >"$dir/$name.log" 2>&1 \
    || { cat "$dir/$name.log"; die "run $name failed"; }
  echo "$name: eval logloss $(json_field "$dir/$name.jsonl" eval_logloss)"
}
run dram 2 --mem-cache-gb 0
# About 3k of the ~73k rows per rank fit in the cache (72-byte rows + 46 bytes of overhead).
run ssd 2 --mem-cache-gb 0.0004 --ssd-dir "$dir/ssd" --ssd-segment-mb "$segment_mb"
grep -q "ssd [0-9.]*/[0-9.]* MB disk/live" "$dir/ssd.log" || die "the progress line does not show SSD-PS disk/live"
/usr/bin/python3 - "$dir/ssd.jsonl" "$segment_mb" 2 <<'EOF' || die "the SSD-PS broke its disk bound or never compacted"
import json, sys
path, segment_mb, ranks = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
slack = ranks * segment_mb * (1 << 20)
passes = [r for r in map(json.loads, open(path)) if r["type"] == "pass"]
over = [(r["pass"], r["ssd_disk_bytes"], r["ssd_live_bytes"]) for r in passes
        if r["ssd_disk_bytes"] > 2 * r["ssd_live_bytes"] + slack]
compactions = sum(r["compactions"] for r in passes)
last = passes[-1]
print(f"{len(passes)} passes, {compactions} compactions; at the end disk {last['ssd_disk_bytes'] / 1e6:.1f} MB, "
      f"live {last['ssd_live_bytes'] / 1e6:.1f} MB, index {last['ssd_index_bytes'] / 1e6:.1f} MB; "
      f"written {sum(r['ssd_bytes_written'] for r in passes) / 1e6:.1f} MB")
for p, disk, live in over[:5]:
    print(f"pass {p}: disk {disk} > 2 x live {live} + {slack:.0f}")
ok = len(passes) >= 100 and not over and compactions > 0 and last["ssd_live_bytes"] > 0
ok = ok and sum(r["ssd_bytes_written"] for r in passes) > 4 * last["ssd_disk_bytes"]  # writes outran the disk
sys.exit(0 if ok else 1)
EOF
[ "$(json_field "$dir/ssd.jsonl" eval_logloss)" = "$(json_field "$dir/dram.jsonl" eval_logloss)" ] \
  || die "eval logloss with the SSD-PS differs from all rows in DRAM"
/usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-dram" "$dir/rows-ssd" 0
