#!/usr/bin/env bash
# The project's test command (README, .ci/run): installs what it needs, builds with warnings as
# errors, and runs every ctest label (unit, integration, e2e). Integration and e2e tests need
# the control plane built by scripts/controlplane/build.sh; this script builds or reuses it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DGRAINTUNE_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$BUILD_DIR"
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 900 "$@"
