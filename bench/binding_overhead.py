#!/usr/bin/python3
"""What a binding adds per call: one forward of the tiny model (Linear 8x8, batch 8, one
CPU device, grad mode off) timed from C (dp-binding-overhead-c), from Python (this
process, through the dataparallel package) and from Java (BindingOverhead in
binding-overhead.jar), for two calls: the module's forward and a DataParallel forward
over that one device. Prints one JSON line per implementation and call, then one per
binding and call with the extra microseconds over C (target: under 5):

  {"impl": "python", "call": "module_forward", "us_per_call": ...}
  {"binding": "python", "call": "module_forward", "extra_us_per_call": ..., "target_us": 5.0,
   "within_target": true}

  /usr/bin/python3 bench/binding_overhead.py --build build [--calls N] [--repeats R] [--rounds K]

--build is the CMake build directory: the C program, the Python package and the jar are
taken from there (a binding that was not built is reported and skipped). Each round runs
C, Python and Java one after the other (each the median of --repeats runs of --calls
calls); the figure kept for each is its best round, so that a burst of load on the
machine during one implementation's turn does not count against it.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

TARGET_US = 5.0


def python_times(build, calls, repeats):
    sys.path.insert(0, os.path.join(build, "bindings", "python"))
    import dataparallel as dp

    ctx = dp.Context(cpu_devices=1, load_cuda=False)
    linear = dp.Linear(ctx, 8, 8)
    net = dp.DataParallel(linear, device_ids=["cpu:0"])
    x = ctx.full([8, 8], 0.5)
    results = {}
    with dp.no_grad():  # as the C and Java loops
        for call, fn in (("module_forward", linear), ("data_parallel_forward", net)):
            for _ in range(calls // 10 + 100):  # warm up
                fn(x)
            runs = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                for _ in range(calls):
                    fn(x)  # the output is released at once, as in the C loop
                runs.append((time.perf_counter() - t0) / calls * 1e6)
            results[call] = statistics.median(runs)
    return results


def parse_lines(text, impl):
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            rec = json.loads(line)
            if rec.get("impl") == impl:
                out[rec["call"]] = rec["us_per_call"]
    return out


def best(rounds):
    """{call: the smallest per-call time over the rounds}."""
    out = {}
    for r in rounds:
        for call, us in r.items():
            out[call] = min(us, out.get(call, us))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build", help="CMake build directory")
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    build = os.path.abspath(args.build)
    common = ["--calls", str(args.calls), "--repeats", str(args.repeats)]

    c_program = os.path.join(build, "bin", "dp-binding-overhead-c")
    if not os.path.exists(c_program):
        sys.exit(f"binding_overhead: {c_program} not found (build the project first)")
    have_python = os.path.exists(os.path.join(build, "bindings", "python", "dataparallel"))
    if not have_python:
        print("binding_overhead: the Python binding was not built; skipped", file=sys.stderr)
    java_dir = os.path.join(build, "bindings", "java")
    jars = [os.path.join(java_dir, j) for j in ("dataparallel.jar", "binding-overhead.jar")]
    java = shutil.which("java")
    have_java = bool(java) and all(os.path.exists(j) for j in jars)
    if not have_java:
        print("binding_overhead: the Java binding (or java) is missing; skipped", file=sys.stderr)

    rounds = {"c": [], "python": [], "java": []}
    for _ in range(args.rounds):
        run = subprocess.run([c_program] + common, check=True, capture_output=True, text=True)
        rounds["c"].append(parse_lines(run.stdout, "c"))
        if have_python:
            rounds["python"].append(python_times(build, args.calls, args.repeats))
        if have_java:
            run = subprocess.run([java, "-cp", ":".join(jars), "BindingOverhead"] + common,
                                 check=True, capture_output=True, text=True)
            rounds["java"].append(parse_lines(run.stdout, "java"))
    results = {impl: best(r) for impl, r in rounds.items() if r}

    for impl, calls in results.items():
        for call, us in calls.items():
            print(json.dumps({"impl": impl, "call": call, "us_per_call": round(us, 3)}))
    for impl in ("python", "java"):
        for call, us in results.get(impl, {}).items():
            extra = us - results["c"][call]
            print(json.dumps({"binding": impl, "call": call, "extra_us_per_call": round(extra, 3),
                              "target_us": TARGET_US, "within_target": extra < TARGET_US}))


if __name__ == "__main__":
    main()
