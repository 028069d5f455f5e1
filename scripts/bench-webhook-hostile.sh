#!/usr/bin/env bash
# Hostile inputs against graintune-webhook (bench/webhook_hostile/hostile.py): deep nesting,
# scripts with tens of thousands of -1 sites, 3 MB bodies (one and two at once), thousands of
# idle TLS connections, a header that never ends, header fields of the wrong type, and a
# billion-laughs YAML file given to `graintune explain`. Each class runs against a fresh process;
# the table gives status, time, peak RSS and the worst /healthz latency while it ran.
#   bash scripts/bench-webhook-hostile.sh [BASELINE_REV]
# With BASELINE_REV (e.g. a release tag or commit) that revision is built too (cached under
# ~/.cache/graintune/) and both run side by side in one table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BASELINE="${1:-}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build graintune-webhook graintune >/dev/null
W="$(mktemp -d /tmp/graintune-hostile-XXXXXX)"
trap 'rm -rf "$W"; git worktree prune' EXIT INT TERM
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$W/tls.key" \
  -out "$W/tls.crt" -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -days 1 2>/dev/null
hooks=("now=build/webhook/graintune-webhook")
clis=(--cli "now=build/cli/graintune")
if [ -n "$BASELINE" ]; then
  rev="$(git rev-parse --short "$BASELINE")"
  B="$HOME/.cache/graintune/bench-baseline-$rev"
  if [ ! -x "$B/build/webhook/graintune-webhook" ]; then
    rm -rf "$B" && mkdir -p "$B"
    git archive "$rev" | tar -x -C "$B"
    cmake -S "$B" -B "$B/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    ninja -C "$B/build" graintune-webhook graintune >/dev/null
  fi
  hooks=("$rev=$B/build/webhook/graintune-webhook" "${hooks[@]}")
  clis+=(--cli "$rev=$B/build/cli/graintune")
fi
ulimit -n 8192
python3 bench/webhook_hostile/hostile.py --cert "$W/tls.crt" --key "$W/tls.key" "${clis[@]}" "${hooks[@]}"
