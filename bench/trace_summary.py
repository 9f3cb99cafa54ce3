#!/usr/bin/env python3
"""Sums up a DP_TRACE timeline: where each thread's time went.

    DP_TRACE=trace.json build/bin/dp-train --model mlp --epochs 1 --devices cpu:0,cpu:1
    bench/trace_summary.py trace.json [--skip-steps N]

For every thread (the caller, each device's worker) and span name: how many spans, their
total time, and the mean per training step (a step is one "optimizer step" span on the
caller). The window starts where step N+1 ends (default N = 5: warm-up) and stops where
the last step ends. Spans nest (the caller's "data parallel forward" holds "scatter" ...
"gather"; a worker's "BroadcastBackward" holds "reduce"), so a thread's busy time is the
sum of its outermost spans. Ends with each worker's share of the wall time that was busy,
and the caller's time per step outside any span (its own work between library calls:
batch assembly, loss, bookkeeping). With two or more devices it ends with how far apart
the replicas start and end in the forward, and end in the backward: the time a step
waits for its slowest device.
"""
import argparse
import bisect
import collections
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--skip-steps", type=int, default=5)
    args = ap.parse_args()

    with open(args.trace) as f:
        events = json.load(f)["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    spans = sorted((e for e in events if e["ph"] == "X"), key=lambda e: e["ts"])
    steps = [e for e in spans if e["name"] == "optimizer step" and names[e["tid"]] == "caller"]
    if len(steps) <= args.skip_steps + 1:
        sys.exit(f"{args.trace}: {len(steps)} optimizer steps, need more than "
                 f"{args.skip_steps + 1} (fewer --skip-steps, or a longer run)")
    begin = steps[args.skip_steps]["ts"] + steps[args.skip_steps]["dur"]
    end = steps[-1]["ts"] + steps[-1]["dur"]
    n_steps = len(steps) - args.skip_steps - 1
    wall = end - begin
    window = [e for e in spans if e["ts"] >= begin and e["ts"] + e["dur"] <= end]

    totals = collections.defaultdict(lambda: [0, 0.0])
    for e in window:
        t = totals[(names[e["tid"]], e["name"])]
        t[0] += 1
        t[1] += e["dur"]

    # Outermost spans per thread: busy time.
    busy = collections.defaultdict(float)
    reach = {}
    for e in window:
        tid = e["tid"]
        if e["ts"] >= reach.get(tid, -1.0):
            busy[tid] += e["dur"]
            reach[tid] = e["ts"] + e["dur"]
        else:
            reach[tid] = max(reach[tid], e["ts"] + e["dur"])

    print(f"{n_steps} steps after the first {args.skip_steps + 1}, "
          f"{wall / n_steps:.1f} us per step")
    print(f"{'thread':<10} {'span':<26} {'count/step':>10} {'us/step':>9} {'us each':>9}")
    for (thread, name), (count, total) in sorted(totals.items(),
                                                 key=lambda kv: (kv[0][0], -kv[1][1])):
        print(f"{thread:<10} {name:<26} {count / n_steps:>10.2f} {total / n_steps:>9.1f} "
              f"{total / count:>9.1f}")
    for tid, name in sorted(names.items()):
        if tid not in busy:
            continue
        label = "busy" if name != "caller" else "in library calls"
        print(f"{name:<10} {label}: {busy[tid] / n_steps:.1f} us per step "
              f"({100 * busy[tid] / wall:.1f}% of the wall time)")
        if name == "caller":
            print(f"{name:<10} outside library calls: {(wall - busy[tid]) / n_steps:.1f} us per step")
    balance(window, names)


def quantiles(values):
    """Median and 90th percentile of a non-empty list."""
    v = sorted(values)
    return v[len(v) // 2], v[min(len(v) - 1, (9 * len(v)) // 10)]


def balance(window, names):
    """How far apart the devices run: a step waits for its slowest replica.

    Forward: per "data parallel forward", how far apart the "replica forward" spans start
    and end. Backward: per "autograd backward", how far apart the threads' last spans end
    before the replicas' gradients are summed (the first "BroadcastBackward"): the thread
    that finishes first waits that long. Only with two or more devices."""
    starts_at = [e["ts"] for e in window]  # the window is sorted by start

    def inside(outer):
        hi = outer["ts"] + outer["dur"]
        first = bisect.bisect_left(starts_at, outer["ts"])
        last = bisect.bisect_right(starts_at, hi)
        return [e for e in window[first:last] if e["ts"] + e["dur"] <= hi]

    calls = [e for e in window if names[e["tid"]] == "caller"]
    starts, ends, bwd_ends = [], [], []
    for fwd in (e for e in calls if e["name"] == "data parallel forward"):
        reps = [e for e in inside(fwd) if e["name"] == "replica forward"]
        if len(reps) > 1:
            starts.append(max(e["ts"] for e in reps) - min(e["ts"] for e in reps))
            ends.append(max(e["ts"] + e["dur"] for e in reps) -
                        min(e["ts"] + e["dur"] for e in reps))
    for bwd in (e for e in calls if e["name"] == "autograd backward"):
        spans = [e for e in inside(bwd) if e is not bwd]
        # The replicas' gradients meet in BroadcastBackward (the sum over replicas): what
        # each thread ran before it is its share of the replicas' backward.
        sync = min((e["ts"] for e in spans if e["name"] == "BroadcastBackward"), default=None)
        if sync is None:
            continue
        last = {}
        for e in spans:
            if e["ts"] + e["dur"] <= sync:
                last[e["tid"]] = max(last.get(e["tid"], 0.0), e["ts"] + e["dur"])
        if len(last) > 1:
            bwd_ends.append(max(last.values()) - min(last.values()))
    if not starts:
        return
    print("replica balance (median / 90th percentile over the steps):")
    print("  forward: replicas start %.1f / %.1f us apart, end %.1f / %.1f us apart"
          % (*quantiles(starts), *quantiles(ends)))
    if bwd_ends:
        print("  backward: the devices' last nodes before the gradient sum end %.1f / %.1f us apart"
              % quantiles(bwd_ends))


if __name__ == "__main__":
    main()
