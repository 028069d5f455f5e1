# Sourced by scripts that run MaxText's own trainer on this machine's CPU. Needs
# scripts/lib/python_env.sh sourced first.

# maxtext_trainer_env: builds what is missing, once, and prints KEY=VALUE lines:
#   GRAINTUNE_MAXTEXT_PYTHON         the cached venv's python (bench/real_maxtext/requirements.txt)
#   GRAINTUNE_MAXTEXT_SMALL_RECORDS  ArrayRecord of tf.train.Example records, ~4 KiB of text each
#   GRAINTUNE_MAXTEXT_LARGE_RECORDS  the same text in 512 KiB records (a data-bound pipeline)
#   GRAINTUNE_MAXTEXT_TOKENIZER      a SentencePiece model trained on that text
#   GRAINTUNE_MAXTEXT_TINY_ARGS      the tiny model's MaxText overrides, space-separated
# The data lives in ~/.cache/graintune/maxtext-data-<hash of the corpus builder and the venv>.
# Nothing is downloaded at run time: the venv comes from PyPI once, the text from this machine.
maxtext_trainer_env() {
  local python venv data
  python="$(find_python 12 maxtext-trainer "maxtext 0.2.x requires it")"
  venv="$(pinned_venv maxtext-trainer "$python" bench/real_maxtext/requirements.txt \
    "MaxText's trainer on CPU")" || return 1
  data="$HOME/.cache/graintune/maxtext-data-$(cat bench/real_maxtext/corpus.py \
    bench/real_grain/corpus.py <(echo "$venv") | sha256sum | cut -c1-12)"
  echo "GRAINTUNE_MAXTEXT_PYTHON=$venv/bin/python"
  nice "$venv/bin/python" bench/real_maxtext/corpus.py "$data" || return 1
  echo "GRAINTUNE_MAXTEXT_TINY_ARGS=$(tr '\n' ' ' < bench/real_maxtext/tiny-model.args | sed 's/ $//')"
}

# export_maxtext_trainer_env: maxtext_trainer_env, its variables exported into this shell (for
# the tests, the demo and the benchmark that run MaxText). Fails when the environment cannot be
# made.
export_maxtext_trainer_env() {
  local lines key value
  lines="$(maxtext_trainer_env)" || { echo "FAILED: MaxText's trainer environment" >&2; return 1; }
  while IFS='=' read -r key value; do export "$key=$value"; done <<<"$lines"
}
