#!/usr/bin/env bash
# Incremental checkpoints (--checkpoint-incremental 4, a checkpoint every pass, with
# admission): between full checkpoints each one holds only the rows trained since the one
# before; retention (--keep-checkpoints 2) keeps the bases the kept increments build on;
# strata-inspect verify checks the chain; the model of the newest increment is bitwise the
# model of a run with full checkpoints only (strata-inspect diff), strata-predict scores with
# it as the trainer evaluated and tools/python/strata_torch.py loads the chain; a resume from a mid-run increment on another topology is
# bitwise the uninterrupted run; a missing base is named.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=$(scratch); trap 'rm -rf "$dir"' EXIT
"$DATAGEN" --out-dir "$dir/data" --train-rows 16000 --eval-rows 3000 --cardinality 20000 --seed 9 >/dev/null
run() {  # NAME TOPOLOGY [flags...]
  run_topology "$dir" "$1" "$2" --pass-examples 2000 --train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv" \
    --admit-min-count 2 --checkpoint-every-passes 1 "${@:3}"
}
run full 2x1 --checkpoint-dir "$dir/ck-full" --keep-checkpoints 20
run inc 2x1 --checkpoint-dir "$dir/ck-inc" --keep-checkpoints 20 --checkpoint-incremental 4
run pruned 2x1 --checkpoint-dir "$dir/ck-pruned" --keep-checkpoints 2 --checkpoint-incremental 4

kind() { "$INSPECT" summary "$1" | sed -n 's/^checkpoint .* (\([a-z]*\), format .*/\1/p'; }
rows_bytes() { du -cb "$1"/rows-*.h5 | tail -1 | cut -f1; }
kinds=""
for c in "$dir"/ck-inc/ckpt-*; do kinds="$kinds $(kind "$c")"; done
[ "$kinds" = " full increment increment increment full increment increment increment" ] \
  || die "checkpoint kinds of passes 1..8:$kinds"
full_bytes=$(rows_bytes "$dir/ck-inc/ckpt-00000005"); inc_bytes=$(rows_bytes "$dir/ck-inc/ckpt-00000006")
echo "rows files: full checkpoint $full_bytes bytes, the increment after it $inc_bytes bytes"
[ "$inc_bytes" -lt "$full_bytes" ] || die "an increment is not smaller than a full checkpoint"
grep -q "checkpoint ckpt-00000006 (increment on ckpt-00000005): [0-9]* rows, [0-9.]* MB in" "$dir/inc.log" \
  || die_with_log "$dir/inc.log" "no line reports the increment"

# Retention kept what the newest two need: 8 and 7 are increments on 6 and 5 (full).
kept=$(cd "$dir/ck-pruned" && ls -d ckpt-* | tr '\n' ' ')
[ "$kept" = "ckpt-00000005 ckpt-00000006 ckpt-00000007 ckpt-00000008 " ] || die "kept: $kept"
"$INSPECT" verify "$dir/ck-pruned" >"$dir/verify.txt" || die_with_log "$dir/verify.txt" "verify of the chain failed"
[ "$(grep -c '^OK ' "$dir/verify.txt")" = 4 ] || die_with_log "$dir/verify.txt" "verify did not check 4 links"

"$INSPECT" diff "$dir/ck-inc" "$dir/ck-full" >"$dir/diff.txt" || die_with_log "$dir/diff.txt" "diff failed"
grep -q "identical    yes" "$dir/diff.txt" || die_with_log "$dir/diff.txt" "base + increments differ from the full checkpoint"
scores_as_trained "$dir/ck-inc" "$dir/data/eval.tsv" "$dir/inc.jsonl"
echo "ok: the chain's model is the full checkpoint's; strata-predict scores it as the trainer did, strata_torch.py agrees"

# Resume from pass 7 (an increment on 6 and 5) on 1 rank x 2 workers.
run resumed 1x2 --checkpoint-dir "$dir/ck-resumed" --resume="$dir/ck-inc/ckpt-00000007"
[ "$(json_field "$dir/resumed.jsonl" eval_logloss)" = "$(json_field "$dir/inc.jsonl" eval_logloss)" ] \
  || die "the resumed run's eval logloss differs"
/usr/bin/python3 test/e2e/compare_rows.py "$dir/rows-inc" "$dir/rows-resumed" 0

rm -rf "$dir/ck-inc/ckpt-00000006"
expect 1 "ckpt-00000007 is an increment on pass 6, but its base .*ckpt-00000006 is missing" \
  run broken 2x1 --checkpoint-dir "$dir/ck-broken" --resume="$dir/ck-inc/ckpt-00000007"
