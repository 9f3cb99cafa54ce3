"""Every dp_result code raises its own Error subclass carrying the library's message."""
import numpy as np
import pytest

import dataparallel as dp
from dataparallel import capi


CLASSES = {
    1: dp.InvalidArgumentError, 2: dp.OutOfRangeError, 3: dp.ShapeMismatchError,
    4: dp.DtypeMismatchError, 5: dp.DeviceMismatchError, 6: dp.OutOfMemoryError,
    7: dp.NotSupportedError, 8: dp.IOError, 9: dp.FormatError, 10: dp.StateError,
    11: dp.BackendError, 12: dp.CallbackError, 13: dp.InternalError,
}


@pytest.mark.parametrize("code", sorted(CLASSES))
def test_each_code_maps_to_its_subclass_with_code_and_message(code):
    e = dp.errors.from_code(code, "the message")
    assert type(e) is CLASSES[code]
    assert isinstance(e, dp.Error)
    assert e.code == code and e.message == "the message" and str(e) == "the message"
    assert capi.dp_result_string(code)  # the library has a name for each


def test_subclasses_are_also_the_matching_builtin_exceptions():
    assert issubclass(dp.InvalidArgumentError, ValueError)
    assert issubclass(dp.OutOfRangeError, IndexError)
    assert issubclass(dp.DtypeMismatchError, TypeError)
    assert issubclass(dp.IOError, OSError)
    assert issubclass(dp.OutOfMemoryError, MemoryError)
    assert issubclass(dp.NotSupportedError, NotImplementedError)


def test_negative_size_raises_invalid_argument_naming_the_size(ctx):
    with pytest.raises(dp.InvalidArgumentError, match=r"shape\[1\] = -3 is negative"):
        ctx.zeros([2, -3])


def test_device_that_does_not_exist_raises_out_of_range(ctx):
    with pytest.raises(dp.OutOfRangeError, match="cpu:7|7"):
        ctx.zeros([2], device="cpu:7")


def test_matmul_of_incompatible_shapes_raises_shape_mismatch(ctx):
    with pytest.raises(dp.ShapeMismatchError, match="matmul"):
        ctx.zeros([2, 3]) @ ctx.zeros([4, 5])


def test_mixing_float32_and_float64_raises_dtype_mismatch(ctx):
    with pytest.raises(dp.DtypeMismatchError, match="float64"):
        ctx.zeros([2]) + ctx.zeros([2], dtype=dp.float64)


def test_tensors_on_two_devices_raise_device_mismatch(ctx):
    with pytest.raises(dp.DeviceMismatchError, match="cpu:1"):
        ctx.zeros([2], device="cpu:0") + ctx.zeros([2], device="cpu:1")


def test_loading_a_missing_file_raises_io_error_naming_it(ctx, tmp_path):
    m = dp.Linear(ctx, 2, 2)
    missing = tmp_path / "missing.safetensors"
    with pytest.raises(dp.IOError, match="missing.safetensors"):
        m.load(missing)


