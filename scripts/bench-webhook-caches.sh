#!/usr/bin/env bash
# Memory of graintune-webhook and graintune-operator in a cluster holding thousands of objects
# graintune does not need (bench/webhook_caches/cache_memory_main.cc): 3,000 ConfigMaps of
# MaxText-sized YAML, 3,000 Jobs graintune never tuned, 750 CPU Nodes, and 64 TPU Nodes.
#   bash scripts/bench-webhook-caches.sh [BASELINE_REV] [--objects N] [--rounds R]
# With BASELINE_REV that revision is built too (cached under ~/.cache/graintune/) and both run
# against the same control plane in interleaved rounds; the table gives medians and ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/baseline_build.sh
bash scripts/setup.sh
BASELINE=""
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then BASELINE="$1"; shift; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build graintune-webhook graintune-operator cache_memory >/dev/null
BIN="$(bash scripts/controlplane/build.sh | tail -n 1)"
builds=()
if [ -n "$BASELINE" ]; then
  rev="$(git rev-parse --short "$BASELINE")"
  B="$(baseline_build "$rev")"
  builds+=(--build "$rev=$B/build/webhook/graintune-webhook,$B/build/operator/graintune-operator")
fi
builds+=(--build "now=build/webhook/graintune-webhook,build/operator/graintune-operator")
exec build/bench/cache_memory --bin-dir "$BIN" --crd-dir crds "${builds[@]}" "$@"
