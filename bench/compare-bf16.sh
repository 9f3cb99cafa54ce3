#!/usr/bin/env bash
# dp-train in bfloat16 autocast against float32, on 1 and on all CPU devices, beside
# PyTorch 2.x under torch.autocast("cpu", torch.bfloat16) (bench/torch_reference.py
# --autocast bf16 with the benchmark venv's python, bench/torch2-venv.sh): R rounds, each
# running every configuration once back to back, the same model, epochs, batch and data.
# Prints the median samples/s, the ratios of the medians and each round's ratios:
# bf16 / fp32 per device count, and dp-train bf16 against PyTorch's best autocast
# configuration. First lines: the device query (dp_device_bf16_native for cpu:0 and
# oneDNN's ISA, `dp-bench bf16-device`) and the PyTorch version.
#
#   bench/compare-bf16.sh [--model mlp|cnn] [--epochs N] [--batch N] [--lr X] [--rounds R]
#                         [--limit N] [--build DIR] [--python PY] [--torch-configs LIST]
#                         [--torch-fp32] [--cast-afresh] [--no-torch]
#
# --python: the interpreter for torch_reference.py (default: the venv's, when
# bench/torch2-venv.sh has made it, else /usr/bin/python3 with Debian's PyTorch 1.13, and
# the table says which). --torch-configs: torch_reference.py's --configs (default
# 1proc-1thread,1proc-2thread,ddp-2x1). --torch-fp32: PyTorch in float32 too.
# --cast-afresh: dp-train bf16 also with DP_AUTOCAST_CACHE=0 (every use of a weight casts
# it afresh, docs/autocast.md), and the ratio of the default to it. --no-torch: no PyTorch.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=bench/compare_common.sh
source bench/compare_common.sh
python="" torch_fp32=0 afresh=0 torch=1
configs="1proc-1thread,1proc-2thread,ddp-2x$((cpus / 2 > 0 ? cpus / 2 : 1))"
while [ $# -gt 0 ]; do
  compare_option "$@" && shift "$compare_shift" && continue
  case "$1" in
    --python) python=$2; shift 2 ;;
    --torch-configs) configs=$2; shift 2 ;;
    --torch-fp32) torch_fp32=1; shift ;;
    --cast-afresh) afresh=1; shift ;;
    --no-torch) torch=0; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "compare-bf16.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
compare_setup compare-bf16.sh
[ -x "$build/bin/dp-bench" ] || { echo "compare-bf16.sh: build dp-bench first ($build/bin/dp-bench)" >&2; exit 2; }
if [ -z "$python" ]; then
  venv=${DP_TORCH2_VENV:-$HOME/.cache/libdataparallel/torch2-venv}
  python=/usr/bin/python3
  [ -x "$venv/bin/python" ] && python=$venv/bin/python
fi
torch_version=none
if [ "$torch" = 1 ]; then torch_version=$("$python" -c 'import torch; print(torch.__version__)'); fi

# One dp-train run's JSON line into the log: dp_train LABEL ROUND DEVICES PRECISION.
dp_train() {
  "$build/bin/dp-train" --model "$model" --epochs "$epochs" --batch "$batch" --lr "$lr" \
    --devices "$3" --precision "$4" --quiet --json "${limit_args[@]}" 2>/dev/null |
    tail -n 1 | sed "s/^/$1\t$2\t/" >> "$log"
}

"$build/bin/dp-bench" bf16-device
echo "{\"torch\": \"$torch_version\", \"python\": \"$python\"}"
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds: dp-train" >&2
  for devs in cpu:0 "$devices_all"; do
    for precision in fp32 bf16; do
      dp_train dp "$round" "$devs" "$precision"
    done
    if [ "$afresh" = 1 ]; then
      DP_AUTOCAST_CACHE=0 dp_train dp-afresh "$round" "$devs" bf16
    fi
  done
  [ "$torch" = 1 ] || continue
  echo "round $round/$rounds: torch_reference.py ($torch_version)" >&2
  autocasts=(bf16)
  if [ "$torch_fp32" = 1 ]; then autocasts=(none bf16); fi
  for ac in "${autocasts[@]}"; do
    "$python" bench/torch_reference.py --model "$model" --epochs "$epochs" --batch "$batch" \
      --lr "$lr" "${limit_args[@]}" --configs "$configs" --autocast "$ac" 2>/dev/null |
      sed "s/^/torch\t$round\t/" >> "$log"
  done
