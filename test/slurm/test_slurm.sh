#!/usr/bin/env bash
# jobs/strata-train.slurm on a real Slurm: Debian's slurmctld, slurmd and munge (installed
# when missing) started on localhost as processes this test owns (one slurmctld, two slurmd
# nodes n1 and n2), with their own munge key and socket and free ports, and stopped at its
# end. Checks:
#   (a) a 2-rank job across both nodes (srun --mpi=pmix) trains to an eval AUC;
#   (b) a bad flag fails the job with strata-train's message in the job's output;
#   (c) `scontrol requeue` once the job has run a number of passes drawn from a seed (where
#       it holds, STRATA_HOLD_AFTER_PASS, so it cannot finish first): the ranks get
#       SIGTERM, stop at a pass boundary after a checkpoint, the job is requeued,
#       resumes (--resume=auto) and ends bitwise equal (rows, eval metrics) to an
#       uninterrupted job.
# Needs root; skipped otherwise, or when the packages cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/e2e/lib.sh
[ "$(id -u)" -eq 0 ] || skip "needs root to run slurmctld and slurmd"
for b in slurmctld slurmd sbatch munged; do
  command -v "$b" >/dev/null && continue
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge \
    >/dev/null 2>&1 || skip "cannot install Debian's slurmctld, slurmd and munge"
  break
done
repo=$PWD
dir=$(scratch)
export SLURM_CONF=$dir/slurm.conf
stop_all() {
  scancel --user=root 2>/dev/null || true
  for pid_file in "$dir"/slurmd-n1.pid "$dir"/slurmd-n2.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
    [ -s "$pid_file" ] && kill "$(cat "$pid_file")" 2>/dev/null || true
  done
  sleep 1
  rm -rf "$dir"
}
trap stop_all EXIT

free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
head -c 1024 /dev/urandom >"$dir/munge/munge.key"
chmod 600 "$dir/munge/munge.key"
munged --socket="$dir/munge/sock" --key-file="$dir/munge/munge.key" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" -f || skip "munged does not start here"
cat >"$SLURM_CONF" <<EOF
ClusterName=strata-test
SlurmctldHost=localhost
SlurmctldPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobRequeue=1
ReturnToService=2
NodeName=n1 NodeHostname=$(hostname) NodeAddr=127.0.0.1 Port=$(free_port) CPUs=2 State=UNKNOWN
NodeName=n2 NodeHostname=$(hostname) NodeAddr=127.0.0.1 Port=$(free_port) CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
EOF
mkdir -p "$dir/pmix"
echo "PMIxCliTmpDirBase=$dir/pmix" >"$dir/mpi.conf"  # PMIx steps' files stay in the scratch directory
slurmctld -i || die "slurmctld did not start ($dir/slurmctld.log)"
for node in n1 n2; do
  mkdir -p "$dir/spool/$node"
  slurmd -N "$node" || die "slurmd $node did not start ($dir/slurmd-$node.log)"
done
for _ in $(seq 1 100); do [ "$(sinfo -h -N -o %t 2>/dev/null | grep -c idle)" -eq 2 ] && break; sleep 0.2; done
[ "$(sinfo -h -N -o %t | grep -c idle)" -eq 2 ] || die "the two Slurm nodes never became idle: $(sinfo -N 2>&1)"
echo "ok: slurmctld and slurmd up ($(sinfo -h -o '%P %D %t'))"

"$DATAGEN" --out-dir "$dir/data" --train-rows 20000 --eval-rows 1000 --cardinality 5000 --seed 23 >/dev/null
cd "$dir"
export STRATA_HOME=$repo STRATA_TRAIN=$repo/$TRAIN STRATA_CONFIG=$repo/configs/tiny.flags STRATA_CKPT=$dir/ckpt
submit() {  # sbatch flags for a 2-rank job on one node (unless told otherwise), then the script's arguments
  sbatch --parsable --nodes=1 --ntasks=2 --ntasks-per-node=2 --cpus-per-task=1 "$@"
}
job_state() { scontrol show job "$1" | grep -o "JobState=[A-Z_]*" | cut -d= -f2; }
job_ended() { case $(job_state "$1") in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) return 0 ;; esac; return 1; }
# wait_job ID: until the job has ended (a requeued job is let start at once).
wait_job() {
  for _ in $(seq 1 600); do
    job_ended "$1" && return 0
    [ "$(job_state "$1")" = PENDING ] && { scontrol update jobid="$1" StartTime=now 2>/dev/null || true; }
    sleep 0.5
  done
  die "job $1 did not end: $(scontrol show job "$1")"
}
data=(--train "$dir/data/train.tsv" --eval "$dir/data/eval.tsv")

