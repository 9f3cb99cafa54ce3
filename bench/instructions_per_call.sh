#!/usr/bin/env bash
# Instructions per call of a loop benchmark, counted by callgrind: runs COMMAND twice,
# with its N argument (the literal word N) replaced by 20000 and by 40000, and prints the
# difference of the two instruction counts over 20000, which leaves out start-up and
# exit. Timings on a shared VM move by 10-25% from run to run; instruction counts do not.
#
#   bench/instructions_per_call.sh build/bin/dp-bench call-cost --side dp --calls N
#   bench/instructions_per_call.sh build/bin/dp-binding-overhead-c --calls N --repeats 1
#
# Under valgrind, oneDNN runs its AVX2 kernels (valgrind has no AVX-512). To count
# another build of the library, put its libdataparallel.so.0 in a directory named by
# LD_LIBRARY_PATH (the programs' RUNPATH gives way to it).
set -euo pipefail
if [ $# -lt 2 ] || ! printf '%s\n' "$@" | grep -qx N; then
  echo "usage: $0 COMMAND... (one argument of COMMAND is the literal N)" >&2
  exit 2
fi
command -v valgrind > /dev/null || { echo "$0: valgrind is not installed" >&2; exit 1; }
count() {  # the instructions of one run with N = $1
  local args=() a
  for a in "${@:2}"; do
    if [ "$a" = N ]; then args+=("$1"); else args+=("$a"); fi
  done
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "${args[@]}" 2>&1 > /dev/null |
    sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}
low=$(count 20000 "$@")
high=$(count 40000 "$@")
if [ -z "$low" ] || [ -z "$high" ]; then
  echo "$0: callgrind printed no count" >&2
  exit 1
fi
echo "{\"command\": \"$*\", \"instructions_per_call\": $(( (high - low) / 20000 ))}"
