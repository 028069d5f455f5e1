#!/usr/bin/env bash
# Real MaxText, data-bound on this machine's CPU (outside the README's test command: it downloads
# ~1.5 GB from PyPI once and runs for ~15-25 minutes on 2 cores). Builds the graintune CLI, makes
# or reuses MaxText's trainer environment, corpus and tokenizer (scripts/maxtext-trainer.sh),
# and runs bench/real_maxtext/maxtext_benchmark.py: a sweep of grain_worker_count on a pipeline
# that tokenizes 512 KiB records for a tiny model (interleaved rounds, the machine's load beside
# every figure), the oracle, MaxText's default and -1, and graintune's first pick and its picks
# after one and two restarts fed the step times MaxText wrote; then two checkpointed runs that
# keep one value each (run 1 with no knowledge, run 2 with what run 1 taught: its step times,
# its workers' busy share and memory), and run 1 after a practice lap (run 1's value with
# checkpointing off, then the value `graintune recommend --lap` gives from the lap's figures),
# beside the oracle's and -1's steps/s; a table and one JSON line.
# Extra arguments go to maxtext_benchmark.py (e.g. --workers 0,1,2 --rounds 3 --steps 20).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/python_env.sh
. scripts/lib/maxtext_trainer.sh
build_graintune_cli
export_maxtext_trainer_env
exec "$GRAINTUNE_MAXTEXT_PYTHON" bench/real_maxtext/maxtext_benchmark.py --graintune "$PWD/build/cli/graintune" "$@"