# (a) A 2-rank job across the two nodes trains to an eval AUC.
# Open MPI's mpirun, as root on loopback, launches its daemons through srun: Debian's Slurm
# cannot run PMIx steps across two slurmd on one host (they share /tmp and the spool path).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
id=$(STRATA_LAUNCH=mpirun submit --wait --nodes=2 --ntasks-per-node=1 "$repo/jobs/strata-train.slurm" "${data[@]}" --pass-examples 2000) \
  || die_with_log "strata-train-$id.out" "job (a) failed"
grep -q "on n\[1-2\]: mpirun" "strata-train-$id.out" || die_with_log "strata-train-$id.out" "job (a) did not run on both nodes with mpirun"
grep -q "strata-train: 2 ranks x" "strata-train-$id.out" || die_with_log "strata-train-$id.out" "job (a) did not train on 2 ranks"
auc=$(json_field "strata-train-$id.jsonl" eval_auc)
echo "ok: (a) 2-rank job $id on nodes n1 and n2: eval AUC $auc"

# (b) A bad flag fails the job, with the message in its output.
id=$(submit --wait "$repo/jobs/strata-train.slurm" "${data[@]}" --batch-size abc) && die "job (b) with a bad flag succeeded"
grep -q "strata-train: --batch-size.*abc" "strata-train-$id.out" || die_with_log "strata-train-$id.out" "job (b): no message naming --batch-size"
echo "ok: (b) a bad flag fails the job with the message in its output"

# (c) Requeued mid-run, the job resumes and ends as an uninterrupted one does.
long=("${data[@]}" --pass-examples 500 --epochs 10 --checkpoint-every-passes 5 --export-rows)
id=$(STRATA_CKPT=$dir/ck-full submit --wait "$repo/jobs/strata-train.slurm" "${long[@]}" "$dir/rows-full") \
  || die "the uninterrupted job failed"
full=$id
# The job holds after a pass drawn from a seed until its stop signal (STRATA_HOLD_AFTER_PASS),
# so the requeue cannot come after the job has run to its end.
hold=$(( 5 + $(seed_pick 23 40) ))
id=$(STRATA_CKPT=$dir/ck-requeued STRATA_HOLD_AFTER_PASS=$hold submit "$repo/jobs/strata-train.slurm" "${long[@]}" \
     "$dir/rows-requeued")
# Only an ended job stops the wait: a state scontrol could not report (slurmctld busy on a
# loaded machine) is no reason to requeue a job that has not reached its hold.
for _ in $(seq 1 1200); do
  [ "$(passes_done "strata-train-$id.jsonl")" -ge "$hold" ] && break
  job_ended "$id" && break
  sleep 0.1
done
[ "$(passes_done "strata-train-$id.jsonl")" -ge "$hold" ] \
  || die_with_log "strata-train-$id.out" "job $id never reached pass $hold (state $(job_state "$id"))"
for attempt in 1 2 3 4 5; do
  scontrol requeue "$id" && break
  [ "$attempt" -lt 5 ] || die "scontrol requeue $id failed"
  sleep 1
done
wait_job "$id"
[ "$(job_state "$id")" = COMPLETED ] || die_with_log "strata-train-$id.out" "the requeued job ended $(job_state "$id")"
grep -q "resumed after pass" "strata-train-$id.out" || die_with_log "strata-train-$id.out" "the requeued job did not resume"
for f in eval_logloss eval_auc examples steps keys; do
  [ "$(json_field "strata-train-$id.jsonl" $f)" = "$(json_field "strata-train-$full.jsonl" $f)" ] \
    || die "requeued job: $f differs from the uninterrupted job's"
done
/usr/bin/python3 "$repo/test/e2e/compare_rows.py" "$dir/rows-full" "$dir/rows-requeued" 0
echo "ok: (c) requeued job $id: $(grep -m1 -o 'stopped by SIG[A-Z0-9]* after pass [0-9]*' "strata-train-$id.out" || echo 'killed before a stop'), resumed, bitwise equal to job $full"
