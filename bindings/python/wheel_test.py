"""The wheel users get from `pip`: build it as bindings/python/README.md says, install it
into a fresh venv, and check that it imports its own library (not the build tree's) and
trains to the same numbers as the package of the CMake build.

Run by ctest (python_wheel): wheel_test.py BUILD_PYTHON_DIR
DP_WHEEL_VENV names the venv with the build backend (scripts/install-deps.sh makes it).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Trains a small DataParallel model for a few steps on fixed data and prints, as JSON,
# the loss of each step and the file of the libdataparallel.so the process mapped.
TRAIN = r"""
import json
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
maps = open("/proc/self/maps").read().split()
lib = sorted({m for m in maps if m.endswith("/libdataparallel.so") or "/libdataparallel.so." in m})
print(json.dumps({"losses": losses, "lib": lib, "package": dp.__file__}))
"""


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-4000:]}{p.stderr[-4000:]}")
    return p.stdout


def train(python, env, cwd):
    return json.loads(run([python, "-c", TRAIN], env=env, cwd=cwd).strip().splitlines()[-1])


def main():
    build_python_dir = os.path.abspath(sys.argv[1])
    venv = os.environ.get("DP_WHEEL_VENV", "/opt/dataparallel/wheel-venv")
    pip = os.path.join(venv, "bin", "pip")
    if not os.access(pip, os.X_OK):
        sys.exit(f"{pip} is missing: run scripts/install-deps.sh (it makes the wheel's build venv)")
    with tempfile.TemporaryDirectory(prefix="dp_wheel_") as tmp:
        wheels = os.path.join(tmp, "wheels")
        print("building the wheel (the library and the extension, Release)...", flush=True)
        run([pip, "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-q", "-w", wheels,
             HERE])
        built = glob.glob(os.path.join(wheels, "dataparallel-*.whl"))
        assert len(built) == 1, built
        env_dir = os.path.join(tmp, "env")
        # System site packages: NumPy from Debian, as the README's user has it.
        run([sys.executable, "-m", "venv", "--system-site-packages", env_dir])
        run([os.path.join(env_dir, "bin", "pip"), "install", "-q", "--no-deps", "--no-index",
             built[0]])
        clean = {k: v for k, v in os.environ.items()
                 if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "DP_CUDA_PLUGIN")}
        wheel = train(os.path.join(env_dir, "bin", "python"), clean, tmp)
        tree = train(sys.executable, dict(clean, PYTHONPATH=build_python_dir), tmp)

        site = os.path.join(env_dir, "lib")
        assert wheel["package"].startswith(site), wheel["package"]
        assert len(wheel["lib"]) == 1 and wheel["lib"][0].startswith(site), wheel["lib"]
        assert tree["lib"] and not tree["lib"][0].startswith(site), tree["lib"]
        assert wheel["losses"] == tree["losses"], (wheel["losses"], tree["losses"])
        assert wheel["losses"][-1] < wheel["losses"][0], wheel["losses"]
        print(f"wheel {os.path.basename(built[0])}: imports {wheel['lib'][0]}, "
              f"losses {wheel['losses']} as the build tree's")


if __name__ == "__main__":
    main()
