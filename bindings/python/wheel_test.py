"""The wheel users get from `pip`: build it as bindings/python/README.md says, repair it with
auditwheel (which copies the libraries it links, oneDNN and the OpenMP runtime among them,
into dataparallel.libs/), install it into a fresh venv, and train with it where the
system's copies of those libraries cannot be opened; check that the process mapped the
wheel's own libraries only and trained to the same numbers as the package of the CMake
build.

Run by ctest (python_wheel): wheel_test.py BUILD_PYTHON_DIR
DP_WHEEL_VENV names the venv with the build backend and auditwheel (scripts/install-deps.sh
makes it). The wheel's CMake build lives in BUILD_PYTHON_DIR/wheel-build, so that a second
run rebuilds only what changed; DP_WHEEL_LAUNCHER (e.g. ccache) is its compiler launcher.
The fresh venv sees the system's site packages for NumPy only (the wheel's one dependency,
as Debian's python3-numpy provides it, so that the test downloads nothing); the wheel itself
installs with --no-deps from the file. Exits 77 (a skip) where no mount namespace could hide
the system's libraries.
"""
import glob
import json
import os
import platform
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))

# The exit status that ctest reports as a skip (SKIP_RETURN_CODE): the wheel could not be
# tried with the system's libraries hidden.
SKIPPED = 77

# The policy auditwheel repairs to: the oldest glibc whose symbol versions the library,
# its extension and what they link need, as built on Debian 12 (glibc 2.36, GCC 12).
POLICY = "manylinux_2_35"

# Trains a small DataParallel model for a few steps on fixed data and prints, as JSON,
# the loss of each step, the shared libraries the process mapped, and the size of each
# file named in DP_WHEEL_HIDDEN (0: hidden).
TRAIN = r"""
import json
import os
import numpy as np
import dataparallel as dp

ctx = dp.Context(cpu_devices=2)
model = dp.Sequential(ctx, dp.Linear(ctx, 8, 16), dp.ReLU(ctx), dp.Linear(ctx, 16, 3))
net = dp.DataParallel(model, device_ids=["cpu:0", "cpu:1"])
opt = dp.SGD(model, lr=0.1, momentum=0.9)
rng = np.random.default_rng(7)
x = dp.from_numpy(ctx, rng.standard_normal((64, 8)).astype(np.float32))
y = dp.from_numpy(ctx, rng.integers(0, 3, 64).astype(np.int64))
rng2 = np.random.default_rng(11)
for p in model.parameters():  # the same start in both processes, whatever the init
    p.copy_(rng2.standard_normal(p.shape).astype(np.float32) * 0.3)
losses = []
for _ in range(5):
    opt.zero_grad()
    loss = dp.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    losses.append(float(loss.item()))
maps = sorted({m for m in open("/proc/self/maps").read().split() if ".so" in m})
hidden = {f: os.path.getsize(f) for f in os.environ.get("DP_WHEEL_HIDDEN", "").split(":") if f}
print(json.dumps({"losses": losses, "maps": maps, "hidden": hidden, "package": dp.__file__}))
"""

# Runs "$@" in a new mount namespace where each file named in $DP_WHEEL_HIDDEN is replaced
# by the empty file $1: the dynamic loader cannot open it ("file too short").
HIDE = r"""
empty=$1
shift
IFS=:
for f in $DP_WHEEL_HIDDEN; do mount --bind "$empty" "$f"; done
unset IFS
exec "$@"
"""


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-4000:]}{p.stderr[-4000:]}")
    return p.stdout


def train(cmd, env, cwd):
    return json.loads(run(cmd + ["-c", TRAIN], env=env, cwd=cwd).strip().splitlines()[-1])


def stem(name):
    """libdnnl-1a2b3c4d.so.2.6 (auditwheel's copy) and libdnnl.so.2: libdnnl."""
    return name.split(".so")[0].split("-")[0]


def system_copies(stems):
    """The files the dynamic loader would open for these libraries (ldconfig's cache)."""
    found = set()
    ldconfig = "/sbin/ldconfig" if os.path.exists("/sbin/ldconfig") else "ldconfig"
    for line in run([ldconfig, "-p"]).splitlines()[1:]:
        name, _, path = line.strip().partition(" => ")
        if stem(name.split()[0]) in stems and os.path.exists(path):
            found.add(os.path.realpath(path))
    return sorted(found)


def hiding_command(env, empty):
    """(a command prefix that runs a program with env's DP_WHEEL_HIDDEN files hidden, how),
    or (None, why not: no mount namespace here, neither as root nor as a user's)."""
    reasons = []
    for unshare in (["unshare", "--mount"], ["unshare", "--user", "--map-root-user", "--mount"]):
        cmd = unshare + ["--", "sh", "-ec", HIDE, "sh", empty]
        p = subprocess.run(cmd + ["true"], capture_output=True, text=True, env=env)
        if p.returncode == 0:
            return cmd, " ".join(unshare)
        reasons.append(f"{' '.join(unshare)}: {p.stderr.strip() or p.returncode}")
    return None, "; ".join(reasons)


