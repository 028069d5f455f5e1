#!/usr/bin/env bash
# The xpk JobSets of the corpus are xpk's own: renders them again with the pinned xpk
# (scripts/render-xpk-corpus.sh into a temporary directory) and compares them byte for byte with
# tests/maxtext_config/corpus/xpk/. A difference means the corpus was edited by hand or the pin
# changed without re-rendering (run scripts/render-xpk-corpus.sh and commit its output).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -f tests/maxtext_config/xpk-requirements.txt ] || ! ls tests/maxtext_config/corpus/xpk/*.yaml >/dev/null 2>&1; then
  echo "check_xpk_render: FAILED: xpk's pins or its rendered JobSets are not checked in;" >&2
  echo "  run scripts/render-xpk-corpus.sh and commit tests/maxtext_config/xpk-requirements.txt and corpus/xpk/" >&2
  exit 1
fi
fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
bash scripts/render-xpk-corpus.sh "$fresh"
if ! diff -ru tests/maxtext_config/corpus/xpk "$fresh"; then
  echo "check_xpk_render: the checked-in xpk JobSets are not what xpk renders (see the diff above)" >&2
  exit 1
fi
echo "check_xpk_render: $(ls "$fresh" | wc -l) JobSets are exactly what xpk renders"
