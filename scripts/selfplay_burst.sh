#!/usr/bin/env bash
# A burst of self-play on a machine lent for a few minutes (a GPU machine: the network server
# judges every worker's leaves there), coming back as a few files:
#
#     bash scripts/selfplay_burst.sh RUN_DIR SECONDS OUT [cli.py selfplay options...]
#
# RUN_DIR: a run to go on with (copied there with the checkout), or a new one (the options
# then name its --config and selfplay.init_net). The run plays and trains for SECONDS, is
# stopped by SIGTERM as a user's kill stops it (every finished generation kept), and what
# changed in RUN_DIR (its new checkpoints, its resume state, its metrics) is packed into
# OUT as run.tgz.00, run.tgz.01, ... of at most 15 MiB each. Back on the first machine:
#
#     cat OUT/run.tgz.* | tar xzf - -C RUN_DIR     # then cli.py selfplay --resume RUN_DIR goes on
#
# Keras runs on JAX (scripts/gpu_env.sh: as the machine has it, or from carried wheels).
set -u
if [ $# -lt 3 ]; then
    echo "usage: scripts/selfplay_burst.sh RUN_DIR SECONDS OUT [cli.py selfplay options...]" >&2
    exit 2
fi
run_dir=$1 seconds=$2 out=$3
shift 3
case $seconds in
    '' | *[!0-9]*) echo "selfplay_burst.sh: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
mkdir -p "$out" "$run_dir"
source scripts/gpu_env.sh || exit 2
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
# SIGTERM at the end: the run commits what it finished and stops (then KILL, should it hang)
which=--run-dir
[ -d "$run_dir/resume" ] && which=--resume  # a run under way goes on with its own configuration
timeout -s TERM -k 180 "$seconds" $python cli.py selfplay --no-progress "$which" "$run_dir" "$@" \
    > "$out/selfplay.log" 2>&1
echo "exit $? after ${seconds} s" >> "$out/selfplay.log"
(cd "$run_dir" && find . -type f -newer "$stamp" ! -name lock -print0 | tar czf - --null -T -) \
    | split -b 15M -d - "$out/run.tgz."
ls -l "$out" >> "$out/selfplay.log"
