#!/usr/bin/env python3
"""PyTorch side of the GPU benchmark (scripts/gpu-check.sh runs it beside dp_gpu_bench).

The same work as bench/dp_gpu_bench.cc, in eager PyTorch on the same GPU:
  train  MLP and CNN of bench/torch_reference.py, SGD (lr 0.1, momentum 0.9),
         cross entropy, each batch copied from host (pageable) memory every step, batch
         256 and 4096, one GPU
  sgemm  8192^3 float32 torch.matmul
TF32 is off on both sides (matmul and cuDNN), as in the library's default.
Prints one JSON object per line, e.g.
  {"impl": "torch", "bench": "train", "model": "mlp", "batch": 256, "devices": 1,
   "samples_per_s": 123456.0}
Exits 1 when no CUDA device is visible.
  python3 bench/torch_gpu_reference.py [--seconds 1.5] [--only train|sgemm]
"""
import argparse
import json
import sys
import time

import torch


def make_model(name):
    nn = torch.nn
    if name == "mlp":
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(),
                             nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))


def train(model_name, batch, seconds, dev):
    torch.manual_seed(0)
    model = make_model(model_name).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(1234)
    count = 4 if batch >= 4096 else 16
    shape = (batch, 1, 28, 28) if model_name == "cnn" else (batch, 784)
    batches = [(torch.rand(shape, generator=g), torch.randint(0, 10, (batch,), generator=g))
               for _ in range(count)]
    state = {"next": 0}

    def step():
        x, y = batches[state["next"] % count]
        state["next"] += 1
        x, y = x.to(dev), y.to(dev)
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    torch.cuda.synchronize(dev)
    t0 = time.perf_counter()
    for _ in range(3):
        step()
    torch.cuda.synchronize(dev)
    per_step = (time.perf_counter() - t0) / 3
    steps = int(min(2000, max(5, seconds / per_step)))
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize(dev)
    return steps * batch / (time.perf_counter() - t0)


def sgemm(n, iters, dev):
    g = torch.Generator(device=dev).manual_seed(7)
    a = torch.rand((n, n), device=dev, generator=g) * 2 - 1
    b = torch.rand((n, n), device=dev, generator=g) * 2 - 1
    for _ in range(2):
        torch.matmul(a, b)
    torch.cuda.synchronize(dev)
    t0 = time.perf_counter()
    for _ in range(iters):
        torch.matmul(a, b)
    torch.cuda.synchronize(dev)
    return 2.0 * n ** 3 * iters / (time.perf_counter() - t0) / 1e12


def emit(**fields):
    print(json.dumps(dict(impl="torch", **fields)), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=1.5)
    p.add_argument("--only", choices=["train", "sgemm"])
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("torch_gpu_reference: no CUDA device visible to PyTorch", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda", 0)
    print(f"torch_gpu_reference: torch {torch.__version__} on {torch.cuda.get_device_name(dev)}",
          file=sys.stderr)
    if args.only in (None, "train"):
        for model in ("mlp", "cnn"):
            for batch in (256, 4096):
                try:
                    sps = train(model, batch, args.seconds, dev)
                    emit(bench="train", model=model, batch=batch, devices=1,
                         samples_per_s=round(sps, 1))
                except Exception as e:  # keep going: the table shows what failed
                    emit(bench="train", model=model, batch=batch, devices=1, error=str(e))
    if args.only in (None, "sgemm"):
        try:
            emit(bench="sgemm", n=8192, tflops=round(sgemm(8192, 10, dev), 2))
        except Exception as e:
            emit(bench="sgemm", n=8192, error=str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
