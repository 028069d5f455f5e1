#!/usr/bin/env bash
# Draws docs/dashboard.png: the chart's Grafana dashboard (charts/graintune/dashboards/graintune.json)
# over a real run of the local demo. A Prometheus (Debian's, from scripts/setup.sh) scrapes the
# demo's graintune-webhook and graintune-operator every second while graintune-demo runs (a real
# control plane with KWOK TPU nodes; the Llama3-8B v6e-32 JobSet tuned across restarts), then
# scripts/dashboard_picture/render.py runs each panel's queries against it and draws them with
# matplotlib from a pinned virtual environment (~/.cache/graintune/venv-dashboard-<hash>).
# Prints what each query returned. Outside the README's test command.
#
#   bash scripts/dashboard-picture.sh [OUT.png]      (default docs/dashboard.png)
# GRAINTUNE_BUILD_DIR picks the build folder (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-docs/dashboard.png}"
BUILD="${GRAINTUNE_BUILD_DIR:-build}"
. scripts/lib/python_env.sh
bash scripts/setup.sh
command -v prometheus >/dev/null || { echo "dashboard-picture: FAILED: prometheus is not installed (apt-get install prometheus)" >&2; exit 1; }
echo "== Building graintune" >&2
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$BUILD" graintune graintune-webhook graintune-operator graintune-exporter trainer_emulator \
  graintune-demo >/dev/null
BIN="$(bash scripts/controlplane/build.sh | tail -n 1)"
PYTHON="$(find_python 10 dashboard-picture "matplotlib 3.11 needs it")"
VENV="$(pinned_venv dashboard "$PYTHON" scripts/dashboard_picture/requirements.txt "pinned matplotlib")"

WORK="$(mktemp -d)"
PROM_PID=""
cleanup() {
  if [ -n "$PROM_PID" ]; then kill "$PROM_PID" 2>/dev/null || true; wait "$PROM_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
PORT="$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
echo '[]' > "$WORK/targets.json"
cat > "$WORK/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: graintune
    file_sd_configs: [{files: ["$WORK/targets.json"], refresh_interval: 1s}]
YAML
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$PORT" >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$PORT/-/ready" >/dev/null 2>&1 && break
  kill -0 "$PROM_PID" 2>/dev/null || { cat "$WORK/prometheus.log" >&2; exit 1; }
  sleep 0.2
done
curl -fs "http://127.0.0.1:$PORT/-/ready" >/dev/null || { echo "dashboard-picture: FAILED: Prometheus not ready" >&2; exit 1; }

echo "== The demo, scraped by Prometheus on 127.0.0.1:$PORT" >&2
START="$(date +%s)"
"$BUILD/tests/controlplane/graintune-demo" --bin-dir "$BIN" --source-dir "$PWD" --build-dir "$PWD/$BUILD" \
  --scrape-targets "$WORK/targets.json"
END="$(date +%s)"
echo "== Drawing $OUT from the run ($((END - START)) s)" >&2
"$VENV/bin/python" scripts/dashboard_picture/render.py --prometheus "http://127.0.0.1:$PORT" \
  --start "$START" --end "$END" --dashboard charts/graintune/dashboards/graintune.json --out "$OUT" \
  --caption "graintune dashboard panels over one run of scripts/demo.sh's flow (KWOK TPU nodes, emulated trainer, real webhook and operator), scraped every 1 s"
