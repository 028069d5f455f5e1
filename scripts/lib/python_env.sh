# Sourced by the scripts that run Python (check-maxtext-config.sh, bench-real-grain.sh,
# maxtext-trainer.sh, bench-real-maxtext.sh): building the graintune CLI, finding a recent
# enough Python, and a cached virtual environment made from a fully pinned requirements file.

# Installs the build dependencies and builds build/cli/graintune.
build_graintune_cli() {
  bash scripts/setup.sh
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  ninja -C build graintune >/dev/null
}

# find_python MIN_MINOR WHO WHY: prints the first Python 3.MIN_MINOR or newer among python3 on
# PATH, python3.14..python3.12 on PATH and pyenv's versions; exits naming WHO and WHY if none.
find_python() {
  local min_minor=$1 who=$2 why=$3 candidate
  for candidate in python3 python3.14 python3.13 python3.12 \
      $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[0-9]*/bin/python3 2>/dev/null); do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c "import sys; sys.exit(0 if sys.version_info >= (3, $min_minor) else 1)" 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  echo "$who: FAILED: no Python >= 3.$min_minor found ($why); install python3.$min_minor" >&2
  exit 1
}

# pinned_venv NAME PYTHON REQUIREMENTS WHAT: prints ~/.cache/graintune/venv-NAME-<hash of the
# requirements and the Python version>, creating it first when missing: `pip install --no-deps`
# of the frozen list into a temporary directory renamed only when the install succeeded, so an
# interrupted or failed install is never reused (also where the caller's `set -e` does not reach,
# as in a command substitution), and under a lock, so two scripts starting together build it
# once. Use it through its bin/python (entry-point scripts keep the temporary path).
pinned_venv() {
  local name=$1 python=$2 req=$3 what=$4 venv
  venv="$HOME/.cache/graintune/venv-$name-$(cat "$req" <("$python" -V) | sha256sum | cut -c1-12)"
  mkdir -p "$(dirname "$venv")"
  (
    flock 9
    if [ ! -x "$venv/bin/python" ]; then
      echo "== Creating $venv with $("$python" -V) ($what)" >&2
      rm -rf "$venv.tmp"
      "$python" -m venv "$venv.tmp" &&
        "$venv.tmp/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$req" >&2 &&
        mv "$venv.tmp" "$venv" || { echo "FAILED: could not build $venv" >&2; rm -rf "$venv.tmp"; exit 1; }
    fi
  ) 9>"$venv.lock" || return 1
  echo "$venv"
}
