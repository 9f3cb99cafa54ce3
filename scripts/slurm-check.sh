#!/usr/bin/env bash
# DistributedDataParallel under Slurm's srun. Makes a one-node Slurm cluster on this
# machine for the length of the check: munged, slurmctld and slurmd started here (no init
# system needed), their configuration, keys, logs and state in a temporary directory, on
# two free ports. Then, for each MPI the build has a plugin for (Open MPI through
# srun --mpi=pmix, MPICH through srun --mpi=pmi2), runs under srun:
#   - the DDP suite (test_distributed_ddp) on 2 ranks x 1 and x 2 CPU devices, each rank
#     saying it is one of 2 (not a job of its own);
#   - dp-train --distributed on 2 ranks, whose weights must be those of one process over
#     two devices;
#   - the whole-job scenarios (tests/distributed/test_scenarios.py, srun standing in for
#     mpiexec): mismatched models on 3 ranks, a killed rank, a rank that never comes, the
#     timeout ending a rank busy outside MPI and naming each collective of a step;
#   - the timeout's MPI_Abort ending the job step by itself, without --kill-on-bad-exit.
# Prints one line per check; on any exit it stops the daemons it started and removes the
# directory. Exits non-zero when a check fails. Needs root (slurmd starts the ranks) and
# the Release build; installs its packages through scripts/install-deps.sh.
# Environment: BUILD_DIR (default build), DP_SLURM_CHECK_SECONDS (the checks' time
# together, default 300; they take about 35 s).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_DIR=$(realpath "${BUILD_DIR:-build}")
# Counted once the daemons run: a check that hangs ends there, with the daemons stopped,
# instead of holding CI.
CHECK_SECONDS=${DP_SLURM_CHECK_SECONDS:-300}
PYTHON=/usr/bin/python3

if [ "$(id -u)" -ne 0 ]; then
  echo "slurm-check: needs root (slurmd starts every rank)" >&2
  exit 1
fi
for f in bin/test_distributed_ddp bin/ddp_scenarios bin/dp-train lib/libdataparallel_mpi.so; do
  if [ ! -e "$BUILD_DIR/$f" ]; then
    echo "slurm-check: $BUILD_DIR/$f is not built (an MPI is needed for it)" >&2
    exit 1
  fi
done

scripts/install-deps.sh

# An outer Slurm job's variables would point srun at that job, in another cluster.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^SLURM_' || true)

STATE=$(mktemp -d "${TMPDIR:-/tmp}/dp-slurm.XXXXXX")
chmod 755 "$STATE"  # munged wants every directory above its socket searchable by all
mkdir -m 755 "$STATE/munge" "$STATE/spool" "$STATE/log" "$STATE/work"
mkdir -m 700 "$STATE/key" "$STATE/state"
export SLURM_CONF=$STATE/slurm.conf
pids=()  # munged, slurmctld, slurmd

# Waits up to $1 seconds for the command after it to succeed.
wait_for() {
  local seconds=$1
  shift
  local end=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $end ]; then return 1; fi
    sleep 0.5
  done
}

# Whether process $1 runs (a child that ended stays a zombie until it is waited for).
running() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat:0:1}" != Z ]
}
stopped() { ! running "$1"; }

# slurmstepd listens on NODE_JOB.STEP in the spool directory and removes it when it ends.
no_steps_left() {
  ! compgen -G "$STATE/spool/${node}_[0-9]*" >/dev/null
}

