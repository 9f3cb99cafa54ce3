# shellcheck shell=bash disable=SC2034  # the variables are for the scripts that source it
# The part bench/compare.sh and bench/compare-bf16.sh share, sourced by both (not run):
# their common options, the learning rate's default, the device lists, the --limit
# arguments and the log that collects each run's JSON line.
#
# A script sets its own defaults for the extra options, then for each argument calls
#   compare_option "$@" && shift "$compare_shift" && continue
# (which takes --model, --epochs, --batch, --lr, --rounds, --limit and --build), and
# after its loop calls compare_setup NAME. Afterwards: $model $epochs $batch $lr $rounds
# $limit $build, $cpus, $devices_all (cpu:0,...,cpu:N-1), limit_args (an array) and $log
# (a temporary file, removed on exit).

model=mlp epochs=1 batch=256 lr="" rounds=3 limit=0 build=build
cpus=$(nproc)
compare_shift=0

compare_option() {
  case "$1" in
    --model | --epochs | --batch | --lr | --rounds | --limit | --build)
      [ $# -ge 2 ] || { echo "$(basename "$0"): $1 needs a value" >&2; exit 2; }
      local name=${1#--}
      printf -v "$name" '%s' "$2"
      compare_shift=2
      return 0 ;;
  esac
  return 1
}

compare_setup() {
  local name=$1
  case "$model" in mlp | cnn) ;; *) echo "$name: --model is mlp or cnn, not '$model'" >&2; exit 2 ;; esac
  if [ -z "$lr" ]; then lr=$([ "$model" = cnn ] && echo 0.05 || echo 0.1); fi
  [ -x "$build/bin/dp-train" ] || { echo "$name: build dp-train first ($build/bin/dp-train)" >&2; exit 2; }
  devices_all=$(seq -s, -f "cpu:%g" 0 $((cpus - 1)))
  limit_args=()
  if [ "$limit" != 0 ]; then limit_args=(--limit "$limit"); fi
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
}
