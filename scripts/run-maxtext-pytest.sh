#!/usr/bin/env bash
# Runs a pytest file of tests/maxtext_config under the pinned MaxText environment's python (ctest,
# label maxtext): GRAINTUNE_MAXTEXT_PYTHON (scripts/lib/maxtext_trainer.sh, exported by
# scripts/test.sh) and GRAINTUNE_BIN (the graintune CLI, set by ctest). Without the environment it
# exits 77 (ctest's skip) with a loud message, or fails under GRAINTUNE_REQUIRE_CONTROLPLANE=1, as
# the other maxtext tests do. Arguments go to pytest.
set -euo pipefail
if [ -z "${GRAINTUNE_MAXTEXT_PYTHON:-}" ] || [ ! -x "${GRAINTUNE_MAXTEXT_PYTHON}" ]; then
  echo "SKIPPED: GRAINTUNE_MAXTEXT_PYTHON is not set: run scripts/test.sh, or" >&2
  echo "  . scripts/lib/python_env.sh; . scripts/lib/maxtext_trainer.sh; export_maxtext_trainer_env" >&2
  [ "${GRAINTUNE_REQUIRE_CONTROLPLANE:-}" = 1 ] && exit 1
  exit 77
fi
cd "$(dirname "$0")/../tests/maxtext_config"
exec "$GRAINTUNE_MAXTEXT_PYTHON" -m pytest -p no:cacheprovider -q -rf "$@"
