#!/usr/bin/env bash
# The README's main command: the local demo. Installs the build dependencies, builds graintune,
# builds (once, cached outside the repo, with progress) or reuses the control plane, then runs
# graintune-demo: a real kube-apiserver with KWOK TPU nodes, graintune installed from its Helm
# chart, the example Llama3-8B v6e-32 JobSet mutated, measured and re-tuned across a restart.
# Everything it starts stops when it ends or is interrupted (Ctrl-C).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== Building graintune" >&2
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build graintune graintune-webhook graintune-operator graintune-exporter trainer_emulator \
  graintune-demo >/dev/null
echo "== Control plane binaries (first run builds them from pinned Go modules: ~10-15 min)" >&2
BIN="$(bash scripts/controlplane/build.sh | tail -n 1)"
exec build/tests/controlplane/graintune-demo --bin-dir "$BIN" --source-dir "$PWD" --build-dir "$PWD/build"
