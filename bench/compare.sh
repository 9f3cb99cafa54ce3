#!/usr/bin/env bash
# Throughput of dp-train against PyTorch on this machine: runs dp-train (DataParallel over
# 1 and over all CPU devices; with --distributed also DistributedDataParallel, one rank
# per core with one CPU device each, under mpirun) and bench/torch_reference.py (1
# process with 1 and 2 threads, DistributedDataParallel with one process per core)
# alternately, R rounds each, the same model, epochs, global batch and data, and prints a
# table of the median samples/s and the ratio to PyTorch's best configuration.
#
#   bench/compare.sh [--model mlp|cnn] [--epochs N] [--batch N] [--lr X] [--rounds R]
#                    [--limit N] [--build DIR] [--torch-reference FILE] [--distributed]
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=bench/compare_common.sh
source bench/compare_common.sh
distributed=0
ref=bench/torch_reference.py
while [ $# -gt 0 ]; do
  compare_option "$@" && shift "$compare_shift" && continue
  case "$1" in
    --torch-reference) ref=$2; shift 2 ;;
    --distributed) distributed=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
compare_setup compare.sh
[ -f "$ref" ] || { echo "compare.sh: $ref not found (--torch-reference FILE)" >&2; exit 2; }

for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds: dp-train" >&2
  for devs in cpu:0 "$devices_all"; do
    "$build/bin/dp-train" --model "$model" --epochs "$epochs" --batch "$batch" --lr "$lr" \
      --devices "$devs" --quiet --json "${limit_args[@]}" | tail -n 1 |
      sed "s/^/dp\t$devs\t/" >> "$log"
  done
  if [ "$distributed" = 1 ]; then
    mpi_flags=()
    if mpirun --version 2>&1 | grep -qE "Open MPI|OpenRTE"; then
      mpi_flags=(--allow-run-as-root --oversubscribe)
    fi
    mpirun "${mpi_flags[@]}" -np "$cpus" "$build/bin/dp-train" --distributed --model "$model" \
      --epochs "$epochs" --batch "$batch" --lr "$lr" --devices cpu:0 --quiet --json \
      "${limit_args[@]}" | tail -n 1 | sed "s/^/dp\tddp\t/" >> "$log"
  fi
  echo "round $round/$rounds: torch_reference.py" >&2
  /usr/bin/python3 "$ref" --model "$model" --epochs "$epochs" --batch "$batch" --lr "$lr" \
    "${limit_args[@]}" --configs "1proc-1thread,1proc-2thread,ddp-2x$((cpus / 2 > 0 ? cpus / 2 : 1))" 2>/dev/null |
    sed "s/^/torch\t-\t/" >> "$log"
done

/usr/bin/python3 - "$log" "$model" "$epochs" "$batch" "$rounds" <<'PY'
import json, statistics, sys
log, model, epochs, batch, rounds = sys.argv[1:]
runs = {}
acc = {}
for line in open(log):
    impl, devs, payload = line.rstrip("\n").split("\t", 2)
    j = json.loads(payload)
    if impl == "dp" and "ranks" in j:
        key = f"dp-train, DDP over {j['ranks']} ranks x {len(j['devices'])} CPU device"
        runs.setdefault(key, []).append(j["samples_per_s"])
        acc.setdefault(key, []).append(j["test_accuracy"])
    elif impl == "dp":
        n = len(j["devices"])
        key = f"dp-train, DataParallel over {n} CPU device{'s' if n > 1 else ''}"
        runs.setdefault(key, []).append(j["samples_per_s"])
        acc.setdefault(key, []).append(j["test_accuracy"])
    else:
        key = f"PyTorch {j['config']}"
        runs.setdefault(key, []).append(j["samples_per_s"])
        acc.setdefault(key, []).append(j["test_accuracy"])
med = {k: statistics.median(v) for k, v in runs.items()}
best_torch = max((v, k) for k, v in med.items() if k.startswith("PyTorch"))
print(f"model {model}, {epochs} epoch(s), batch {batch}, {rounds} round(s) each, median samples/s")
print(f"{'configuration':48} {'samples/s':>10} {'vs best torch':>14} {'test acc':>9}")
for k in sorted(med, key=lambda k: (not k.startswith("dp"), k)):
    print(f"{k:48} {med[k]:10.0f} {med[k] / best_torch[0]:13.2f}x {statistics.median(acc[k]) * 100:8.2f}%")
print(f"best PyTorch configuration: {best_torch[1]} ({best_torch[0]:.0f} samples/s)")

# The targets' ratios, from the medians and round by round (dp-train and PyTorch of the
# same round ran back to back, so a round's ratio shares that round's machine load).
dp_keys = sorted(k for k in med if k.startswith("dp"))
torch_keys = [k for k in med if k.startswith("PyTorch")]
n_rounds = min(len(v) for v in runs.values())
def per_round(num, den):
    return " ".join(f"{num(r) / den(r):.2f}" for r in range(n_rounds))
one = "PyTorch 1proc-1thread"
for k in dp_keys:
    best_of = lambda r: max(runs[t][r] for t in torch_keys)
    print(f"{k}: {med[k] / best_torch[0]:.2f}x best PyTorch (rounds: "
          f"{per_round(lambda r: runs[k][r], best_of)})", end="")
    if one in runs:
        print(f", {med[k] / med[one]:.2f}x {one} (rounds: "
              f"{per_round(lambda r: runs[k][r], lambda r: runs[one][r])})", end="")
    print()
dp_keys = sorted(k for k in dp_keys if "DataParallel" in k)
ddp_keys = [k for k in med if "DDP" in k]
if len(dp_keys) == 2:
    k1, kn = dp_keys
    print(f"dp-train, {kn.split(' over ')[1]} / {k1.split(' over ')[1]}: "
          f"{med[kn] / med[k1]:.2f}x (rounds: "
          f"{per_round(lambda r: runs[kn][r], lambda r: runs[k1][r])})")
    for kd in ddp_keys:
        print(f"{kd} / {kn.split(', ')[1]}: {med[kd] / med[kn]:.2f}x (rounds: "
              f"{per_round(lambda r: runs[kd][r], lambda r: runs[kn][r])})")
for kd in ddp_keys:
    for t in [t for t in torch_keys if "ddp" in t]:
        print(f"{kd} / {t}: {med[kd] / med[t]:.2f}x (rounds: "
              f"{per_round(lambda r: runs[kd][r], lambda r: runs[t][r])})")
PY
