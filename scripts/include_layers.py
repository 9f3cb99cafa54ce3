#!/usr/bin/env python3
"""The house's picture: the #include "..." arrows between the folders of core/.

Each folder of core/ is a layer, and a layer may include only its own folder and the
layers below it. The script reads every source file of core/, resolves each
#include "..." as the preprocessor does (beside the including file, then in core/, the
core's include directory), prints one line per arrow
between two folders with the number of includes behind it, and exits 1 naming the file
and the include of every arrow that points upward (from a lower layer to a higher one),
or of a file in a folder that is no layer. Files at core/'s root (error.h) sit below
every layer.

Usage: include_layers.py [CORE_DIR]   (default: the core/ beside this script's folder)
"""

import pathlib
import re
import sys

# Bottom first. device/ holds the Backend interface, the element types and the workers;
# device/cpu/ is the CPU backend behind that interface; context/ is the Context, the
# registry that builds the backends (the CPU one included) and owns the workers, and the
# work sharing over its CPU workers; tensor/ builds storage and tensors on the backends'
# memory, and the plain copies between them; autograd/ records and runs the graph over
# tensors, with its own gradient arithmetic; ops/ are the differentiable ops, nn/ the
# modules, optim/ the optimizers; parallel/ is the DataParallel pipeline over modules; io/
# reads and writes tensors, modules and optimizers.
LAYERS = ["device", "device/cpu", "context", "tensor", "autograd", "ops", "nn", "optim",
          "parallel", "distributed", "io"]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
SOURCES = (".h", ".cc", ".cpp", ".hpp")


def folder_of(path: pathlib.PurePosixPath) -> str:
    """The layer folder of a path relative to core/ ("" for core/'s root)."""
    return str(path.parent) if str(path.parent) != "." else ""


def main() -> int:
    core = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                        pathlib.Path(__file__).resolve().parent.parent / "core")
    if not core.is_dir():
        print(f"include_layers: {core} is not a directory", file=sys.stderr)
        return 2
    # core/'s root (error.h) sits below every layer.
    rank = {"": -1, **{name: i for i, name in enumerate(LAYERS)}}
    arrows = {}  # (from folder, to folder) -> count
    upward = []  # (file, include, from folder, to folder)
    errors = []
    for source in sorted(p for p in core.rglob("*") if p.suffix in SOURCES and p.is_file()):
        rel = pathlib.PurePosixPath(source.relative_to(core).as_posix())
        src = folder_of(rel)
        if src and src not in rank:
            errors.append(f"{rel}: folder {src}/ is no layer (add it to LAYERS)")
            continue
        for include in INCLUDE.findall(source.read_text(encoding="utf-8", errors="replace")):
            # As the preprocessor looks for "...": beside the including file first, then
            # in core/ (the core's include directory).
            target = None
            for base in (source.parent, core):
                candidate = (base / include).resolve()
                if candidate.is_file() and candidate.is_relative_to(core.resolve()):
                    target = candidate
                    break
            if target is None:
                continue  # not the core's own header (a plugin's, a generated one)
            dst = folder_of(pathlib.PurePosixPath(target.relative_to(core.resolve()).as_posix()))
            if dst == src:
                continue
            if dst not in rank:
                errors.append(f"{rel}: includes \"{include}\" from folder {dst}/, which is no layer")
                continue
            arrows[(src, dst)] = arrows.get((src, dst), 0) + 1
            if rank[dst] > rank[src]:
                upward.append((str(rel), include, src, dst))

    print("layers, bottom first: " + " < ".join(LAYERS))
    for (src, dst), count in sorted(arrows.items(), key=lambda a: (rank[a[0][0]], rank[a[0][1]])):
        direction = "UP  " if rank[dst] > rank[src] else "down"
        print(f"  {direction} {src or '(root)':>10} -> {dst or '(root)':<10} {count:3d} include(s)")
    for rel, include, src, dst in upward:
        errors.append(f"{rel}: #include \"{include}\" points upward ({src or '(root)'} -> {dst}); "
                      f"layers, bottom first: {', '.join(LAYERS)}")
    for e in errors:
        print("error: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
