# Shared helpers for end-to-end tests: mpirun flags that work as root and with more ranks
# than cores, a scratch directory, and small assertions that exit 1 with a message.
BUILD=${BUILD:-build}
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader,tcp --mca btl_tcp_if_include lo"
export OMPI_MCA_rmaps_base_oversubscribe=1
TRAIN="$BUILD/strata-train"
DATAGEN="$BUILD/strata-datagen"
SHARED_DATA=${SHARED_DATA:-../shared/data}

scratch() { mktemp -d "${TMPDIR:-/tmp}/strata-e2e.XXXXXX"; }
die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "skipped: $*"; exit 77; }
# json_field FILE KEY: value of KEY in the last JSONL record of FILE.
json_field() { tail -1 "$1" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }
