#!/usr/bin/env bash
# MaxText's own trainer, ready to run on this machine's CPU: a pinned virtual environment
# (~1.5 GB from PyPI on the first run, cached in ~/.cache/graintune/venv-maxtext-trainer-<hash>),
# a corpus of tf.train.Example records made from text on this machine and a SentencePiece
# tokenizer trained on it (cached in ~/.cache/graintune/maxtext-data-<hash>). Prints KEY=VALUE
# lines (see scripts/lib/maxtext_trainer.sh), e.g. for
#   eval "$(bash scripts/maxtext-trainer.sh)"; export ${!GRAINTUNE_MAXTEXT_@}
#   JAX_PLATFORMS=cpu "$GRAINTUNE_MAXTEXT_PYTHON" -m maxtext.trainers.pre_train.train \
#     $GRAINTUNE_MAXTEXT_TINY_ARGS grain_train_files="$GRAINTUNE_MAXTEXT_SMALL_RECORDS" \
#     tokenizer_path="$GRAINTUNE_MAXTEXT_TOKENIZER" run_name=tiny base_output_directory=/tmp/out \
#     steps=20 grain_worker_count=2 metrics_file=/tmp/metrics.jsonl
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/python_env.sh
. scripts/lib/maxtext_trainer.sh
maxtext_trainer_env
