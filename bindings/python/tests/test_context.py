"""Context: devices, names, memory, synchronisation, logging, closing."""
import numpy as np
import pytest

import dataparallel as dp
from dataparallel import capi


def test_context_has_the_requested_cpu_devices(ctx):
    assert ctx.device_count("cpu") == 2
    assert ctx.device_count(dp.DeviceType.cuda) == 0
    assert ctx.devices() == [dp.cpu(0), dp.cpu(1)]
    assert ctx.devices("cuda") == []


def test_device_name_and_memory(ctx):
    assert ctx.device_name("cpu:1").startswith("cpu:1")
    free, total = ctx.device_memory(dp.cpu(0))
    assert 0 < free <= total


def test_synchronize_every_device(ctx):
    ctx.synchronize()
    ctx.synchronize("cpu:1")


def test_devices_parse_from_strings_and_tuples():
    assert dp.device("cuda:3") == dp.Device(dp.DeviceType.cuda, 3)
    assert dp.device("cpu") == dp.cpu(0)
    assert dp.device((0, 1)) == dp.cpu(1)
    assert str(dp.cuda(2)) == "cuda:2"
    with pytest.raises(ValueError):
        dp.device("tpu:0")


def test_version_matches_the_header():
    assert dp.__version__ == dp.version() == "%d.%d.%d" % (
        capi.DP_VERSION_MAJOR, capi.DP_VERSION_MINOR, capi.DP_VERSION_PATCH)
    assert capi.dp_version_number() == capi.DP_VERSION_NUMBER


def test_log_messages_reach_the_python_callback():
    messages = []
    c = dp.Context(cpu_devices=1, load_cuda=True, log=lambda level, m: messages.append((level, m)),
                   log_level=dp.LogLevel.debug)
    capi.dp_py_run_pending()
    if c.device_count("cuda") == 0:  # then the library says why CUDA is unavailable
        assert any("CUDA" in m for _, m in messages), messages
        assert all(isinstance(level, dp.LogLevel) for level, _ in messages)
    c.close()


def test_closed_context_raises_state_error_and_close_twice_is_safe():
    c = dp.Context(cpu_devices=1, load_cuda=False)
    t = c.zeros([3])
    c.close()
    c.close()
    assert c.closed
    with pytest.raises(dp.StateError, match="closed"):
        c.zeros([2])
    assert t.numpy().tolist() == [0, 0, 0]  # the tensor keeps the library's context alive


def test_with_block_closes_the_context():
    with dp.Context(cpu_devices=1, load_cuda=False) as c:
        assert c.device_count() == 1
    assert c.closed
    assert repr(c) == "Context(closed)"


def test_the_log_function_is_released_when_the_context_ends():
    # The library keeps `log` while the context lives, and lets it go when it ends: a
    # method of an object holding a model no longer keeps the object for good.
    import gc
    import weakref

    class Trainer:
        def __init__(self):
            self.messages = []
            self.ctx = dp.Context(cpu_devices=1, load_cuda=False, log=self.on_log)

        def on_log(self, level, message):
            self.messages.append(message)

    t = Trainer()
    x = t.ctx.zeros([2])
    ref = weakref.ref(t)
    t.ctx.close()
    del t
    gc.collect()
    dp.capi.dp_py_run_pending()
    assert ref() is not None  # x keeps the context, and so the log function
    del x
    gc.collect()
    dp.capi.dp_py_run_pending()
    assert ref() is None


def test_log_references_are_counted_per_context_and_given_back_on_a_failed_create():
    # Options reused for two contexts: each context holds its own reference (the second
    # context's end freed a function the options still used: a crash). A failed create
    # keeps none.
    import gc
    import sys
    import weakref
    from dataparallel import capi

    def log(level, message):
        pass

    before = sys.getrefcount(log)
    o = capi.dp_context_options()
    o.cpu_devices = 1
    o.load_cuda = 0
    o.set_log(log)
    c1 = capi.dp_context_create(o)
    c2 = capi.dp_context_create(o)
    del c1, c2
    gc.collect()
    capi.dp_py_run_pending()
    assert sys.getrefcount(log) == before + 1  # the options' own
    del o
    capi.dp_py_run_pending()
    assert sys.getrefcount(log) == before

    class Sink:
        def __call__(self, level, message):
            pass

    sink = Sink()
    ref = weakref.ref(sink)
    with pytest.raises(dp.InvalidArgumentError):
        dp.Context(cpu_devices=-5, load_cuda=False, log=sink)
    del sink
    gc.collect()
    capi.dp_py_run_pending()
    assert ref() is None


def test_objects_of_two_contexts_are_refused_naming_the_argument():
    with dp.Context(cpu_devices=2) as a, dp.Context(cpu_devices=2) as b:
        x = dp.from_numpy(a, np.ones((2, 3), np.float32))
        y = dp.from_numpy(b, np.ones((2, 3), np.float32))
        with pytest.raises(dp.InvalidArgumentError, match="add: b belongs to another dp_context than a"):
            x + y
        model = dp.Linear(a, 3, 2)
        with pytest.raises(dp.InvalidArgumentError, match="inputs\\[0\\] belongs to another dp_context"):
            dp.DataParallel(model)(y)
        # Within one context both work, and the data can cross through NumPy.
        z = x + dp.from_numpy(a, y.numpy())
        np.testing.assert_array_equal(z.numpy(), np.full((2, 3), 2, np.float32))
        assert dp.DataParallel(model)(x).numpy().shape == (2, 2)
