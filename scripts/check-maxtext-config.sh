#!/usr/bin/env bash
# Real MaxText config parsing (issue #7; outside the README's test command because it downloads
# ~300 MB from PyPI once): builds the graintune CLI, makes a virtual environment with the pinned
# maxtext package and what its config loader imports (tests/maxtext_config/requirements.txt,
# cached in ~/.cache/graintune/venv-maxtext-<hash>), and runs tests/maxtext_config with pytest:
# every example manifest and admission-table case, rewritten by graintune, run through bash and
# loaded by MaxText's own pyconfig. Extra arguments go to pytest (e.g. -k env -x).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build graintune >/dev/null

# maxtext 0.2.x requires Python >= 3.12: the first one found on PATH or under pyenv.
PYTHON=""
for candidate in python3.14 python3.13 python3.12 $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3 2>/dev/null); do
  if command -v "$candidate" >/dev/null 2>&1 &&
     "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
    PYTHON="$(command -v "$candidate")"; break
  fi
done
if [ -z "$PYTHON" ]; then
  echo "check-maxtext-config: FAILED: no Python >= 3.12 found (maxtext 0.2.x requires it); install python3.12" >&2
  exit 1
fi

REQ=tests/maxtext_config/requirements.txt
VENV="$HOME/.cache/graintune/venv-maxtext-$(cat "$REQ" <("$PYTHON" -V) | sha256sum | cut -c1-12)"
if [ ! -x "$VENV/bin/pytest" ]; then
  echo "== Creating $VENV with $("$PYTHON" -V) (pinned maxtext + its config loader's imports)" >&2
  rm -rf "$VENV.tmp"
  "$PYTHON" -m venv "$VENV.tmp"
  "$VENV.tmp/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$REQ"
  mv "$VENV.tmp" "$VENV"
fi
export GRAINTUNE_BIN="$PWD/build/cli/graintune"
cd tests/maxtext_config
exec "$VENV/bin/python" -m pytest -p no:cacheprovider -q "$@" .
