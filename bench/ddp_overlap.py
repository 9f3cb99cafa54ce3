#!/usr/bin/env python3
"""How much of DDP's gradient allreduce hides behind backward, from DP_TRACE timelines.

    DP_TRACE=/tmp/t.json mpirun -np 2 build/bin/dp-bench-ddp --model mlp --steps 20 --batch 128
    /usr/bin/python3 bench/ddp_overlap.py /tmp/t.rank0.json /tmp/t.rank1.json [--skip-steps N]

One file per rank (dp-bench-ddp writes t.rank<r>.json). A training step is one
"autograd backward" span on the caller with at least one "bucket allreduce" span (the
argument is the bucket index) that the communication thread ("comm") starts inside it;
backwards without (dp-bench-ddp's no_sync steps) are left out. The step's autograd work
is every other span inside it on the other threads: the nodes, "gradient sum" and
"shared slice", on the caller and the device workers.

The hook that queues a bucket runs inside the AccumulateGrad span of the bucket's last
gradient; what that span holds after the bucket starts is the hook returning, and, where
the busy threads outnumber the cores, the caller waiting for a core while the
communication thread runs: no backward work. So an AccumulateGrad span is cut where a
bucket allreduce starts inside it.

Each allreduce's time is split into
  overlapped: while some autograd span (cut as above) ran, on any thread;
  exposed:    the rest, mostly after the last of them, when backward waits for the buckets.
"work ends" is when the last autograd span ends (from the start of backward), and "tail"
the time from there to the end of backward: the exposed communication plus the reducer
writing the averages back into the gradients. The first N steps (default 3, dp-bench-ddp's
warm-up) are left out of the totals.

An allreduce span on one rank also holds the time it waited for the other ranks to reach
the same bucket, so the ranks' figures differ by their imbalance. And time counted as
overlapped is not free where the cores are few: Open MPI polls while it waits, so the
communication thread takes a core from backward (dp-bench-ddp's no_sync baseline measures
what the sync costs a step, that included).
"""
import argparse
import bisect
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
    """The union of [lo, hi] intervals, as sorted disjoint [lo, hi] lists."""
    out = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def steps_of(path):
    """Per backward with allreduces: a dict of its times (microseconds)."""
    names, spans = load(path)
    comm = {tid for tid, name in names.items() if name == "comm"}
    if not comm:
        sys.exit(f"{path}: no thread named 'comm' (no process group in this trace?)")
    backwards = sorted((e for e in spans
                        if e["name"] == "autograd backward" and names[e["tid"]] == "caller"),
                       key=lambda e: e["ts"])
    allreduces = sorted((e for e in spans
                         if e["name"] == "bucket allreduce" and e["tid"] in comm),
                        key=lambda e: e["ts"])
    others = sorted((e for e in spans
                     if e["tid"] not in comm and e["name"] != "autograd backward"),
                    key=lambda e: e["ts"])
    allreduce_starts = [e["ts"] for e in allreduces]
    other_starts = [e["ts"] for e in others]
    steps = []
    for bwd in backwards:
        lo, hi = bwd["ts"], bwd["ts"] + bwd["dur"]
        mine = allreduces[bisect.bisect_left(allreduce_starts, lo):
                          bisect.bisect_right(allreduce_starts, hi)]
        work = []
        for e in others[bisect.bisect_left(other_starts, lo):
                        bisect.bisect_right(other_starts, hi)]:
            begin, end = e["ts"], e["ts"] + e["dur"]
            if end > hi:
                continue
            if e["name"] == "AccumulateGrad":
                end = min([end] + [a["ts"] for a in mine if begin <= a["ts"] < end])
            work.append((begin, end))
        if not mine or not work:
            continue
        work_end = max(end for _, end in work)
        busy = merged(work)
        step = {"backward": bwd["dur"], "work_end": work_end - lo, "buckets": len(mine),
                "allreduce": 0.0, "overlapped": 0.0, "exposed": 0.0, "tail": hi - work_end}
        for a in mine:
            covered = union_overlap(a["ts"], a["ts"] + a["dur"], busy)
            step["allreduce"] += a["dur"]
            step["overlapped"] += covered
            step["exposed"] += a["dur"] - covered
        steps.append(step)
    if not steps:
        sys.exit(f"{path}: no 'autograd backward' span on the caller with a bucket allreduce")
    return steps


def fraction(part, whole):
    return part / whole if whole > 0 else float("nan")


def report(path, steps, skip, verbose):
    print(f"{path}: {len(steps)} steps with gradient sync, the first {skip} left out of the "
          "totals")
    if verbose:
        print(f"{'step':>4} {'buckets':>7} {'backward':>9} {'work ends':>9} {'allreduce':>9} "
              f"{'overlap':>9} {'exposed':>9} {'tail':>9} {'overlap %':>9}  (ms)")
        for i, s in enumerate(steps):
            print(f"{i:>4} {s['buckets']:>7} {s['backward'] / 1e3:>9.2f} "
                  f"{s['work_end'] / 1e3:>9.2f} {s['allreduce'] / 1e3:>9.2f} "
                  f"{s['overlapped'] / 1e3:>9.2f} {s['exposed'] / 1e3:>9.2f} "
                  f"{s['tail'] / 1e3:>9.2f} "
                  f"{100 * fraction(s['overlapped'], s['allreduce']):>8.1f}%")
    counted = steps[skip:]
    if not counted:
        sys.exit(f"{path}: {len(steps)} steps, none after the first {skip} "
                 "(fewer --skip-steps, or more steps)")
    total = {k: sum(s[k] for s in counted) for k in counted[0]}
    n = len(counted)
    print(f"  per step over {n}: backward {total['backward'] / n / 1e3:.2f} ms, its autograd "
          f"work ends at {total['work_end'] / n / 1e3:.2f} ms, {total['buckets'] / n:.1f} "
          f"bucket allreduce(s) of {total['allreduce'] / n / 1e3:.2f} ms in all")
    print(f"  overlapped with autograd work: {total['overlapped'] / n / 1e3:.2f} ms per step "
          f"= {100 * fraction(total['overlapped'], total['allreduce']):.1f}%; exposed "
          f"{total['exposed'] / n / 1e3:.2f} ms "
          f"= {100 * fraction(total['exposed'], total['allreduce']):.1f}%; tail of backward "
          f"{total['tail'] / n / 1e3:.2f} ms "
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
