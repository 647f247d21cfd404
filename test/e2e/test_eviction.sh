#!/usr/bin/env bash
# TTL eviction (--evict-unseen-passes 3) with admission (--admit-min-count 2), on keys most
# of which are not seen again: 1x4, 2x2 and 4x1 (ranks x workers), the pipeline off and a
# small cache over the SSD-PS give bitwise the same eval logloss, rows and per-pass
# rows_evicted; no row of a checkpoint is older than eviction allows; the eviction ledger's
# total is in the checkpoint (strata-inspect summary); delta exports mark the evicted keys
# deleted and base + deltas fold to the checkpoint; a resume from an increment whose chain
# holds evictions, on another topology, is bitwise the uninterrupted run.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 24000 --eval-rows 3000 --cardinality 200000 --seed 3 >/dev/null
run() {  # NAME TOPOLOGY [flags...]
  run_topology "$dir" "$1" "$2" --pass-examples 2000 --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv" \
    --evict-unseen-passes 3 --admit-min-count 2 "${@:3}"
}
same_run() {  # A B: bitwise the same eval logloss, keys, per-pass ledger and rows
  /usr/bin/python3 - "$dir/$1.jsonl" "$dir/$2.jsonl" <<'PY' || die "$2 differs from $1"
import json, sys
a, b = ([json.loads(line) for line in open(p)] for p in sys.argv[1:3])
ledger = lambda recs: [(r["pass"], r["rows_evicted"], r["rows_admitted"], r["keys_pending"]) for r in recs if r["type"] == "pass"]
assert ledger(a)[-len(ledger(b)):] == ledger(b), (ledger(a), ledger(b))
assert a[-1]["keys"] == b[-1]["keys"] and a[-1]["eval_logloss"] == b[-1]["eval_logloss"], (a[-1], b[-1])
PY
  /usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-$1" "$dir/rows-$2" 0
}
run evict 1x4 --checkpoint-dir "$dir/ck" --checkpoint-every-passes 1 --keep-checkpoints 20 \
  --checkpoint-incremental 4 --export-delta-dir "$dir/deltas"
grep -q "rows evicted [0-9]*" "$dir/evict.log" || die_with_log "$dir/evict.log" "no eviction in the progress line"
for spec in "2x2:2x2" "4x1:4x1" "no-pipeline:2x2 --pipeline off" \
            "small-cache:2x2 --mem-cache-gb 0.0002 --ssd-dir $dir/ssd --ssd-segment-mb 1"; do
  run "${spec%%:*}" ${spec#*:}
  same_run evict "${spec%%:*}"
done

/usr/bin/python3 - "$dir" <<'PY' || die "the eviction ledger or the checkpoint's rows are wrong"
import glob, json, sys
import h5py
d = sys.argv[1]
passes = [r for r in map(json.loads, open(f"{d}/evict.jsonl")) if r["type"] == "pass"]
evicted = sum(r["rows_evicted"] for r in passes)
last = f"{d}/ck/" + open(f"{d}/ck/LATEST").read().strip()
with h5py.File(f"{last}/meta.h5") as meta:
    total, done = int(meta.attrs["rows_evicted"]), int(meta.attrs["pass"])
full = f"{d}/ck/ckpt-00000009"  # checkpoints 1, 5 and 9 are full, the others increments
oldest = min(int(h5py.File(f)["rows/last_pass"][...].min()) for f in glob.glob(f"{full}/rows-*.h5"))
print(f"{evicted} rows evicted over {len(passes)} passes (checkpoint of pass {done - 1}: {total}); the oldest row "
      f"of the full checkpoint after pass 8 was last seen in pass {oldest}")
assert evicted > 0 and total == evicted and oldest + 3 > 8
PY
"$INSPECT" summary "$dir/ck" | grep -q "^evicted      [1-9][0-9]* rows in all" || die "summary shows no eviction ledger"
ls "$dir"/deltas/delta-000002/deleted-0.h5 >/dev/null || die "a delta export marks no deleted keys"
expect 0 "^OK +base \+ 11 deltas equal" "$INSPECT" fold "$dir"/deltas/delta-* --check "$dir/ck/ckpt-00000012"

# Pass 11 is an increment on 10 and 9 (full); their evictions are in the chain.
run resumed 2x2 --resume="$dir/ck/ckpt-00000011"
same_run evict resumed
