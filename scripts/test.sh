#!/usr/bin/env bash
# The project's test command (README, .ci/run): installs what it needs, builds with warnings as
# errors, builds (or reuses) the local control plane, and runs every ctest label: unit,
# integration (a real kube-apiserver) and e2e (the full control plane with KWOK TPU nodes).
# GRAINTUNE_REQUIRE_CONTROLPLANE=1 turns a missing control plane into a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DGRAINTUNE_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$BUILD_DIR"
GRAINTUNE_CONTROLPLANE_BIN="$(bash scripts/controlplane/build.sh | tail -n 1)"
export GRAINTUNE_CONTROLPLANE_BIN GRAINTUNE_REQUIRE_CONTROLPLANE=1
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 900 "$@"
