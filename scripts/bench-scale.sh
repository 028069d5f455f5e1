#!/usr/bin/env bash
# graintune at cluster scale on the local control plane (bench/scale/scale_main.cc): 2,048 KWOK
# TPU Nodes with node leases renewed every 10 s, graintune installed from its Helm chart (the
# webhook and operator run here with the chart's arguments), 8 JobSets x 256 hosts plus 100
# single-host Jobs with grain_worker_count=-1 restarted twice, every exporter's /steps served
# over real HTTP by a light stand-in; 10% of exporters then blackholed or answering after 10 s.
# Prints one table and one JSON line: admission latency added (pod creation with and without the
# webhook, interleaved bursts of one slice), the operator's CPU, RSS and API requests per minute
# at steady state, how long after a trial's data its recommendation was in status, and the
# webhook's connections refused or reclaimed during the bursts, by reason, from its own metric
# graintune_webhook_connections_shed_total (refused_full refuses admissions: the target is 0).
#   bash scripts/bench-scale.sh [BASELINE_REV] [--hosts 2048] [--singles 100] [--rounds 3] ...
# With BASELINE_REV that revision's webhook and operator (built once, cached under
# ~/.cache/graintune/) run the same benchmark first, for figures side by side.
# Not part of the test command: ~15-25 min per build on 2 cores, ~6 GiB of memory.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/baseline_build.sh
bash scripts/setup.sh
BASELINE=""
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then BASELINE="$1"; shift; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build graintune-webhook graintune-operator scale_bench >/dev/null
BIN="$(bash scripts/controlplane/build.sh | tail -n 1)"
if [ -n "$BASELINE" ]; then
  rev="$(git rev-parse --short "$BASELINE")"
  B="$(baseline_build "$rev")"
  echo "== baseline $rev" >&2
  build/bench/scale_bench --bin-dir "$BIN" --source-dir "$PWD" --build-dir "$B/build" --commit "$rev" "$@"
  echo "== now ($(git rev-parse --short HEAD)$(git diff --quiet || echo +changes))" >&2
fi
exec build/bench/scale_bench --bin-dir "$BIN" --source-dir "$PWD" --build-dir "$PWD/build" \
  --commit "$(git rev-parse --short HEAD)$(git diff --quiet || echo +changes)" "$@"
