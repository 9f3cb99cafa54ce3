#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into tests/fuzz/corpus/<target>/.

Reproducible: the same files every run (no randomness). Each seed is a small valid or
near-valid input; the encoders below mirror how each target decodes its bytes (see the
fuzz_<target>.cc files), so a change there needs the matching change here. Run with
DP_FUZZ_TRACE=1 through build/bin/fuzz_replay_capi_sequence to see what a sequence does.

    tests/fuzz/make_seeds.py            # rewrites every corpus directory
"""
import json
import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(data))


# ---- safetensors ----------------------------------------------------------------------

def safetensors(entries, metadata=None, header_extra=None, pad=True, length_delta=0,
                tail=b""):
    """entries: list of (name, dtype, shape, raw bytes)."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    data = b""
    for name, dtype, shape, raw in entries:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if header_extra:
        header.update(header_extra)
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text) + length_delta) + text + data + tail


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


def f64(*v):
    return struct.pack("<%dd" % len(v), *v)


def i64(*v):
    return struct.pack("<%dq" % len(v), *v)


def safetensors_seeds():
    t = "safetensors"
    mlp = [("0.weight", "F32", [2, 3], f32(1, 2, 3, 4, 5, 6)),
           ("0.bias", "F32", [2], f32(0.5, -0.5)),
           ("steps", "I64", [], i64(7)),
           ("scale", "F64", [1], f64(0.25))]
    write(t, "mlp_with_metadata", safetensors(mlp, {"format": "pt", "epoch": "3"}))
    write(t, "mlp_plain", safetensors(mlp))
    write(t, "empty_header", safetensors([]))
    write(t, "metadata_only", safetensors([], {"k": "v"}))
    write(t, "zero_size_tensor", safetensors([("e", "F32", [0, 3], b""), ("s", "F32", [1], f32(1))]))
    write(t, "unpadded_header", safetensors(mlp, pad=False))
    # Near-valid: each breaks one rule.
    write(t, "truncated_data", safetensors(mlp)[:-3])
    write(t, "trailing_bytes", safetensors(mlp, tail=b"\0\0\0\0"))
    write(t, "header_length_too_big", safetensors(mlp, length_delta=1 << 40))
    write(t, "header_length_off_by_8", safetensors(mlp, length_delta=8))
    write(t, "bf16_dtype", safetensors([("x", "BF16", [2], b"\0\0\0\0")]))
    write(t, "negative_size", safetensors([], header_extra={
        "x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}}))
    write(t, "huge_size", safetensors([], header_extra={
        "x": {"dtype": "F64", "shape": [1 << 62, 4], "data_offsets": [0, 0]}}))
    write(t, "unsigned_past_int64", safetensors([], header_extra={
        "x": {"dtype": "F32", "shape": [18446744073709551615, 0], "data_offsets": [0, 0]}}))
    write(t, "overlapping_entries", safetensors([], header_extra={
        "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
        "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}) + f32(1))
    write(t, "offsets_reversed", safetensors([], header_extra={
        "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}) + f32(1))
    write(t, "not_json", struct.pack("<Q", 4) + b"{\"a\"")
    write(t, "metadata_not_string", safetensors([], {"k": 1}))
    write(t, "short", b"\x08\0\0")
    fixture = os.path.join(HERE, "..", "fixtures", "plain_writer_mlp.safetensors")
    if os.path.exists(fixture):
        shutil.copyfile(fixture, os.path.join(CORPUS, t, "fixture_plain_writer_mlp"))


# ---- idx ------------------------------------------------------------------------------

def idx(dims, data=None, type_byte=8, ndim=None):
    n = 1
    for d in dims:
        n *= d
    if data is None:
        data = bytes(i % 251 for i in range(n))
    head = bytes([0, 0, type_byte, len(dims) if ndim is None else ndim])
    return head + b"".join(struct.pack(">I", d) for d in dims) + data


def idx_seeds():
    t = "idx"
    write(t, "labels_5", idx([5]))
    write(t, "images_2x3x3", idx([2, 3, 3]))
    write(t, "four_dims", idx([1, 2, 2, 2]))
    write(t, "zero_dim", idx([3, 0]))
    write(t, "truncated", idx([2, 3, 3])[:-1])
    write(t, "extra_byte", idx([2, 2]) + b"\x01")
    write(t, "bad_magic", b"\x01" + idx([2])[1:])
    write(t, "float_type", idx([2], type_byte=0x0D))
    write(t, "five_dims", idx([1, 1, 1, 1, 1]))
    write(t, "zero_ndim", bytes([0, 0, 8, 0]))
    write(t, "header_cut", idx([7, 7])[:9])
    write(t, "sizes_overflow", idx([0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF], data=b""))


# ---- dlpack ---------------------------------------------------------------------------

def dlpack(ndim, shape, dtype=0, strides=0, stride_bytes=b"", device=0, device_id=None,
           size=0, size_bytes=b"", align=0, data=1, offset=0, offset_bytes=b"", deleter=1):
    """Mirrors fuzz_dlpack.cc decode(): every field is a selector byte (see there)."""
    out = [ndim + 1]  # ndim_sel < 224: ndim = sel % 11 - 1
    sizes = list(shape) + [1] * (12 - len(shape))
    out += [s for s in sizes]  # size_value: a byte < 200 is that byte % 6
    out += [1]  # shape not NULL
    out += [dtype]  # 0 f32, 1 f64, 2 i64, 3 f16, 4 u8, 5 i32, 6 bf16
    out += [strides] + list(stride_bytes)  # 0 NULL, 1 compact, 2 one changed, 3 any
    out += [device]  # < 6: kDLCPU, 6: kDLCUDA
    out += [1] if device_id is None else [0] + list(struct.pack("<i", device_id))
    out += [size] + list(size_bytes)  # < 5: what the shape needs, 5: one less, else a u16
    out += [align]  # 6: misaligned by 1, 7: by 4
    out += [data]  # 0: NULL
    out += [offset] + list(offset_bytes)  # < 5: 0, 5/6: elem * next byte % 4, 7: any u64
    out += [deleter]  # 0: no deleter
    out += [1]  # a context
    return bytes(out)


def dlpack_seeds():
    t = "dlpack"
    write(t, "f32_2x3", dlpack(2, [2, 3]))
    write(t, "f64_4", dlpack(1, [4], dtype=1))
    write(t, "i64_scalar", dlpack(0, [], dtype=2))
    write(t, "f32_compact_strides", dlpack(3, [2, 1, 3], strides=1))
    write(t, "f32_not_compact", dlpack(2, [2, 3], strides=2, stride_bytes=[0, 5]))
    write(t, "f32_offset_one_element", dlpack(1, [3], size=6, size_bytes=struct.pack("<H", 16),
                                                 offset=5, offset_bytes=[1]))
    write(t, "f32_empty", dlpack(2, [0, 3]))
    write(t, "f32_no_deleter", dlpack(1, [2], deleter=0))
    write(t, "f16_unsupported", dlpack(1, [2], dtype=3))
    write(t, "cuda_device", dlpack(1, [2], device=6))
    write(t, "misaligned", dlpack(1, [2], align=6))
    write(t, "buffer_too_small", dlpack(1, [4], size=5))
    write(t, "nine_dims", dlpack(9, [1] * 9))


# ---- tensor_create ----------------------------------------------------------------------

CREATORS = {"zeros": 0, "empty": 1, "full": 2, "from_data": 3, "from_borrowed": 4,
            "from_adopted": 5}
VALUES = [0.0, 1.0, -2.5, 3.75, 1e300, -1e300, 9.3e18, -9.3e18, 2.0 ** 63, -2.0 ** 63,
          "nan", "inf", "-inf"]


def tensor_create(creator, dtype, shape, value_index=1, device=0, index=0, index_bytes=b"",
                  nbytes_sel=0, data_sel=0, deleter=True, payload=b""):
    """Mirrors fuzz_tensor_create.cc decode()."""
    out = [CREATORS[creator], 0, dtype]  # creator, no NULL ctx/out, dtype_sel < 200
    out += [len(shape), 1]  # ndim = byte % 13, shape not NULL
    out += [s if 0 <= s < 6 else s for s in list(shape) + [0] * (12 - len(shape))]
    out += [device, index] + list(index_bytes)  # device_sel < 224: CPU; index_sel < 200: % 2
    out += [0] * 8 + [value_index]  # pick(): the f64 is read first, then the selector
    out += [1 if data_sel != 1 else 0]  # data_sel: first byte % 16 == 0 -> NULL
    if data_sel != 1:
        out += [0 if data_sel == 2 else 1]  # second byte % 16 == 0 -> misaligned
    out += [1 if deleter else 0]
    out += [nbytes_sel]  # < 5: what the shape needs, 5: +1, 6: 0, 7: any u64
    return bytes(out) + payload


def tensor_create_seeds():
    t = "tensor_create"
    write(t, "zeros_f32_2x3", tensor_create("zeros", 0, [2, 3]))
    write(t, "empty_f64_4", tensor_create("empty", 1, [4]))
    write(t, "full_i64_scalar", tensor_create("full", 2, [], value_index=2))
    write(t, "full_f32_huge_value", tensor_create("full", 0, [2], value_index=4))
    write(t, "from_data_f32_2x2", tensor_create("from_data", 0, [2, 2], payload=bytes(range(16))))
    write(t, "from_data_nbytes_plus_one", tensor_create("from_data", 0, [2], nbytes_sel=5))
    write(t, "borrowed_i64_3", tensor_create("from_borrowed", 2, [3], payload=bytes(24)))
    write(t, "borrowed_misaligned", tensor_create("from_borrowed", 1, [1], data_sel=2))
    write(t, "adopted_f32_2", tensor_create("from_adopted", 0, [2]))
    write(t, "adopted_bad_index", tensor_create("from_adopted", 0, [2], index=200,
                                                    index_bytes=bytes(5)))  # index 2
    write(t, "zeros_nine_dims", tensor_create("zeros", 0, [1] * 9))
    write(t, "zeros_cuda", tensor_create("zeros", 0, [1], device=230))
    write(t, "zeros_bad_dtype", bytes([0, 0, 200]) + struct.pack("<i", 7) + bytes([6]) +
          tensor_create("zeros", 0, [1])[3:])


# ---- capi_sequence ----------------------------------------------------------------------

class Seq:
    """Mirrors fuzz_capi_sequence.cc: each method emits one call's opcode and arguments
    and tracks the pool sizes the interpreter will have (for the pick bytes)."""

    def __init__(self, seed=1, release_order=0):
        self.out = [seed, release_order]
        self.tensors = 0
        self.modules = 0
        self.optimizers = 0
        self.wrappers = 0

    def b(self, *v):
        self.out += list(v)

    def pick(self, pool_size, i):
        if pool_size:
            assert 0 <= i < pool_size, (i, pool_size)
            self.b(i)

    def keep_tensor(self, n=1):
        self.tensors = min(self.tensors + n, 24)

    def keep_module(self):
        self.modules = min(self.modules + 1, 10)

    # size v in 0..4 as dim() reads it
    @staticmethod
    def dim(v):
        return {0: 0, 1: 4, 2: 1, 3: 2, 4: 3}[v]

    def tensor(self, shape, dtype="f32", device=0, how="data", values=None, grad=False):
        self.b(0, {"f32": 0, "f64": 6, "i64": 7}[dtype], len(shape))
        self.b(*[self.dim(s) for s in shape])
        self.b(device)
        self.b({"zeros": 0, "full": 1, "borrowed": 2, "adopted": 3, "data": 4}[how])
        n = 1
        for s in shape:
            n *= s if 0 < s <= 8 else 1
        values = values or [(i * 3) % 7 - 3 for i in range(n)]
        self.b(*[v & 0xFF for v in values[:n]])
        if how == "full":
            self.b(*[0] * 8, 3)  # real(): value 0.5
        if dtype != "i64":
            self.b(0 if grad else 1)
        self.keep_tensor()
        return self.tensors - 1

    def labels(self, values, classes, device=0):
        """values: class indices, or None for one out of range (== classes)."""
        self.b(1, len(values) - 1, classes - 1)
        for v in values:
            self.b(*([250, 1] if v is None else [v]))
        self.b(device)
        self.keep_tensor()
        return self.tensors - 1

    def binary(self, a, b, op=0):  # add, sub, mul, div
        self.b(2)
        self.pick(self.tensors, a)
        self.pick(self.tensors, b)
        self.b(op)
        self.keep_tensor()
        return self.tensors - 1

    def linear_module(self, n_in, n_out, bias=True, device=0):
        self.b(12, 0, n_in - 1, n_out - 1, 1 if bias else 0, device)
        self.keep_module()
        return self.modules - 1

    def relu_module(self):
        self.b(12, 2)
        self.keep_module()
        return self.modules - 1

    def sequential(self):
        self.b(12, 9)
        self.keep_module()
        return self.modules - 1

    def custom_module(self, mode):
        self.b(12, 13, mode, 1)
        self.keep_module()
        return self.modules - 1

    def append(self, parent, child):
        self.b(13)
        self.pick(self.modules, parent)
        self.pick(self.modules, child)
        self.pick(self.tensors, 0)
        self.b(0, 0)

    def register_parameter(self, module, tensor, name_index=0):  # names: w, b, weight, ...
        self.b(13)
        self.pick(self.modules, module)
        self.pick(self.modules, module)
        self.pick(self.tensors, tensor)
        self.b(2, name_index)

    def forward1(self, module, x):
        self.b(14)
        self.pick(self.modules, module)
        self.pick(self.tensors, x)
        self.pick(self.tensors, x)
        self.b(0, 0)
        self.keep_tensor()
        return self.tensors - 1

    def cross_entropy(self, logits, labels):
        self.b(6)
        self.pick(self.tensors, logits)
        self.pick(self.tensors, labels)
        self.b(0)
        self.keep_tensor()
        return self.tensors - 1

    def backward(self, t, retain=False):
        self.b(11)
        self.pick(self.tensors, t)
        self.b(1, 1 if retain else 0)

    def optimizer(self, module, kind="sgd", lr_index=6):
        self.b(16, 0)
        self.pick(self.modules, module)
        self.pick(self.optimizers, 0)
        self.b(*[0] * 8, lr_index)  # real(): 6 is 0.1
        if kind == "sgd":
            self.b(0, 1, 0, 0, 1)  # momentum 0.9, no nesterov, no decay, options given
        else:
            self.b(1 if kind == "adam" else 2, 0, 0)
        self.optimizers = min(self.optimizers + 1, 3)
        return self.optimizers - 1

    def step(self, opt, zero=False):
        self.b(16, 3 if zero else 1)
        self.pick(self.modules, 0)
        self.pick(self.optimizers, opt)
        self.b(*[0] * 8, 0)

    def data_parallel(self, module, devices=2, no_gather=False, cache=False):
        self.b(17)
        self.pick(self.modules, module)
        self.b({1: 0, 2: 2}[devices])  # [cpu0] or [cpu0, cpu1]
        self.b(1)  # device_ids given
        self.b(1)  # output device cpu:0
        self.b(0)  # dim 0
        self.b(self.dim(1), self.dim(1))  # chunk sizes (unused below)
        self.b(1)  # no chunk sizes
        self.b(0 if no_gather else 1, 1 if cache else 0, 0, 1, 0, 1)
        self.wrappers = min(self.wrappers + 1, 2)
        return self.wrappers - 1

    def dp_forward(self, wrapper, x, y, capacity=1):
        self.b(18)
        self.pick(self.wrappers, wrapper)
        self.b(3)
        self.pick(self.tensors, x)
        self.pick(self.tensors, y)
        self.b(1, 1, 0, capacity, 0)  # no broadcast, one input, capacity, no flags
        self.keep_tensor(capacity)
        return self.tensors - 1

    def checkpoint(self, module, op, optimizer=None):
        # op: 0 module_save, 1 module_load, 2 checkpoint_save, 3 checkpoint_load
        self.b(19)
        self.pick(self.modules, module)
        self.b(0 if optimizer is None else 1)
        if optimizer is not None:
            self.pick(self.optimizers, optimizer)
        self.pick(self.wrappers, 0)
        self.b(op, 1)  # the scratch path
        if op == 2:
            self.b(2)  # two metadata entries

    def release_tensor(self, i):
        self.b(21, 0)
        self.pick(self.tensors, i)
        self.tensors -= 1

    def release_module(self, i):
        self.b(21, 4)
        self.pick(self.modules, i)
        self.modules -= 1

    def bytes(self):
        return bytes(self.out)


def capi_sequence_seeds():
    t = "capi_sequence"

    # A tiny classifier trained for two steps with SGD, then checkpointed and reloaded.
    s = Seq(seed=1)
    x = s.tensor([4, 3])
    y = s.labels([0, 1, 1, 0], 2)
    net = s.sequential()
    l1 = s.linear_module(3, 4)
    s.append(net, l1)
    r = s.relu_module()
    s.append(net, r)
    l2 = s.linear_module(4, 2)
    s.append(net, l2)
    opt = s.optimizer(net)
    for _ in range(2):
        out = s.forward1(net, x)
        loss = s.cross_entropy(out, y)
        s.backward(loss)
        s.step(opt)
        s.step(opt, zero=True)
    s.checkpoint(net, 2, optimizer=opt)
    s.checkpoint(net, 3, optimizer=opt)
    write(t, "train_mlp_sgd_checkpoint", s.bytes())

    # The same model under DataParallel over two CPU devices, trained with Adam.
    s = Seq(seed=2, release_order=5)
    x = s.tensor([4, 3])
    y = s.labels([1, 0, 1, 1], 2)
    net = s.sequential()
    s.append(net, s.linear_module(3, 4))
    s.append(net, s.relu_module())
    s.append(net, s.linear_module(4, 2))
    opt = s.optimizer(net, kind="adam")
    w = s.data_parallel(net)
    out = s.dp_forward(w, x, x)
    loss = s.cross_entropy(out, y)
    s.backward(loss)
    s.step(opt)
    s.checkpoint(net, 0)
    s.checkpoint(net, 1)
    write(t, "data_parallel_two_cpus_adam", s.bytes())

    # A custom module with a parameter under DataParallel, then a failing one.
    s = Seq(seed=3, release_order=2)
    x = s.tensor([4, 2], grad=True)
    wt = s.tensor([2], how="full")
    m = s.custom_module(0)
    s.register_parameter(m, wt)
    w = s.data_parallel(m)
    out = s.dp_forward(w, x, x)
    loss = s.binary(out, out, 2)
    s.b(4)  # reduce: pick, op 0 = sum
    s.pick(s.tensors, loss)
    s.b(0, 0, 0)
    s.keep_tensor()
    s.backward(s.tensors - 1)
    bad = s.custom_module(8)  # fails on cpu:1
    w2 = s.data_parallel(bad)
    s.dp_forward(w2, x, x)
    write(t, "custom_module_data_parallel", s.bytes())

    # Elementwise ops with broadcasting, views and releases out of order.
    s = Seq(seed=4, release_order=1)
    a = s.tensor([2, 3], how="borrowed")
    b = s.tensor([3], how="adopted")
    c = s.binary(a, b, 0)
    d = s.binary(c, a, 2)
    s.release_tensor(a)
    s.binary(d - 1, d - 1, 1)
    s.release_tensor(0)
    write(t, "broadcast_and_release", s.bytes())

    # Labels out of range for cross_entropy, a module given the wrong input width.
    s = Seq(seed=5)
    x = s.tensor([2, 2])
    y = s.labels([0, None], 2)
    lin = s.linear_module(4, 2)
    s.forward1(lin, x)
    s.cross_entropy(x, y)
    write(t, "errors_bad_labels_and_width", s.bytes())


def main():
    if os.path.isdir(CORPUS):
        shutil.rmtree(CORPUS)
    safetensors_seeds()
    idx_seeds()
    dlpack_seeds()
    tensor_create_seeds()
    capi_sequence_seeds()
    total = 0
    for root, _, files in os.walk(CORPUS):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print("make_seeds: wrote %s (%d bytes)" % (CORPUS, total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
