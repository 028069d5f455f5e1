#!/usr/bin/env bash
# The project's test command (README, .ci/run): installs what it needs, builds with warnings as
# errors, builds (or reuses) the local control plane, and runs every ctest label: unit and
# maxtext (MaxText's own trainer and config loader on this machine's CPU) first, while the control
# plane and the images may still be in the making; then integration (a real kube-apiserver), e2e
# and maxtext-e2e (the full control plane with KWOK TPU nodes), node and node-maxtext (one real
# kubelet + containerd node beside them, with graintune helm-installed from the image
# scripts/image.sh builds; needs root, docs/real-node.md); then a short run of every fuzz target
# (scripts/fuzz.sh).
# GRAINTUNE_REQUIRE_CONTROLPLANE=1 turns a missing control plane into a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage prints its wall time on stderr ("test.sh: <stage> took N s"), the figures
# docs/development.md quotes for a cold and a warm run.
STAGE_STARTED=$SECONDS
stage_done() {
  echo "test.sh: $1 took $((SECONDS - STAGE_STARTED)) s" >&2
  STAGE_STARTED=$SECONDS
}
bash scripts/setup.sh
stage_done "Debian packages"
BUILD_DIR="${BUILD_DIR:-build}"
mkdir -p "$BUILD_DIR"
# MaxText's trainer environment for the maxtext label (tests/e2e/maxtext_e2e_test.cc): a pinned
# virtual environment (~1.5 GB from PyPI the first time), a corpus and a tokenizer made from this
# machine's text, all cached under ~/.cache/graintune. Made beside the build, at low priority: the
# first time it mostly waits on PyPI (4 min 20 s of wall time for 1 min 7 s of cpu, measured).
. scripts/lib/python_env.sh
. scripts/lib/maxtext_trainer.sh
MAXTEXT_ENV_FILE="$BUILD_DIR/maxtext-trainer-env.txt"
(renice -n 10 -p "$BASHPID" >/dev/null 2>&1 || true
 maxtext_trainer_env >"$MAXTEXT_ENV_FILE" 2>"$BUILD_DIR/maxtext-trainer-env.log") &
MAXTEXT_ENV_PID=$!
# The control plane (scripts/controlplane/build.sh: Go, from the module proxy, ~11 min of a cold
# machine) is built beside graintune's build too, at low priority: its module downloads, and
# the build's links and slowest files, leave a core idle that it fills, and so do the first
# ctest phase's waits. Waited for before the second phase. Warm, it is a cache hit in under a
# second.
CONTROLPLANE_BIN_FILE="$BUILD_DIR/controlplane-bin.txt"
(renice -n 10 -p "$BASHPID" >/dev/null 2>&1 || true
 bash scripts/controlplane/build.sh >"$CONTROLPLANE_BIN_FILE" 2>"$BUILD_DIR/controlplane-build.log") &
CONTROLPLANE_PID=$!
# A failed stage stops what runs beside it, children included (ninja's compilers, go's).
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
FUZZ_BUILD_PID=""  # started after the build
IMAGE_PID=""       # started after the build
stop_beside() {
  local pid
  for pid in "$MAXTEXT_ENV_PID" "$CONTROLPLANE_PID" "$FUZZ_BUILD_PID" "$IMAGE_PID"; do
    [ -z "$pid" ] || kill_tree "$pid"
  done
}
trap stop_beside EXIT
cmake -S . -B "$BUILD_DIR" -G Ninja -DGRAINTUNE_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$BUILD_DIR"
stage_done "build"
# The fuzz targets' clang build (build-fuzz/, ~2 min of both cores cold) at the lowest priority,
# from here until the fuzz stage: it takes only the CPU that the control plane's build, the
# images and ctest leave idle (a nice-19 process gets ~1.5% of a core that a nice-0 one wants),
# so the tests' timed steps keep their machine. Its log is build-fuzz/fuzz-build.log.
(renice -n 19 -p "$BASHPID" >/dev/null 2>&1 || true
 bash scripts/fuzz.sh --build-only >"$BUILD_DIR/fuzz-build-stage.log" 2>&1) &
FUZZ_BUILD_PID=$!
# The images the node tests install with helm (docs/images.md): built from the Dockerfile once
# per source change (~4 min cold on 2 cores, under 1 s when cached), beside the first ctest phase
# at low priority and waited for before the second (only the node tests use them); they export
# GRAINTUNE_IMAGE_ARCHIVE, GRAINTUNE_IMAGE_REF, GRAINTUNE_IMAGE_SOURCE_HASH and the rest.
# Made from this build's own binaries (image.sh --binaries: the Dockerfile's runtime stages,
# nothing compiled twice); tests/image/dockerfile_test.sh checks that the Dockerfile builds the
# same binaries itself.
IMAGE_VARIABLES_FILE="$BUILD_DIR/image-variables.txt"
(renice -n 10 -p "$BASHPID" >/dev/null 2>&1 || true
 bash scripts/image.sh --binaries "$BUILD_DIR" >"$IMAGE_VARIABLES_FILE" 2>"$BUILD_DIR/image-build.log") &
