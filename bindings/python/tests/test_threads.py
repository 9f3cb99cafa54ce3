"""The GIL is released around long calls (so other Python threads run meanwhile), and
Python modules run correctly from several threads and workers at once."""
import os
import subprocess
import sys
import threading
import time

import numpy as np

import dataparallel as dp


class Ticker:
    """A Python thread counting as fast as it can while the main thread is in a call."""

    def __init__(self):
        self.count = 0
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop:
            self.count += 1

    def __enter__(self):
        self.thread.start()
        time.sleep(0.01)
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()


def ticks_during(fn):
    """How many times the ticker counted while fn ran, and how long fn took."""
    with Ticker() as ticker:
        start, t0 = ticker.count, time.perf_counter()
        fn()
        return ticker.count - start, time.perf_counter() - t0


def test_long_calls_let_other_python_threads_run(ctx):
    big = dp.Linear(ctx, 2048, 2048)
    opt = dp.Adam(big, lr=1e-3)
    net = dp.DataParallel(big, ["cpu:0", "cpu:1"])
    x = ctx.full([512, 2048], 0.01)
    out = {}
    calls = {
        "forward": lambda: out.__setitem__("y", big(x)),
        "backward": lambda: out["y"].sum().backward(),
        "optimizer step": opt.step,
        "DataParallel forward": lambda: net(x),
    }
    for name, fn in calls.items():
        ticks, seconds = ticks_during(fn)
        # With the GIL held for the whole call the ticker could not count at all.
        assert ticks > 1000, f"{name}: {ticks} ticks in {seconds * 1e3:.0f} ms"


def test_python_module_called_from_several_threads(ctx):
    class Twice(dp.Module):
        def __init__(self, ctx):
            super().__init__(ctx)
            self.fc = dp.Linear(ctx, 4, 4)

        def forward(self, x):
            return self.fc(x) * 2

    models = [Twice(ctx) for _ in range(4)]  # one module per thread, as the C API asks
    x = ctx.full([8, 4], 1.0)
    want = [m(x).numpy() for m in models]
    errors = []

    def work(i):
        try:
            for _ in range(50):
                np.testing.assert_allclose(models[i](x).numpy(), want[i], rtol=1e-6)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


EXIT_WHILE_A_FORWARD_RUNS = """
import threading, time, dataparallel as dp
ctx = dp.Context(cpu_devices=2, load_cuda=False)
class Double(dp.Module):
    def forward(self, x):
        return x * 2.0
m = Double(ctx)
net = dp.DataParallel(Double(ctx), ["cpu:0", "cpu:1"])
class Outer(dp.Module):  # runs m, not a child of its own, through a nested library call
    def forward(self, x):
        return m(x) + 1.0
outer = Outer(ctx)
x = ctx.full([4, 3], 1.0)
def loop(f):
    while True:
        f(x)
for f in (m, net, outer, outer):
    threading.Thread(target=loop, args=(f,), daemon=True).start()
time.sleep(0.2)
"""


def test_the_interpreter_exits_cleanly_while_daemon_threads_run_python_forwards():
    # At exit Python ends a thread that then waits for its lock with pthread_exit; that
    # thread may be a library worker, about to run a Python forward. The unwinding went
    # through a catch (...) that kept it, and glibc aborted the process (about half the
    # exits).
    env = dict(os.environ)
    for run in range(12):
        p = subprocess.run([sys.executable, "-c", EXIT_WHILE_A_FORWARD_RUNS], env=env,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, (run, p.returncode, p.stderr[-2000:])


def test_arrays_borrowed_on_another_thread_are_released_while_the_main_thread_waits(ctx):
    # A borrowed array is let go on a library thread, which cannot take the GIL there: the
    # release waits for a Python thread. It used to wait for the main thread's pending
    # calls, so a training thread's batches all stayed alive while main sat in join().
    import weakref
    lin = dp.Linear(ctx, 256, 4)
    refs, alive = [], []

    def train():
        for _ in range(50):
            batch = np.random.rand(64, 256).astype(np.float32)
            refs.append(weakref.ref(batch))
            x = dp.Tensor.from_numpy(ctx, batch, copy=False)
            lin(x).sum().backward()
            del x, batch
        alive.append(sum(r() is not None for r in refs))

    t = threading.Thread(target=train)
    t.start()
    t.join()
    assert alive[0] <= 2, f"{alive[0]} of 50 batches still alive"
