#!/usr/bin/env bash
# Real Grain, side by side (outside the README's test command: it downloads ~60 MB
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
. scripts/lib/python_env.sh
build_graintune_cli
PYTHON="$(find_python 10 bench-real-grain "grain 0.2.18 needs it")"
VENV="$(pinned_venv grain "$PYTHON" bench/real_grain/requirements.txt "pinned grain + tokenizers")"
cd bench/real_grain
# Grain logs a warning that jax (its optional profiler) is absent; nothing here uses it.
exec "$VENV/bin/python" -W ignore::UserWarning grain_benchmark.py --graintune "$OLDPWD/build/cli/graintune" "$@" \
  2> >(grep -v "Failed to load jax profiler" >&2)
