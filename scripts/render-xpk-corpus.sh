#!/usr/bin/env bash
# Renders the JobSets of the differential corpus that xpk writes (tests/maxtext_config/corpus/xpk/)
# with xpk itself: `xpk workload create --dry-run ... --output-manifest-file` (and
# `workload create-pathways`), which needs no cluster, gcloud or kubectl: in a dry run xpk prints
# the commands it would run instead of running them. xpk comes from a cached virtual environment
# made from tests/maxtext_config/xpk-requirements.txt (xpk 1.16.0 and its pins, PyPI once; the
# file is made by freezing a fresh install when it does not exist yet), with a HOME of its own
# whose xpk config turns telemetry off.
#
# Usage: scripts/render-xpk-corpus.sh [OUT_DIR]   (default: the corpus itself). Each file opens with
# the xpk version and the command that made it. The Xpk ctest re-renders into a temporary
# directory and compares (tests/maxtext_config/test_xpk_render.py).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/python_env.sh
PYTHON="$(find_python 10 render-xpk-corpus "xpk 1.16.0 requires it")"
REQUIREMENTS=tests/maxtext_config/xpk-requirements.txt
if [ ! -f "$REQUIREMENTS" ]; then
  # The pins, made once: xpk 1.16.0 with what pip resolves for it, frozen (commit the file).
  echo "== Pinning xpk 1.16.0 into $REQUIREMENTS" >&2
  pins="$(mktemp -d)"
  "$PYTHON" -m venv "$pins/venv"
  "$pins/venv/bin/python" -m pip install --quiet --disable-pip-version-check xpk==1.16.0 >&2
  {
    echo "# xpk 1.16.0 and what it imports, pinned as \`pip freeze\` printed it ($("$PYTHON" -V)); installed"
    echo "# with \`pip install --no-deps -r\` into a cached venv by scripts/render-xpk-corpus.sh."
    "$pins/venv/bin/python" -m pip freeze --disable-pip-version-check
  } > "$REQUIREMENTS"
  rm -rf "$pins"
fi
VENV="$(pinned_venv xpk "$PYTHON" "$REQUIREMENTS" "xpk, to render its JobSets")"
OUT="$(mkdir -p "${1:-tests/maxtext_config/corpus/xpk}" && cd "${1:-tests/maxtext_config/corpus/xpk}" && pwd)"
XPK_VERSION="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("xpk"))')"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home/.config/xpk"
printf 'configs:\n  send-telemetry: "false"\n' > "$WORK/home/.config/xpk/config.yaml"

IMAGE=us-docker.pkg.dev/example/maxtext-runner:latest
TRAIN="python3 -m maxtext.trainers.pre_train.train MaxText/configs/base.yml"
GRAIN="dataset_type=grain grain_train_files=/data/c4/x.array_record"
COMMON=(--project=example-project --zone=us-east5-b --cluster=tpu-cluster --docker-image="$IMAGE")

# render NAME SUBCOMMAND ARGS...: one manifest, headed by the version and the command.
render() {
  local name=$1 sub=$2
  shift 2
  local out="$WORK/$name.yaml"
  if ! (cd "$WORK" && HOME="$WORK/home" "$VENV/bin/python" -c 'from xpk.main import main; main()' \
        workload "$sub" --dry-run "${COMMON[@]}" --workload="$name" "$@" \
        --output-manifest-file="$out" >"$WORK/$name.log" 2>&1); then
    echo "render-xpk-corpus: xpk failed for $name:" >&2
    tail -n 30 "$WORK/$name.log" >&2
    exit 1
  fi
  {
    echo "# Rendered by xpk $XPK_VERSION (scripts/render-xpk-corpus.sh):"
    printf '#   xpk workload %s --dry-run --workload=%s' "$sub" "$name"
    printf ' %q' "$@"
    printf ' --output-manifest-file=FILE\n'
    cat "$out"
  } > "$OUT/$name.yaml"
}

render xpk-v6e-8-run-name-env create --tpu-type=v6e-8 --env RUN_NAME=r9 \
  --command "$TRAIN $GRAIN base_output_directory=gs://b/o run_name=\$RUN_NAME grain_worker_count=-1"
render xpk-v6e-32-grain create --tpu-type=v6e-32 \
  --command "$TRAIN $GRAIN base_output_directory=gs://b/runs run_name=llama-32 model_name=llama3-8b per_device_batch_size=2 grain_worker_count=-1"
render xpk-v6e-8-jobset-name create --tpu-type=v6e-8 \
  --command "$TRAIN $GRAIN base_output_directory=gs://b/runs grain_worker_count=-1"
render xpk-v5p-8-tfds create --tpu-type=v5p-8 \
  --command "$TRAIN dataset_type=tfds dataset_path=gs://b/tfds base_output_directory=gs://b/runs run_name=v5p-tfds grain_worker_count=-1"
render xpk-multislice-v6e-16x2 create --tpu-type=v6e-16 --num-slices=2 \
  --command "$TRAIN dcn_data_parallelism=2 $GRAIN base_output_directory=gs://b/runs run_name=ms grain_worker_count=-1"
render xpk-debug-logs-elastic create --tpu-type=v6e-16 --enable-debug-logs \
  --command "$TRAIN $GRAIN packing=false grain_use_elastic_iterator=true base_output_directory=gs://b/runs run_name=el grain_worker_count=-1"
render xpk-stacktrace-sidecar create --tpu-type=v6e-16 --deploy-stacktrace-sidecar \
  --command "$TRAIN $GRAIN base_output_directory=gs://b/runs run_name=st grain_worker_count=-1"
render xpk-v5litepod-16-checkpointing-off create --tpu-type=v5litepod-16 \
  --command "$TRAIN $GRAIN enable_checkpointing=false base_output_directory=gs://b/runs run_name=no-ckpt grain_worker_count=-1"
render xpk-env-script-args create --tpu-type=v6e-16 --env "ARGS=$GRAIN base_output_directory=gs://b/runs" --env RUN_ID=r-args \
  --command "$TRAIN \$ARGS run_name=\${RUN_ID} grain_worker_count=-1"
render xpk-pathways-v6e-16 create-pathways --tpu-type=v6e-16 --pathways-gcs-location=gs://b/pathways \
  --command "$TRAIN enable_single_controller=True $GRAIN base_output_directory=gs://b/runs run_name=pw grain_worker_count=-1"

# xpk's TPU system characteristics, for the machine-table unit tests (tuner/slice_names_test.cc).
HOME="$WORK/home" "$VENV/bin/python" tests/maxtext_config/dump_xpk_systems.py "$XPK_VERSION" \
  > "$OUT/xpk-tpu-systems.csv"