def test_loading_a_corrupt_file_raises_format_error(ctx, tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all")
    with pytest.raises(dp.FormatError):
        dp.Linear(ctx, 2, 2).load(bad)


def test_second_backward_through_a_freed_graph_raises_state_error(ctx):
    x = ctx.tensor([1.0, 2.0]).requires_grad_()
    y = (x * x).sum()
    y.backward()
    with pytest.raises(dp.StateError):
        y.backward()


def test_out_of_range_target_in_cross_entropy_names_it(ctx):
    logits = ctx.zeros([2, 3])
    target = ctx.tensor([0, 5])
    with pytest.raises(dp.OutOfRangeError, match="5"):
        dp.cross_entropy(logits, target)


def test_python_exception_in_a_forward_raises_callback_error_with_cause(ctx):
    class Broken(dp.Module):
        def forward(self, x):
            raise KeyError("no such weights")

    with pytest.raises(dp.CallbackError, match="KeyError") as info:
        Broken(ctx)(ctx.zeros([2]))
    assert isinstance(info.value.__cause__, KeyError)


def test_library_error_inside_a_forward_keeps_its_class(ctx):
    class Mismatch(dp.Module):
        def forward(self, x):
            return x @ x  # [3] @ [3]: not a matrix product

    with pytest.raises(dp.ShapeMismatchError, match="Mismatch forward"):
        Mismatch(ctx)(ctx.zeros([2, 3]))


def test_errors_are_per_thread_and_last_error_holds_the_message(ctx):
    with pytest.raises(dp.Error):
        ctx.zeros([-1])
    assert "negative" in capi.dp_last_error()


def test_borrowing_a_read_only_array_is_an_invalid_argument(ctx):
    a = np.zeros(4, np.float32)
    a.flags.writeable = False
    with pytest.raises(dp.InvalidArgumentError, match="writable"):
        dp.Tensor.from_numpy(ctx, a, copy=False)


def test_wrong_argument_types_raise_type_error(ctx):
    with pytest.raises(TypeError):
        capi.dp_op_relu(ctx)  # a context where a tensor belongs


def test_a_device_index_past_32_bits_does_not_wrap_onto_device_0(ctx):
    with pytest.raises(OverflowError, match="32-bit"):
        ctx.zeros([2], device=dp.Device(dp.DeviceType.cpu, 2**32))


def test_text_with_an_embedded_null_is_refused_not_cut_short(ctx, tmp_path):
    m = dp.Linear(ctx, 2, 2)
    with pytest.raises(ValueError, match="embedded null"):
        m.save(str(tmp_path / "model.st") + "\0.bak")
    assert not (tmp_path / "model.st").exists()
    with pytest.raises(ValueError, match="embedded null"):
        dp.save_checkpoint(tmp_path / "ck.st", m, metadata={"epoch\0hidden": "1"})


def test_star_import_leaves_the_builtins_alone():
    namespace = {}
    exec("from dataparallel import *", namespace)
    assert "Tensor" in namespace and "DataParallel" in namespace and "Error" in namespace
    assert "sum" not in namespace and "IOError" not in namespace


def test_failing_replicas_each_chain_their_own_exception(ctx):
    # Both replicas raise; the library reports replica 0 (the lowest index), so the
    # Python exception behind the error must be replica 0's, not whichever ran last.
    class FailsEverywhere(dp.Module):
        def forward(self, x):
            raise KeyError(f"nothing on {x.device}")

    net = dp.DataParallel(FailsEverywhere(ctx), ["cpu:0", "cpu:1"])
    for _ in range(20):
        with pytest.raises(dp.CallbackError, match="replica 0") as info:
            net(ctx.zeros([4, 2]))
        assert isinstance(info.value.__cause__, KeyError)
        assert info.value.__cause__.args == ("nothing on cpu:0",)
    # Replica 1's failure, never raised, is not chained to a later, unrelated error.
    class Other(dp.Module):
        def forward(self, x):
            raise RuntimeError("other")

    with pytest.raises(dp.CallbackError, match="RuntimeError: other") as info:
        Other(ctx)(ctx.zeros([2]))
    assert isinstance(info.value.__cause__, RuntimeError)


def test_failures_on_two_threads_at_once_keep_their_own_causes(ctx):
    import threading

    class Named(dp.Module):
        def __init__(self, ctx, name):
            super().__init__(ctx)
            self.name = name

        def forward(self, x):
            raise KeyError(self.name)

    modules = [Named(ctx, f"module {i}") for i in range(2)]
    wrong = []
    start = threading.Barrier(2)

    def run(i):
        start.wait()
        for _ in range(200):
            try:
                modules[i](ctx.zeros([2], device=f"cpu:{i}"))
            except dp.CallbackError as e:
                if not isinstance(e.__cause__, KeyError) or e.__cause__.args != (f"module {i}",):
                    wrong.append((i, repr(e.__cause__)))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_keyboard_interrupt_in_a_forward_reaches_the_caller_as_itself(ctx):
    class Interrupted(dp.Module):
        def forward(self, x):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Interrupted(ctx)(ctx.zeros([2]))
    with pytest.raises(KeyboardInterrupt):
        dp.DataParallel(Interrupted(ctx), ["cpu:0", "cpu:1"])(ctx.zeros([4, 2]))


def test_a_forward_exception_whose_message_utf8_cannot_hold_keeps_message_and_cause(ctx):
    class Odd(dp.Module):
        def forward(self, x):
            raise ValueError("bad \udc80 byte")

    with pytest.raises(dp.CallbackError, match=r"ValueError: bad \\udc80 byte") as info:
        Odd(ctx)(ctx.zeros([2]))
    assert isinstance(info.value.__cause__, ValueError)


def test_replicas_failing_with_the_same_message_chain_the_named_replicas_exception(ctx):
    # Same message on both replicas: the cause is the exception raised on the device the
    # error names (replica 0's), told apart by where it ran, not whichever came last.
    seen = {}

    class Same(dp.Module):
        def forward(self, x):
            e = ValueError("the same message")
            seen[str(x.device)] = e
            raise e

    net = dp.DataParallel(Same(ctx), ["cpu:0", "cpu:1"])
    for _ in range(20):
        with pytest.raises(dp.CallbackError, match="in replica 0 on device cpu:0") as info:
            net(ctx.zeros([4, 2]))
        assert info.value.__cause__ is seen["cpu:0"]
