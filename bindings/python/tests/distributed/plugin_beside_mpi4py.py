"""A process group whose plugin was built against another MPI than mpi4py's fails with an
error that says so, instead of handing one implementation's handles to the other. Run by
ctest as one process, with DP_MPI_PLUGIN naming the plugin built against MPICH, beside
Debian's mpi4py, which is Open MPI's (their headers and libraries follow MPI 4.0 and 3.1).
Exits 77 (skipped) without mpi4py, or when mpi4py's MPI is MPICH."""
import sys

try:
    from mpi4py import MPI
except ImportError:
    sys.exit(77)
if "MPICH" in MPI.Get_library_version():
    sys.exit(77)

import dataparallel as dp  # noqa: E402 - after mpi4py, whose MPI must be loaded first

ctx = dp.Context(cpu_devices=1, load_cuda=False)
for start in (lambda: dp.ProcessGroup.from_mpi4py(ctx, MPI.COMM_WORLD),
              lambda: dp.ProcessGroup.from_mpi(ctx)):
    try:
        start().close()
    except dp.BackendError as e:
        if "another MPI library was loaded into this process first" not in str(e):
            sys.exit(f"unexpected message: {e}")
        print(e)
    else:
        sys.exit("a process group started on the plugin of another MPI than mpi4py's")
ctx.close()
