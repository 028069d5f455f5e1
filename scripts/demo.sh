#!/usr/bin/env bash
# The README's main command: the local demo. Installs the build dependencies, builds graintune,
# builds (once, cached outside the repo, with progress) or reuses the control plane, then runs
# graintune-demo: a real kube-apiserver with KWOK TPU nodes, graintune installed from its Helm
# chart, the example Llama3-8B v6e-32 JobSet mutated, measured and re-tuned across a restart,
# then a practice lap: the same job as a new run on one host runs its own command first (with a
# MaxText stand-in whose workers really spend cpu), and its trainer starts with the lap's value.
#
#   bash scripts/demo.sh --real-node
# runs the same story on one real node instead (kubelet + containerd + runc on this machine,
# labelled as a single-host v6e TPU VM; needs root): graintune's image built from the Dockerfile
# by scripts/image.sh (cached), `helm install`ed, a JobSet whose pod really runs a trainer and the
# exporter sidecar, a restart with the operator's value, and an OOMKilled attempt capped.
#
#   bash scripts/demo.sh --trainer maxtext
# runs MaxText's own trainer instead of the emulator (maxtext 0.2.5 on this machine's CPU: a
# pinned environment of ~1.5 GB from PyPI the first time, cached): a tiny model on one TPU host
# shaped like this machine, its Grain workers and metrics file real, re-tuned across a restart.
# With --real-node too, MaxText runs in a container on the real node (the test image, with this
# machine's pinned MaxText environment mounted read-only), and the story ends with a practice
# lap: a new run whose policy asks for one runs its own command for 20 steps first, and its
# trainer starts with the value the lap gave.
# Everything it starts stops when it ends or is interrupted (Ctrl-C); the real node restores
# every host setting it changed.
set -euo pipefail
cd "$(dirname "$0")/.."
real_node=0
trainer=emulator
usage() { echo "demo.sh: $1 (--real-node, --trainer emulator|maxtext, or nothing)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --real-node) real_node=1 ;;
    --trainer)
      [ $# -ge 2 ] || usage "--trainer needs a value"
      case "$2" in emulator|maxtext) trainer="$2" ;; *) usage "unknown trainer '$2'" ;; esac
      shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown argument '$1'" ;;
  esac
  shift
done
bash scripts/setup.sh
echo "== Building graintune" >&2
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
control_plane() {
  echo "== Control plane binaries (first run builds them from pinned Go modules: ~25 min)" >&2
  bash scripts/controlplane/build.sh | tail -n 1
}
maxtext_env() {
  echo "== MaxText's trainer environment (first run ~1.5 GB from PyPI, ~5 min; then cached)" >&2
  . scripts/lib/python_env.sh
  . scripts/lib/maxtext_trainer.sh
  export_maxtext_trainer_env
}
if [ "$real_node" = 0 ]; then
  ninja -C build graintune graintune-webhook graintune-operator graintune-exporter graintune-launcher \
    trainer_emulator maxtext_standin graintune-demo >/dev/null
  BIN="$(control_plane)"
  if [ "$trainer" = maxtext ]; then maxtext_env; fi
  exec build/tests/controlplane/graintune-demo --bin-dir "$BIN" --source-dir "$PWD" --build-dir "$PWD/build" \
    --trainer "$trainer"
fi
if [ "$(id -u)" != 0 ]; then
  echo "demo.sh --real-node: the real node needs root (it runs kubelet and containerd)" >&2
  exit 1
fi
ninja -C build graintune-demo-real-node >/dev/null
BIN="$(control_plane)"
echo "== graintune's images from the Dockerfile (first run ~10 min, then cached)" >&2
IMAGE_VARIABLES="$(bash scripts/image.sh)"
set -a
eval "$IMAGE_VARIABLES"
set +a
if [ "$trainer" = maxtext ]; then maxtext_env; fi
exec build/tests/node/graintune-demo-real-node --bin-dir "$BIN" --source-dir "$PWD" --trainer "$trainer"
