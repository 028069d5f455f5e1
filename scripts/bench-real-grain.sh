#!/usr/bin/env bash
# Real Grain, side by side (issue #7; outside the README's test command: it downloads ~60 MB
# from PyPI once and runs for a few minutes). Builds the graintune CLI, makes a virtual
# environment with the pinned grain + tokenizers (bench/real_grain/requirements.txt, cached in
# ~/.cache/graintune/venv-grain-<hash>), builds the local corpus and tokenizer once
# (~/.cache/graintune/real-grain), and runs bench/real_grain/grain_benchmark.py: per worker count
# the pipeline's capacity, its throughput under a paced consumer and the workers' RSS, then each
# method's pick (MaxText default, Grain's pick_performance_config, all cores, graintune first pick
# and after two restarts) as a fraction of the best. Ends with one JSON summary line. Extra
# arguments go to grain_benchmark.py (e.g. --max-workers 6 --seconds 10).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build graintune >/dev/null

PYTHON="$(command -v python3)"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
  { echo "bench-real-grain: FAILED: grain 0.2.18 needs Python >= 3.10, found $("$PYTHON" -V)" >&2; exit 1; }
REQ=bench/real_grain/requirements.txt
VENV="$HOME/.cache/graintune/venv-grain-$(cat "$REQ" <("$PYTHON" -V) | sha256sum | cut -c1-12)"
if [ ! -x "$VENV/bin/python" ] || [ ! -f "$VENV/.complete" ]; then
  echo "== Creating $VENV with $("$PYTHON" -V) (pinned grain + tokenizers)" >&2
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$REQ"
  touch "$VENV/.complete"
fi
cd bench/real_grain
# Grain logs a warning that jax (its optional profiler) is absent; nothing here uses it.
exec "$VENV/bin/python" -W ignore::UserWarning grain_benchmark.py --graintune "$OLDPWD/build/cli/graintune" "$@" \
  2> >(grep -v "Failed to load jax profiler" >&2)