done

"$python" - "$log" "$model" "$epochs" "$batch" "$rounds" "$torch_version" <<'PY'
import json, statistics, sys
log, model, epochs, batch, rounds, torch_version = sys.argv[1:]
runs, acc = {}, {}
for line in open(log):
    impl, rnd, payload = line.rstrip("\n").split("\t", 2)
    j = json.loads(payload)
    if impl.startswith("dp"):
        n = len(j["devices"])
        afresh = " casts afresh" if impl == "dp-afresh" else ""
        key = f"dp-train {j['precision']}{afresh}, {n} CPU device{'s' if n > 1 else ''}"
    else:
        key = f"PyTorch {torch_version} {j['config']}, {j.get('autocast', 'fp32')}"
    # one figure per round: a multi-epoch PyTorch run gives one line per epoch, keep the last
    runs.setdefault(key, {})[int(rnd)] = j["samples_per_s"]
    acc.setdefault(key, {})[int(rnd)] = j["test_accuracy"]
med = {k: statistics.median(v.values()) for k, v in runs.items()}
rnds = sorted(set.intersection(*(set(v) for v in runs.values())))
print(f"model {model}, {epochs} epoch(s), batch {batch}, {rounds} round(s), median samples/s")
print(f"{'configuration':52} {'samples/s':>10} {'test acc':>9}")
for k in sorted(med, key=lambda k: (not k.startswith("dp"), k)):
    print(f"{k:52} {med[k]:10.0f} {statistics.median(acc[k].values()) * 100:8.2f}%")

def ratio(num, den):
    per = " ".join(f"{runs[num][r] / runs[den][r]:.2f}" for r in rnds)
    return f"{med[num] / med[den]:.2f}x (rounds: {per})"

def best_of(keys):
    return max(keys, key=lambda k: med[k])

dp = [k for k in med if k.startswith("dp")]
for n in sorted({k.split(", ")[1] for k in dp}):
    b, f = f"dp-train bf16, {n}", f"dp-train fp32, {n}"
    if b in med and f in med:
        print(f"dp-train bf16 / fp32, {n}: {ratio(b, f)}")
    a = f"dp-train bf16 casts afresh, {n}"
    if b in med and a in med:
        print(f"dp-train bf16 kept casts / casts afresh, {n}: {ratio(b, a)}")
auto = [k for k in med if k.startswith("PyTorch") and k.endswith("bf16")]
if auto:
    t = best_of(auto)
    print(f"best PyTorch autocast configuration: {t} ({med[t]:.0f} samples/s)")
    for k in sorted(dp):
        if " bf16," in k:
            rounds_best = " ".join(f"{runs[k][r] / max(runs[a][r] for a in auto):.2f}" for r in rnds)
            print(f"{k} / PyTorch's best autocast: {med[k] / med[t]:.2f}x (rounds, against "
                  f"that round's best: {rounds_best})")
    one = [k for k in auto if "1proc-1thread" in k]
    b1 = [k for k in dp if k.startswith("dp-train bf16, 1 ")]
    if one and b1:
        print(f"{b1[0]} / {one[0]}: {ratio(b1[0], one[0])}")
fp = [k for k in med if k.startswith("PyTorch") and k.endswith("fp32")]
for k in sorted(fp):
    a = k[: -len("fp32")] + "bf16"
    if a in med:
        print(f"PyTorch autocast bf16 / fp32, {k.split(' ', 2)[2].split(',')[0]}: {ratio(a, k)}")
PY