IMAGE_PID=$!
# The MaxText environment started beside the build: waited for, then GRAINTUNE_MAXTEXT_* exported.
if ! wait "$MAXTEXT_ENV_PID"; then
  tail -n 30 "$BUILD_DIR/maxtext-trainer-env.log" >&2
  echo "FAILED: MaxText's trainer environment (log: $BUILD_DIR/maxtext-trainer-env.log)" >&2
  exit 1
fi
while IFS='=' read -r key value; do export "$key=$value"; done <"$MAXTEXT_ENV_FILE"
stage_done "MaxText environment (the wait after the build)"
# Two tests at a time: a test that needs the whole machine (MaxText's trainer, the local demo's
# lap) takes both slots (GRAINTUNE_WHOLE_MACHINE in CMakeLists.txt); a test on the one real node
# takes one, beside a test that needs no node (GRAINTUNE_ONE_REAL_NODE). A failed test that ran a control
# plane leaves its logs in $BUILD_DIR/test-logs/<test>/ (tests/controlplane/failure_logs.h).
# ctest runs twice: first the labels that need no control plane (unit, maxtext), while the
# control plane may still be building beside them at low priority (cold, it fills the CPU those
# tests leave idle: their waits on MaxText's start, on laps and answers); then, once it is built,
# every other label. GRAINTUNE_REQUIRE_CONTROLPLANE=1 from the start: a test that needs the
# control plane and ran in the first phase would fail, never skip. Each run ends with its own
# "Label Time Summary" (seconds per label); then the ten slowest tests of both.
export GRAINTUNE_REQUIRE_CONTROLPLANE=1
export GRAINTUNE_TEST_LOG_DIR="$PWD/$BUILD_DIR/test-logs"
rm -rf "$GRAINTUNE_TEST_LOG_DIR"
CTEST_LOG="$BUILD_DIR/ctest-output.log"
: >"$CTEST_LOG"
NO_CONTROLPLANE_LABELS='^(unit|maxtext)$'
ctest_status=0
run_ctest() {
  (cd "$BUILD_DIR" && ctest --output-on-failure --timeout 900 -j "${GRAINTUNE_CTEST_JOBS:-2}" "$@") \
    2>&1 | tee -a "$CTEST_LOG" || ctest_status=$?
}
run_ctest -L "$NO_CONTROLPLANE_LABELS" "$@"
stage_done "ctest without the control plane (unit, maxtext)"
if ! wait "$IMAGE_PID"; then
  tail -n 30 "$BUILD_DIR/image-build.log" >&2
  echo "FAILED: the images (log: $BUILD_DIR/image-build.log)" >&2
  exit 1
fi
set -a
eval "$(cat "$IMAGE_VARIABLES_FILE")"
set +a
stage_done "images (the wait after those tests)"
if ! wait "$CONTROLPLANE_PID"; then
  tail -n 30 "$BUILD_DIR/controlplane-build.log" >&2
  echo "FAILED: the control plane (log: $BUILD_DIR/controlplane-build.log)" >&2
  exit 1
fi
GRAINTUNE_CONTROLPLANE_BIN="$(tail -n 1 "$CONTROLPLANE_BIN_FILE")"
export GRAINTUNE_CONTROLPLANE_BIN
stage_done "control plane (the wait after those tests)"
run_ctest -LE "$NO_CONTROLPLANE_LABELS" "$@"
echo "test.sh: the ten slowest tests (seconds):" >&2
# awk reads all of sort's output: `head` would close the pipe early, and under pipefail sort's
# SIGPIPE (141) would fail a run whose tests all passed.
sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/p' "$CTEST_LOG" \
  | sort -rn | awk 'NR <= 10 { print "  " $0 }' >&2
[ "$ctest_status" -eq 0 ] || exit "$ctest_status"
stage_done "ctest with the control plane (integration, e2e, maxtext-e2e, node, node-maxtext)"
# Then every fuzz target for GRAINTUNE_FUZZ_SECONDS each (README "Fuzzing"), one per core at a
# time, once the build started after graintune's is done.
if ! wait "$FUZZ_BUILD_PID"; then
  tail -n 40 "$BUILD_DIR/fuzz-build-stage.log" >&2
  echo "FAILED: the fuzz targets' build (log: $BUILD_DIR/fuzz-build-stage.log)" >&2
  exit 1
fi
bash scripts/fuzz.sh "${GRAINTUNE_FUZZ_SECONDS:-30}"
stage_done "fuzz"
