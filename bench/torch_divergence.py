#!/usr/bin/python3
"""How far dp-train's weights move from PyTorch's over the first steps of one experiment.

dp-train runs torch_reference.py's experiment for a seed (the same initial weights, the
same batches), so the two float32 runs part only through rounding. This measures how
much: it trains the same steps with dp-train, with PyTorch in float32 and with PyTorch in
float64 (from the same float32 start), and prints, after each number of steps, the
distance between the runs' weights relative to the float64 run's norm. If dp-train
computed anything differently from PyTorch (a gradient, the momentum, the batch order),
"dp vs torch32" would be at least as large as "torch32 vs float64", the distance that
float32 rounding alone puts between PyTorch and exact arithmetic.

  /usr/bin/python3 bench/torch_divergence.py --model cnn --lr 0.05 --steps 10,20,40,80

Each row trains from the start again (dp-train with --limit, PyTorch the same rows), so
the rows' cost adds up: the float64 CNN takes about a second per step on one core.
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "train"))
# The dp-train tests' copies of torch_reference.py's models and loop, and checkpoint reader.
from reference import read_safetensors, torch_train  # noqa: E402


def torch_weights(args, epochs, dtype):
    model, _ = torch_train(args.model, args.limit, epochs, args.batch, args.lr, args.seed, dtype)
    return {k: v.detach().double().numpy() for k, v in model.state_dict().items()}


def dp_weights(args, epochs, path):
    subprocess.run([args.dp_train, "--model", args.model, "--lr", str(args.lr), "--seed",
                    str(args.seed), "--limit", str(args.limit), "--epochs", str(epochs),
                    "--batch", str(args.batch), "--devices", args.devices, "--quiet",
                    "--checkpoint", path], check=True, stdout=subprocess.DEVNULL)
    return read_safetensors(pathlib.Path(path))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="cnn", choices=["mlp", "cnn"])
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--steps", default="10,20,40,80",
                   help="numbers of steps, each a multiple of --steps-per-epoch")
    p.add_argument("--steps-per-epoch", type=int, default=10,
                   help="dp-train's --limit is this many batches")
    p.add_argument("--devices", default="cpu:0,cpu:1")
    p.add_argument("--dp-train", default=os.path.join(HERE, "..", "build", "bin", "dp-train"))
    args = p.parse_args()
    args.limit = args.steps_per_epoch * args.batch
    steps = [int(s) for s in args.steps.split(",")]
    bad = [s for s in steps if s <= 0 or s % args.steps_per_epoch]
    if bad:
        sys.exit(f"torch_divergence.py: --steps {bad[0]} is not a positive multiple of "
                 f"--steps-per-epoch {args.steps_per_epoch}")
    torch.set_num_threads(1)
    print(f"{args.model}, lr {args.lr}, seed {args.seed}, batch {args.batch}, dp-train on "
          f"{args.devices}; distances relative to the float64 run's weights", flush=True)
    print(f"{'steps':>6} {'dp vs torch32':>14} {'torch32 vs float64':>19} {'dp vs float64':>14} "
          f"{'ratio':>7}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in steps:
            epochs = n // args.steps_per_epoch
            ours = dp_weights(args, epochs, os.path.join(tmp, "ck.safetensors"))
            f32 = torch_weights(args, epochs, torch.float32)
            f64 = torch_weights(args, epochs, torch.float64)
            names = list(f64)

            def flat(w):
                return np.concatenate([np.asarray(w[k], np.float64).ravel() for k in names])
            scale = np.linalg.norm(flat(f64))
            d_dp32 = np.linalg.norm(flat(ours) - flat(f32)) / scale
            d_3264 = np.linalg.norm(flat(f32) - flat(f64)) / scale
            d_dp64 = np.linalg.norm(flat(ours) - flat(f64)) / scale
            print(f"{n:6d} {d_dp32:14.3e} {d_3264:19.3e} {d_dp64:14.3e} {d_dp32 / d_3264:7.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
