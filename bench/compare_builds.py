#!/usr/bin/python3
"""Two builds of libdataparallel.so side by side: the same dp-train command run with each,
in alternating order (A B, B A, ...) for R rounds, so that a machine whose speed drifts
moves both alike. Prints each build's median and best samples/s and the median, quartiles
and best-vs-best of B / A: the figure for a change too small to see in separate runs.

    bench/compare_builds.py A.so B.so [--rounds R] [--dp-train PATH] -- DP-TRAIN-ARGS...

A.so and B.so are copies of build/lib/libdataparallel.so.0.1.0 from the two commits
(e.g. built before and after a change); each is loaded through LD_LIBRARY_PATH from a
temporary directory. dp-train (default build/bin/dp-train) must be ABI-compatible with
both. Example:

    bench/compare_builds.py /tmp/before.so build/lib/libdataparallel.so.0.1.0 --rounds 20 \\
        -- --model mlp --epochs 2 --limit 8192 --precision bf16 --devices cpu:0,cpu:1
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def samples_per_s(dp_train, lib_dir, args):
    env = dict(os.environ, LD_LIBRARY_PATH=lib_dir)
    p = subprocess.run([dp_train, "--json", "--quiet"] + args, env=env, capture_output=True,
                       text=True, timeout=3600)
    if p.returncode != 0:
        sys.exit("compare_builds.py: dp-train failed with %s:\n%s" % (lib_dir, p.stderr))
    return json.loads(p.stdout.strip().splitlines()[-1])["samples_per_s"]


def main():
    argv = sys.argv[1:]
    train_args = []
    if "--" in argv:
        at = argv.index("--")
        argv, train_args = argv[:at], argv[at + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="build A's libdataparallel.so.0.1.0")
    ap.add_argument("b", help="build B's libdataparallel.so.0.1.0")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--dp-train", default="build/bin/dp-train")
    opts = ap.parse_args(argv)
    if opts.rounds < 2:
        ap.error("--rounds must be at least 2")
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {}
        for name, lib in (("A", opts.a), ("B", opts.b)):
            if not os.path.isfile(lib):
                ap.error("%s: no such file" % lib)
            dirs[name] = os.path.join(tmp, name)
            os.mkdir(dirs[name])
            shutil.copy(lib, os.path.join(dirs[name], "libdataparallel.so.0.1.0"))
            os.symlink("libdataparallel.so.0.1.0", os.path.join(dirs[name], "libdataparallel.so.0"))
        rates = {"A": [], "B": []}
        ratios = []
        for r in range(opts.rounds):
            got = {}
            for name in ("A", "B") if r % 2 == 0 else ("B", "A"):
                got[name] = samples_per_s(opts.dp_train, dirs[name], train_args)
                rates[name].append(got[name])
            ratios.append(got["B"] / got["A"])
            print("round %d/%d: A %.0f, B %.0f samples/s, B/A %.3f" %
                  (r + 1, opts.rounds, got["A"], got["B"], ratios[-1]), file=sys.stderr)
    for name in ("A", "B"):
        print("%s: median %.0f, best %.0f samples/s" %
              (name, statistics.median(rates[name]), max(rates[name])))
    q1, q2, q3 = statistics.quantiles(ratios, n=4)
    print("B/A: median %.3f (quartiles %.3f-%.3f), best vs best %.3f, over %d rounds" %
          (q2, q1, q3, max(rates["B"]) / max(rates["A"]), opts.rounds))


if __name__ == "__main__":
    main()
