#!/usr/bin/env python3
"""Prints the GPU benchmark table: dp_gpu_bench's figures beside PyTorch's and cudaMemcpy's
from the same run, with the ratio and the issue's target for each.

  python3 bench/dp_gpu_bench_table.py dp_bench.jsonl torch_bench.jsonl [more.jsonl ...]

Training lines that name a convolution engine other than the default ("conv":
"im2col", "cudnn-benchmark": dp_gpu_bench run under DP_CUDA_CONV) get rows of their own.

Each input holds one JSON object per line (other lines are ignored). Missing or failed
measurements show as "n/a" or "failed". Exit status 0 always: the table is a report.
"""
import json
import sys


def load(paths):
    rows = []
    for path in paths:
        try:
            with open(path) as f:
                for line in f:
                    line = line.strip()
                    if line.startswith("{"):
                        try:
                            rows.append(json.loads(line))
                        except json.JSONDecodeError:
                            pass
        except OSError as e:
            print(f"(cannot read {path}: {e})")
    return rows


def find(rows, **want):
    for r in rows:
        if all(r.get(k) == v for k, v in want.items()):
            return r
    return None


def value(r, key):
    if r is None:
        return None, "n/a"
    if "error" in r:
        return None, "failed"
    v = r.get(key)
    return v, (f"{v:,.1f}" if isinstance(v, (int, float)) else "n/a")


def main(argv):
    rows = load(argv[1:])
    table = []  # (what, unit, ours, theirs, reference name, target)
    # The default engine's rows always (n/a when missing), the others' when measured.
    engines = ["default"] + sorted({r["conv"] for r in rows if r.get("bench") == "train"
                                    and r.get("conv") not in (None, "default")})
    for model in ("mlp", "cnn"):
        for batch in (256, 4096):
            torch1 = find(rows, impl="torch", bench="train", model=model, batch=batch, devices=1)
            for devices in (1, 2):
                where = "1 GPU" if devices == 1 else "DataParallel, 2 logical devices on 1 GPU"
                for conv in engines:
                    ours = find(rows, impl="dp", bench="train", model=model, batch=batch,
                                devices=devices, conv=conv)
                    if conv != "default" and ours is None:
                        continue
                    engine = "" if conv == "default" else f", DP_CUDA_CONV={conv}"
                    table.append((f"{model.upper()} training, batch {batch}, {where}{engine}",
                                  "samples/s", value(ours, "samples_per_s"),
                                  value(torch1, "samples_per_s"), "torch eager, 1 GPU", 1.0))
    table.append(("sgemm 8192^3 float32 (TF32 off)", "TFLOP/s",
                  value(find(rows, impl="dp", bench="sgemm"), "tflops"),
                  value(find(rows, impl="torch", bench="sgemm"), "tflops"), "torch.matmul", 0.95))
    for ours_name, ref_name, what in (("scatter", "h2d_pageable", "1 GiB scatter host -> 2 devices"),
                                      ("gather", "d2h_pageable", "1 GiB gather 2 devices -> host")):
        table.append((what, "GB/s", value(find(rows, impl="dp", bench=ours_name), "gbps"),
                      value(find(rows, impl="cudaMemcpy", bench=ref_name), "gbps"),
                      f"cudaMemcpy ({ref_name.replace('_', ', ')})", 0.90))
    for ref_name in ("h2d_pinned", "d2h_pinned"):
        r = find(rows, impl="cudaMemcpy", bench=ref_name)
        table.append((f"cudaMemcpy 1 GiB {ref_name.replace('_', ', ')} (for reference)", "GB/s",
                      (None, ""), value(r, "gbps"), "cudaMemcpy", None))

    print("| benchmark | unit | libdataparallel | reference | reference is | ratio | target | met |")
    print("|---|---|---:|---:|---|---:|---:|:-:|")
    for what, unit, (ov, os_), (tv, ts), ref, target in table:
        ratio = f"{ov / tv:.2f}x" if ov is not None and tv else ""
        met = ""
        if target is not None:
            met = "yes" if (ov is not None and tv and ov / tv >= target) else "NO"
        tgt = f">= {target:.2f}x" if target is not None else ""
        print(f"| {what} | {unit} | {os_} | {ts} | {ref} | {ratio} | {tgt} | {met} |")
    failed = [r for r in rows if "error" in r]
    for r in failed:
        print(f"\nfailed: {r.get('impl')} {r.get('bench')} {r.get('model', '')} "
              f"{r.get('batch', '')}: {r['error']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