cleanup() {
  local rc=$?
  set +e
  if [ ${#pids[@]} -ge 3 ]; then
    squeue -h -o %i 2>/dev/null | xargs -r scancel 2>/dev/null
    if ! wait_for 30 no_steps_left; then
      echo "slurm-check: job steps still running after 30 s:" "$STATE/spool/${node}"_* >&2
      rc=1
    fi
  fi
  local pid i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill "$pid" 2>/dev/null
    if ! wait_for 15 stopped "$pid"; then kill -9 "$pid" 2>/dev/null; fi
    wait "$pid" 2>/dev/null
  done
  rm -rf "$STATE"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Prints the daemons' logs' ends and fails the script (setup errors).
setup_failed() {
  echo "slurm-check: $1" >&2
  for f in "$STATE"/log/*; do
    echo "-- $(basename "$f"):" >&2
    tail -n 15 "$f" >&2
  done
  exit 1
}

# Two free TCP ports for slurmctld and slurmd (a real cluster on this machine keeps its own).
read -r ctld_port slurmd_port < <("$PYTHON" -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')

# The node as slurmd finds it (so that the controller never drains it for a mismatch),
# reached at 127.0.0.1 whatever the host name resolves to.
node_line=$(slurmd -C | head -n 1 | sed -E 's/ RealMemory=[0-9]+//')
node=$(sed -E 's/^NodeName=([^ ]+).*/\1/' <<<"$node_line")
cpus=$(sed -E 's/.* CPUs=([0-9]+).*/\1/' <<<"$node_line")
: >"$STATE/plugstack.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=dpcheck
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$STATE/munge/socket
CredType=cred/munge
StateSaveLocation=$STATE/state
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
PlugStackConfig=$STATE/plugstack.conf
# No cgroups: processes tracked by their parents, tasks bound to cores as mpirun binds.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
KillWait=5
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=check Nodes=$node Default=YES MaxTime=10 State=UP
EOF

mungekey --create --keyfile="$STATE/key/munge.key"
munged --foreground --socket="$STATE/munge/socket" --key-file="$STATE/key/munge.key" \
  --pid-file="$STATE/munge/munged.pid" --seed-file="$STATE/munge/munged.seed" \
  --log-file="$STATE/log/munged.log" >"$STATE/log/munged.out" 2>&1 &
pids+=($!)
wait_for 20 test -S "$STATE/munge/socket" || setup_failed "munged did not start"
slurmctld -D -f "$SLURM_CONF" >"$STATE/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" >"$STATE/log/slurmd.out" 2>&1 &
pids+=($!)
node_idle() { [ "$(sinfo -h -n "$node" -o %T)" = idle ]; }
wait_for 60 node_idle || setup_failed "node $node not idle after 60 s: $(sinfo -h -N 2>&1)"
deadline=$((SECONDS + CHECK_SECONDS))

failures=0
# Prints NAME's result; on failure the reason and the end of its LOG.
result() {
  local name=$1 reason=$2 log=$3
  if [ -z "$reason" ]; then
    echo "   $name: ok"
  else
    echo "   $name: FAILED ($reason)"
    tail -n 30 "$log" | awk '{ print "     " $0 }'  # a last line without its newline too
    failures=$((failures + 1))
  fi
}

# COMMAND, ended (TERM, then KILL 10 s later) after SECONDS or when the whole check's
# budget runs out, whichever comes first: srun, when ended, ends its job step.
bounded() {
  local seconds=$1
  shift
  local left=$((deadline - SECONDS))
  if [ "$left" -lt "$seconds" ]; then seconds=$left; fi
  if [ "$seconds" -le 0 ]; then
    echo "slurm-check: the budget of $CHECK_SECONDS s is spent" >&2
    return 124
  fi
  timeout -k 10 "$seconds" "$@"
}

run_srun() {  # SECONDS SRUN-ARGUMENTS...: srun for the MPI under test, bounded
  local seconds=$1
  shift
  bounded "$seconds" srun --mpi="$mpi_type" "$@"
}

# dp-train's common arguments: 32 steps of batch 64, one epoch.
TRAIN_ARGS=(--limit 2048 --batch 64 --epochs 1 --checkpoint ck.safetensors --json --quiet)
mkdir "$STATE/work/one-process"
(cd "$STATE/work/one-process" && DP_CPU_DEVICES=2 bounded 60 "$BUILD_DIR/bin/dp-train" \
  --devices cpu:0,cpu:1 "${TRAIN_ARGS[@]}" >out.log 2>&1) ||
  setup_failed "dp-train on one process failed: $(tail -n 5 "$STATE/work/one-process/out.log")"

# mpiexec -np N PROGRAM ... as srun, for test_scenarios.py (DP_MPIEXEC): --kill-on-bad-exit
# as mpirun ends a job whose rank fails; more ranks than cores only with --overcommit.
cat >"$STATE/srun-mpiexec" <<EOF
#!/bin/sh
if [ "\$1" = --version ]; then exec srun --version; fi
[ "\$1" = -np ] || { echo "usage: \$0 -np N PROGRAM [ARGUMENT...]" >&2; exit 2; }
n=\$2
shift 2
over=
if [ "\$n" -gt $cpus ]; then over=--overcommit; fi
exec srun --mpi="\$SLURM_CHECK_MPI" --kill-on-bad-exit=1 \$over -n "\$n" "\$@"
EOF
chmod +x "$STATE/srun-mpiexec"
# Not under srun: the two that need Open MPI's mpirun (orte_abort_on_non_zero_status), and
# the overlap seen in the trace, a timing check of the reducer that the mpirun suites make.
SCENARIOS_DESELECTED=(
  test_the_wait_past_the_timeout_names_the_collective_and_the_step
  test_the_timeout_ends_a_collective_the_caller_runs_itself
  test_a_bucket_allreduce_starts_before_the_first_layers_backward_ends
)

mpis=()
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  mpis+=("Open MPI:pmix:$BUILD_DIR/lib/libdataparallel_mpi.so")
fi
if [ -e "$BUILD_DIR/lib/libdataparallel_mpi_mpich.so" ]; then
  mpis+=("MPICH:pmi2:$BUILD_DIR/lib/libdataparallel_mpi_mpich.so")
fi
if [ ${#mpis[@]} -eq 0 ]; then
  echo "slurm-check: no MPI plugin of Open MPI or MPICH in $BUILD_DIR/lib" >&2
  exit 1
fi

for entry in "${mpis[@]}"; do
  IFS=: read -r mpi_name mpi_type plugin <<<"$entry"
  label="srun --mpi=$mpi_type, $mpi_name"
  tag=$(tr -dc 'a-z0-9' <<<"${mpi_name,,}")-$mpi_type
  export DP_MPI_PLUGIN=$plugin DP_SPIN_US=0

  for devices in 1 2; do
    log=$STATE/log/ddp-$tag-$devices.log
    reason=""
    rc=0
    DP_TEST_LOCAL_DEVICES=$devices DP_DISTRIBUTED_TIMEOUT=60 \
      run_srun 60 -n 2 --kill-on-bad-exit=1 "$BUILD_DIR/bin/test_distributed_ddp" \
      >"$log" 2>&1 || rc=$?
    for rank in 1 0; do
      grep -q "^rank $rank: MLP, 2 ranks x $devices devices" "$log" ||
        reason="rank $rank did not train as one of 2 ranks"
    done
    if [ $rc -ne 0 ]; then reason="exit code $rc${reason:+; $reason}"; fi
    result "$label: DDP suite, 2 ranks x $devices devices" "$reason" "$log"
  done

  work=$STATE/work/train-$tag
  log=$work/out.log
  mkdir "$work"
  reason=""
  rc=0
  (cd "$work" && DP_DISTRIBUTED_TIMEOUT=60 run_srun 60 -n 2 --kill-on-bad-exit=1 \
    "$BUILD_DIR/bin/dp-train" --distributed --devices cpu:0 "${TRAIN_ARGS[@]}" \
    >"$log" 2>&1) || rc=$?
  if [ $rc -ne 0 ]; then
    reason="exit code $rc"
  elif [ "$(grep -c '^{' "$log")" != 1 ] || ! grep -q '"ranks": 2,' "$log"; then
    reason="not one JSON line from rank 0 of 2 ranks"
  elif ! "$PYTHON" - "$work/ck.safetensors" "$STATE/work/one-process/ck.safetensors" \
      "$ROOT/tests/train" >>"$log" 2>&1 <<'EOF'; then
# The tolerance of tests/train/test_distributed.py's assert_same_training.
import pathlib, sys
import numpy as np
sys.path.insert(0, sys.argv[3])
from reference import read_safetensors
a, b = (read_safetensors(pathlib.Path(p)) for p in sys.argv[1:3])
assert a.keys() == b.keys() and a, (sorted(a), sorted(b))
for name in a:
    np.testing.assert_allclose(a[name], b[name], rtol=1e-5, atol=1e-6, err_msg=name)
EOF
    reason="weights differ from one process over two devices"
  fi
  result "$label: dp-train --distributed, 2 ranks, the weights of one process" "$reason" "$log"

  log=$STATE/log/scenarios-$tag.log
  reason=""
  deselect=()
  for t in "${SCENARIOS_DESELECTED[@]}"; do
    deselect+=(--deselect "tests/distributed/test_scenarios.py::$t")
  done
  if ! SLURM_CHECK_MPI=$mpi_type DP_MPIEXEC=$STATE/srun-mpiexec \
      DP_SCENARIOS=$BUILD_DIR/bin/ddp_scenarios \
      bounded 150 "$PYTHON" -m pytest -q -p no:cacheprovider -rs \
      tests/distributed/test_scenarios.py "${deselect[@]}" >"$log" 2>&1; then
    reason="pytest failed"
  elif grep -q "skipped" "$log"; then
    reason="a scenario skipped"
  fi
  result "$label: whole-job scenarios (mismatch on 3 ranks, killed, late, stalled rank)" \
    "$reason" "$log"

  # Without --kill-on-bad-exit (Slurm's default) only MPI_Abort can end rank 1, asleep
  # outside MPI: rank 0's timeout must end the step, and soon.
  log=$STATE/log/abort-$tag.log
  reason=""
  started=$SECONDS
  if DP_DISTRIBUTED_TIMEOUT=3 run_srun 40 -n 2 "$BUILD_DIR/bin/ddp_scenarios" stall-barrier \
      >"$log" 2>&1; then
    reason="the job step succeeded"
  elif [ $((SECONDS - started)) -ge 30 ]; then
    reason="the step took $((SECONDS - started)) s"
  elif ! grep -q "rank 0 of 2 waited 3 s for barrier" "$log"; then
    reason="no timeout message from rank 0 of 2"
  fi
  result "$label: the timeout's MPI_Abort ends the step" "$reason" "$log"
done
unset DP_MPI_PLUGIN DP_SPIN_US

if [ $failures -gt 0 ]; then
  echo "slurm-check: $failures check(s) failed"
  exit 1
fi