def main():
    build_python_dir = os.path.abspath(sys.argv[1])
    venv = os.environ.get("DP_WHEEL_VENV", "/opt/dataparallel/wheel-venv")
    pip, auditwheel = os.path.join(venv, "bin", "pip"), os.path.join(venv, "bin", "auditwheel")
    for tool in (pip, auditwheel):
        if not os.access(tool, os.X_OK):
            sys.exit(f"{tool} is missing: run scripts/install-deps.sh (it makes the wheel's venv)")
    with tempfile.TemporaryDirectory(prefix="dp_wheel_") as tmp:
        wheels, repaired = os.path.join(tmp, "wheels"), os.path.join(tmp, "repaired")
        print("building the wheel (the library and the extension, Release)...", flush=True)
        build_env = dict(os.environ,
                         SKBUILD_BUILD_DIR=os.path.join(build_python_dir, "wheel-build"))
        build_env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        launcher = os.environ.get("DP_WHEEL_LAUNCHER")
        if launcher:
            build_env["CMAKE_ARGS"] = (f"-DCMAKE_C_COMPILER_LAUNCHER={launcher} "
                                       f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}")
        run([pip, "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-q", "-w", wheels,
             HERE], env=build_env)
        built = glob.glob(os.path.join(wheels, "dataparallel-*.whl"))
        assert len(built) == 1, built
        plat = f"{POLICY}_{platform.machine()}"
        run([auditwheel, "repair", "--plat", plat, "-w", repaired, built[0]])
        fixed = glob.glob(os.path.join(repaired, "dataparallel-*.whl"))
        assert len(fixed) == 1 and fixed[0].endswith(f"{plat}.whl"), fixed
        with zipfile.ZipFile(fixed[0]) as z:
            bundled = sorted(os.path.basename(n) for n in z.namelist()
                             if n.startswith("dataparallel.libs/") and not n.endswith("/"))
        stems = {stem(b) for b in bundled}
        assert {"libdnnl", "libgomp"} <= stems, bundled

        env_dir = os.path.join(tmp, "env")
        # System site packages: NumPy from Debian, as the README's user has it.
        run([sys.executable, "-m", "venv", "--system-site-packages", env_dir])
        run([os.path.join(env_dir, "bin", "pip"), "install", "-q", "--no-deps", "--no-index",
             fixed[0]])
        clean = {k: v for k, v in os.environ.items()
                 if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "DP_CUDA_PLUGIN")}
        hidden = system_copies(stems)
        empty = os.path.join(tmp, "empty")
        open(empty, "w").close()
        hide_env = dict(clean, DP_WHEEL_HIDDEN=":".join(hidden))
        prefix, how = hiding_command(hide_env, empty) if hidden else (None, "none installed")
        wheel = train((prefix or []) + [os.path.join(env_dir, "bin", "python")], hide_env, tmp)
        tree = train([sys.executable], dict(clean, PYTHONPATH=build_python_dir), tmp)

        site = os.path.join(env_dir, "lib")
        libs = os.path.join(os.path.dirname(os.path.dirname(wheel["package"])),
                            "dataparallel.libs")
        assert wheel["package"].startswith(site), wheel["package"]
        ours = [m for m in wheel["maps"] if "/libdataparallel.so" in m]
        assert len(ours) == 1 and ours[0].startswith(site), ours
        # Every library the wheel bundles is the wheel's copy, and it was loaded.
        for b in bundled:
            assert os.path.join(libs, b) in wheel["maps"], (b, wheel["maps"])
        strays = [m for m in wheel["maps"]
                  if stem(os.path.basename(m)) in stems and not m.startswith(libs + "/")]
        assert not strays, strays
        if prefix:
            assert wheel["hidden"] == {f: 0 for f in hidden}, wheel["hidden"]
        tree_libs = [m for m in tree["maps"] if "/libdataparallel.so" in m]
        assert tree_libs and not tree_libs[0].startswith(site), tree_libs
        assert wheel["losses"] == tree["losses"], (wheel["losses"], tree["losses"])
        assert wheel["losses"][-1] < wheel["losses"][0], wheel["losses"]
        size = os.path.getsize(fixed[0]) / 2**20
        print(f"wheel {os.path.basename(fixed[0])} ({size:.1f} MiB), bundles {', '.join(bundled)}")
        print(f"imports {ours[0]}, losses {wheel['losses']} as the build tree's")
        if prefix or not hidden:
            print(f"trained with the system's {', '.join(hidden) or 'copies'} hidden ({how})")
        else:
            # The wheel loaded its own copies, but with the system's still there this is
            # not the machine without oneDNN the test stands for: ctest reports a skip.
            print(f"could not hide the system's copies ({how}): checked /proc/self/maps only; "
                  "skipped")
            sys.exit(SKIPPED)


if __name__ == "__main__":
    main()
