#!/usr/bin/env bash
# The GPU figures of docs/speed.md in one prepared run (about 8 minutes on an H200 with 16
# cores), for a machine lent for a few minutes:
#
#     bash benchmarks/gpu.sh [OUT]     # figures into OUT (default: $OUT, else ./gpu-figures)
#
# 9x9 Go self-play with the ResNet of 6 blocks of 64 filters, 32 simulations a move,
# 16 games in lock-step a worker, with 1, 4 and 16 workers, a network in every worker and
# the network server (positions a second, the server's batch and busy share, the GPU's
# utilisation); then a training step (benchmarks/train_speed.py). Each part has a time
# limit, so one that hangs leaves the others' figures; what comes back is a few text files.
set -u
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-figures}}
mkdir -p "$out"
{
    date -u +%FT%TZ
    git rev-parse --short HEAD 2>/dev/null
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
    nproc
} > "$out/machine.txt"
# Keras on JAX: as the machine has it, from carried wheels, or the gpu extra (scripts/gpu_env.sh)
source scripts/gpu_env.sh > "$out/install.txt" 2>&1 || { cat "$out/install.txt"; exit 2; }
timeout 420 $python benchmarks/selfplay_speed.py --workers 1,4,16 --games-list go9 --nets pv_resnet --lockstep 16 \
    --batch-sizes 8 --search 32 --max-moves 60 --set nets.pv_resnet.blocks=6 --set nets.pv_resnet.filters=64 \
    > "$out/selfplay.txt" 2>&1
echo "exit $?" >> "$out/selfplay.txt"
timeout 120 $python benchmarks/train_speed.py > "$out/train.txt" 2>&1
echo "exit $?" >> "$out/train.txt"
tail -n 40 "$out"/*.txt | cut -c1-300 > "$out/summary.txt"
