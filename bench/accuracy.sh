#!/usr/bin/env bash
# Test accuracy of dp-train in bfloat16 autocast against float32: the MLP for 10 epochs
# and the CNN for 5 (lr 0.05), seeds 0, 1, 2 by default, each run
#   build/bin/dp-train --model M --epochs E [--lr X] --precision P --seed S --json --quiet
# Appends one JSON line per run to FILE (the dp-train line with "seed" added; runs already
# in FILE are not run again, so an interrupted run continues), then prints the table: per
# model the mean over the seeds in fp32 and bf16 and their difference in points.
#
#   bench/accuracy.sh [--out FILE] [--seeds 0,1,2] [--models mlp,cnn] [--devices LIST]
#                     [--build DIR] [--table-only]
set -euo pipefail
cd "$(dirname "$0")/.."

out=build/accuracy.jsonl seeds=0,1,2 models=mlp,cnn devices=all build=build table_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --devices) devices=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --table-only) table_only=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "accuracy.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
touch "$out"

if [ "$table_only" = 0 ]; then
  [ -x "$build/bin/dp-train" ] || { echo "accuracy.sh: build dp-train first ($build/bin/dp-train)" >&2; exit 2; }
  for model in ${models//,/ }; do
    if [ "$model" = cnn ]; then epochs=5 lr=0.05; else epochs=10 lr=0.1; fi
    for seed in ${seeds//,/ }; do
      for precision in fp32 bf16; do
        if grep -q "\"model\": \"$model\".*\"precision\": \"$precision\".*\"seed\": $seed}" "$out"; then
          continue
        fi
        echo "accuracy.sh: $model $precision seed $seed" >&2
        line=$("$build/bin/dp-train" --model "$model" --epochs "$epochs" --lr "$lr" \
          --precision "$precision" --seed "$seed" --devices "$devices" --json --quiet 2>/dev/null | tail -n 1)
        echo "${line%\}}, \"seed\": $seed}" >> "$out"
      done
    done
  done
fi

/usr/bin/python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'model':5} {'epochs':>6} {'seeds':>7} {'fp32 %':>24} {'bf16 %':>24} {'bf16 - fp32':>12}")
for model in ("mlp", "cnn"):
    acc = {p: {r["seed"]: r["test_accuracy"] * 100 for r in rows
               if r["model"] == model and r["precision"] == p} for p in ("fp32", "bf16")}
    seeds = sorted(set(acc["fp32"]) & set(acc["bf16"]))
    if not seeds:
        continue
    epochs = next(r["epochs"] for r in rows if r["model"] == model)
    cell = lambda p: (f"{statistics.mean(acc[p][s] for s in seeds):.2f} ("
                      + ", ".join(f"{acc[p][s]:.2f}" for s in seeds) + ")")
    diff = statistics.mean(acc["bf16"][s] - acc["fp32"][s] for s in seeds)
    print(f"{model:5} {epochs:6} {','.join(map(str, seeds)):>7} {cell('fp32'):>24} "
          f"{cell('bf16'):>24} {diff:+11.2f}")
PY
