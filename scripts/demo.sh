#!/usr/bin/env bash
# The README's main command. Until the local control-plane demo lands (issue: Helm chart,
# examples and the one-command demo), it shows graintune's decision for the seed's workload:
# the -1 it finds in an xpk-style Llama3-8B JobSet on v6e-32, the host shape, the value and
# why, then what the across-restart logic does with simulated attempts.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja >/dev/null
ninja -C build graintune >/dev/null
G=build/cli/graintune

echo "== What graintune finds and decides for examples/llama3-8b-v6e-32-jobset.yaml"
$G explain examples/llama3-8b-v6e-32-jobset.yaml
echo
echo "== The seed's measurements, reproduced by the calibrated simulator (steady state, 60 steps)"
for w in 1 2 4 8; do
  printf '%s workers: ' "$w"
  $G simulate --machine-type ct6e-standard-4t --tpu-chips 4 --per-device-batch-size 2 \
    --max-target-length 8192 --dataset-kind raw-text --tokens-per-second-per-worker 2184 \
    --step-seconds 4.3 --workers "$w" --steps 60 | tail -1
done
