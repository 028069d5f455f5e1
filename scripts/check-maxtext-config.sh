#!/usr/bin/env bash
# Real MaxText config parsing (outside the README's test command because it downloads
# ~300 MB from PyPI once): builds the graintune CLI, makes a virtual environment with the pinned
# maxtext package and what its config loader imports (tests/maxtext_config/requirements.txt,
# cached in ~/.cache/graintune/venv-maxtext-<hash>), and runs tests/maxtext_config with pytest:
# every example manifest and admission-table case, rewritten by graintune, run through bash and
# loaded by MaxText's own pyconfig. Extra arguments go to pytest (e.g. -k env -x).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/python_env.sh
build_graintune_cli
# maxtext 0.2.x requires Python >= 3.12 (python3 here is often older; pyenv has one).
PYTHON="$(find_python 12 check-maxtext-config "maxtext 0.2.x requires it")"
VENV="$(pinned_venv maxtext "$PYTHON" tests/maxtext_config/requirements.txt \
  "pinned maxtext + its config loader's imports")"
export GRAINTUNE_BIN="$PWD/build/cli/graintune"
cd tests/maxtext_config
exec "$VENV/bin/python" -m pytest -p no:cacheprovider -q "$@" .
