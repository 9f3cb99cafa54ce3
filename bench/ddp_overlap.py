#!/usr/bin/env python3
"""How much of DDP's gradient allreduce hides behind backward, from DP_TRACE timelines.

    DP_TRACE=/tmp/t.json mpirun -np 2 build/bin/dp-bench-ddp --model mlp --steps 20 --batch 128
    /usr/bin/python3 bench/ddp_overlap.py /tmp/t.rank0.json /tmp/t.rank1.json [--skip-steps N]

One file per rank (dp-bench-ddp writes t.rank<r>.json). A training step is one
"autograd backward" span on the caller; its bucket allreduces are the "bucket allreduce"
spans (argument: the bucket index) that the communication thread ("comm") starts inside
it. Its autograd activity is every other span inside it on the other threads (the
nodes, "gradient sum", "shared slice"; on the caller and the device workers); the
activity ends with the last of them, after which backward only waits for the buckets and
writes the averages back into the gradients (the reducer's backward callback).

For each step, each allreduce's time is split into
  overlapped: before the last autograd span ended, while backward was still computing;
  exposed:    after it, when backward had nothing left to do but wait.
"on nodes" is the part of the overlapped time during which an autograd span was running
(the rest falls in the gaps between them), and "tail" is the time from the end of the
autograd activity to the end of backward: the exposed communication plus the copy-back.
The first N steps (default 3, dp-bench-ddp's warm-up) are left out of the totals.

An allreduce span on one rank also holds the time it waited for the other ranks to reach
the same bucket: a rank whose backward ran faster sees a longer allreduce, so the ranks'
figures differ by their imbalance, and an exposed time is partly that wait.
"""
import argparse
import json
import sys


def load(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    spans = [e for e in events if e["ph"] == "X"]
    return names, spans


def clip(begin, end, lo, hi):
    """Length of [begin, end] inside [lo, hi]."""
    return max(0.0, min(end, hi) - max(begin, lo))


def union_overlap(begin, end, intervals):
    """Length of [begin, end] covered by the union of sorted, merged intervals."""
    return sum(clip(begin, end, lo, hi) for lo, hi in intervals)


def merged(intervals):
    out = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def steps_of(path):
    """Per backward: a dict of its times (microseconds)."""
    names, spans = load(path)
    comm = {tid for tid, name in names.items() if name == "comm"}
    if not comm:
        sys.exit(f"{path}: no thread named 'comm' (no process group in this trace?)")
    backwards = sorted((e for e in spans
                        if e["name"] == "autograd backward" and names[e["tid"]] == "caller"),
                       key=lambda e: e["ts"])
    if not backwards:
        sys.exit(f"{path}: no 'autograd backward' span on the caller")
    allreduces = sorted((e for e in spans
                         if e["name"] == "bucket allreduce" and e["tid"] in comm),
                        key=lambda e: e["ts"])
    others = sorted((e for e in spans
                     if e["tid"] not in comm and e["name"] != "autograd backward"),
                    key=lambda e: e["ts"])
    steps = []
    for bwd in backwards:
        lo, hi = bwd["ts"], bwd["ts"] + bwd["dur"]
        nodes = [e for e in others if e["ts"] >= lo and e["ts"] + e["dur"] <= hi]
        mine = [e for e in allreduces if lo <= e["ts"] <= hi]
        if not nodes:
            continue
        nodes_end = max(e["ts"] + e["dur"] for e in nodes)
        busy = merged([e["ts"], e["ts"] + e["dur"]] for e in nodes)
        step = {"backward": bwd["dur"], "nodes_end": nodes_end - lo, "buckets": len(mine),
                "allreduce": 0.0, "overlapped": 0.0, "on_nodes": 0.0, "exposed": 0.0,
                "tail": hi - nodes_end}
        for a in mine:
            a_lo, a_hi = a["ts"], a["ts"] + a["dur"]
            step["allreduce"] += a["dur"]
            step["overlapped"] += clip(a_lo, a_hi, lo, nodes_end)
            step["on_nodes"] += union_overlap(a_lo, a_hi, busy)
            step["exposed"] += clip(a_lo, a_hi, nodes_end, float("inf"))
        steps.append(step)
    return steps


def fraction(part, whole):
    return part / whole if whole > 0 else float("nan")


def report(path, steps, skip, verbose):
    print(f"{path}: {len(steps)} backwards, the first {skip} left out of the totals")
    if verbose:
        print(f"{'step':>4} {'buckets':>7} {'backward':>9} {'nodes end':>9} {'allreduce':>9} "
              f"{'overlap':>9} {'on nodes':>9} {'exposed':>9} {'tail':>9} {'overlap %':>9}")
        for i, s in enumerate(steps):
            print(f"{i:>4} {s['buckets']:>7} {s['backward'] / 1e3:>9.2f} "
                  f"{s['nodes_end'] / 1e3:>9.2f} {s['allreduce'] / 1e3:>9.2f} "
                  f"{s['overlapped'] / 1e3:>9.2f} {s['on_nodes'] / 1e3:>9.2f} "
                  f"{s['exposed'] / 1e3:>9.2f} {s['tail'] / 1e3:>9.2f} "
                  f"{100 * fraction(s['overlapped'], s['allreduce']):>8.1f}%")
    counted = steps[skip:]
    if not counted:
        sys.exit(f"{path}: {len(steps)} backwards, none after the first {skip} "
                 "(fewer --skip-steps, or more steps)")
    total = {k: sum(s[k] for s in counted) for k in counted[0]}
    n = len(counted)
    print(f"  per step over {n}: backward {total['backward'] / n / 1e3:.2f} ms, autograd "
          f"activity ends at {total['nodes_end'] / n / 1e3:.2f} ms, "
          f"{total['buckets'] / n:.1f} bucket allreduce(s) of {total['allreduce'] / n / 1e3:.2f} ms")
    print(f"  allreduce overlapped with backward: {total['overlapped'] / n / 1e3:.2f} ms per step "
          f"= {100 * fraction(total['overlapped'], total['allreduce']):.1f}% "
          f"({100 * fraction(total['on_nodes'], total['allreduce']):.1f}% while a node ran)")
    print(f"  exposed after the last node: {total['exposed'] / n / 1e3:.2f} ms per step "
          f"= {100 * fraction(total['exposed'], total['allreduce']):.1f}%; "
          f"tail of backward {total['tail'] / n / 1e3:.2f} ms per step "
          f"({100 * fraction(total['tail'], total['backward']):.1f}% of backward)")
    return total, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="+", help="DP_TRACE files, one per rank")
    ap.add_argument("--skip-steps", type=int, default=3)
    ap.add_argument("--steps", action="store_true", help="print every step")
    args = ap.parse_args()
    if args.skip_steps < 0:
        sys.exit(f"--skip-steps = {args.skip_steps}: must be >= 0")
    sums = None
    for path in args.traces:
        total, n = report(path, steps_of(path), args.skip_steps, args.steps)
        if sums is None:
            sums = dict.fromkeys(total, 0.0)
        for k in total:
            sums[k] += total[k]
    if len(args.traces) > 1:
        print(f"all {len(args.traces)} ranks: overlapped "
              f"{100 * fraction(sums['overlapped'], sums['allreduce']):.1f}%, exposed "
              f"{100 * fraction(sums['exposed'], sums['allreduce']):.1f}% of the allreduce time")


if __name__ == "__main__":
    main()
