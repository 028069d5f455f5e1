#!/usr/bin/env bash
# Builds graintune's container images from the Dockerfile without a container daemon or a
# registry, and writes each as an OCI archive (docs/images.md):
#   graintune       the webhook, operator and exporter (the chart's image)
#   graintune-test  trainer_emulator and grain_workers, for the node tests
#   pause           the test node's sandbox image (tests/node/pause.c)
#
#   bash scripts/image.sh [--tag TAG] [--source worktree|COMMIT] [--binaries BUILD_DIR] [--prune]
#
# --binaries BUILD_DIR: the compiled parts come from a CMake build folder of the same sources
# (scripts/test.sh passes its own) instead of the Dockerfile's `build` stage: every path the
# Dockerfile copies from /build/ is taken from BUILD_DIR (debug info stripped) and `pause` is
# compiled on this machine, both given to buildah as named contexts (directories) that replace
# the `build` and `pause-build` stages. No toolchain image is made and nothing is compiled twice;
# the runtime stages are the Dockerfile's own. A path the Dockerfile names that BUILD_DIR lacks is
# an error. The archives are then keyed by the binaries' hash, not the source's.
#
# How: Debian's buildah (vfs storage, chroot isolation, --pull=never). The C++ is compiled once:
# the Dockerfile's `build` stage (toolchain + compile) and `runtime` stage are each built once
# into a local image named after the source hash, and the three targets get them as named build
# contexts (`--build-context build=container-image://…`, the way BuildKit's named contexts
# override a stage), so `COPY --from=build` reads the one compiled tree and `pause` starts FROM
# the same toolchain. The Dockerfile stays an ordinary one (`docker build .` builds every stage
# itself). Not --layers: buildah 1.28's layer cache reuses a `COPY --from=build` step after the
# build stage changed (seen: an image labelled with the new source hash held the old binaries);
# the stage images here are named by the source hash and removed after the run instead. The
# Dockerfile's base images (debian:bookworm, debian:bookworm-slim) are made by mmdebstrap from
# deb.debian.org and imported under those names; nothing is pulled from a registry. The build
# context is a snapshot of the files .dockerignore lets through (--source worktree, the default:
# the working tree, tracked and untracked-but-not-ignored files; --source HEAD or any commit:
# that commit's files), and its
# hash (with the Dockerfile's) keys the cache: an unchanged tree returns the cached archives in
# seconds. After a change everything is rebuilt (once: see above).
#
# Everything lives under ${GRAINTUNE_CACHE_DIR:-~/.cache/graintune}/images/: bases/ (rootfs
# tarballs keyed by suite, variant, mirror and dpkg options), buildah/ (a private storage root;
# global containers storage and config are not used), logs/, and the archives. Temporary state
# (buildah's runroot, TMPDIR, the context snapshot) is removed on exit; no container or mount is
# left behind. One build at a time (flock on images/.lock). After a build (or with --prune), the
# storage keeps only this run's images and the layers they share, and the newest 3 archives of
# each image are kept. Delete images/buildah to reclaim all its space: it is only a cache.
#
# Progress goes to stderr. stdout ends with KEY=VALUE lines (shell-quotable, no spaces):
#   GRAINTUNE_IMAGE_ARCHIVE=/…/graintune_TAG_HASH.oci.tar    GRAINTUNE_IMAGE_REF=localhost/graintune:TAG
#   GRAINTUNE_TEST_IMAGE_ARCHIVE=…   GRAINTUNE_TEST_IMAGE_REF=localhost/graintune-test:TAG
#   GRAINTUNE_PAUSE_IMAGE_ARCHIVE=…  GRAINTUNE_PAUSE_IMAGE_REF=localhost/graintune-pause:1.0
#   GRAINTUNE_IMAGE_SOURCE_HASH=HASH  (also the images' graintune.dev/source-hash label)
#   GRAINTUNE_IMAGE_REVISION=COMMIT[-dirty]  (their org.opencontainers.image.revision label)
# TAG defaults to dev-<first 12 of HASH>, so the tag itself names the source it was built from.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_ROOT="${GRAINTUNE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/graintune}"
OUT="$CACHE_ROOT/images"
SUITE=bookworm
MIRROR="http://deb.debian.org/debian"
SECURITY_MIRROR="http://deb.debian.org/debian-security"
PAUSE_REF="localhost/graintune-pause:1.0"
JOBS="${GRAINTUNE_IMAGE_JOBS:-2}"

TAG="" SOURCE=worktree PRUNE="" BINARIES=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) TAG="$2"; shift 2 ;;
    --source) SOURCE="$2"; shift 2 ;;
    --prune) PRUNE=1; shift ;;
    --binaries) BINARIES="$(cd "$2" && pwd)" || exit 2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "image.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$SOURCE" != worktree ]; then
  SOURCE="$(git -C "$REPO" rev-parse --verify --quiet "$SOURCE^{commit}")" \
    || { echo "image.sh: --source is worktree or a commit" >&2; exit 2; }
fi

START=$SECONDS
log() { printf '[image %s +%ds] %s\n' "$(date +%H:%M:%S)" "$((SECONDS - START))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
for tool in buildah mmdebstrap git flock sha256sum tar; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/setup.sh installs it)"
done
[ "$(id -u)" = 0 ] || die "needs root (buildah with vfs storage and chroot isolation, mmdebstrap)"

mkdir -p "$OUT/bases" "$OUT/buildah" "$OUT/logs"
exec 9>"$OUT/.lock"
flock -n 9 || { log "another image.sh holds $OUT/.lock; waiting"; flock 9; }

WORK="$(mktemp -d "$OUT/tmp.XXXXXX")"
mkdir -p "$WORK/runroot" "$WORK/tmp" "$WORK/context" "$WORK/config"
# buildah reads no global containers config: private registries.conf, policy and containers.conf.
printf 'unqualified-search-registries = ["docker.io"]\nshort-name-mode = "permissive"\n' \
  >"$WORK/config/registries.conf"
printf '{"default": [{"type": "insecureAcceptAnything"}]}\n' >"$WORK/config/policy.json"
: >"$WORK/config/containers.conf"
export CONTAINERS_REGISTRIES_CONF="$WORK/config/registries.conf"
export CONTAINERS_CONF="$WORK/config/containers.conf"
export CONTAINERS_STORAGE_CONF="$WORK/config/storage.conf"
printf '[storage]\ndriver = "vfs"\n' >"$CONTAINERS_STORAGE_CONF"
export TMPDIR="$WORK/tmp"
export BUILDAH_ISOLATION=chroot

bah() {
  buildah --root "$OUT/buildah" --runroot "$WORK/runroot" --storage-driver vfs \
    --registries-conf "$CONTAINERS_REGISTRIES_CONF" "$@"
}

cleanup() {
  local rc=$?
  # Working containers of a failed build (buildah removes its own on success).
  bah rm --all >/dev/null 2>&1 || true
  [ -z "${BUILD_STAGE_REF:-}" ] || remove_stages
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs "$@" with its output in LOG, printing a heartbeat with the log's latest step.
with_progress() {
  local what="$1" log_file="$2"; shift 2
  local start=$SECONDS
  "$@" >"$log_file" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 15 & wait $! || true
    if kill -0 "$pid" 2>/dev/null; then
      local last
      last="$(grep -aE '^(STEP [0-9]|\[[0-9]+/[0-9]+\]|Get:|Unpacking|Setting up|I: )' "$log_file" \
        | tail -n 1 | cut -c1-110 || true)"
      log "$what: $((SECONDS - start))s ${last:+($last)}"
    fi
  done
  if ! wait "$pid"; then
    tail -n 40 "$log_file" >&2
    die "$what failed after $((SECONDS - start))s (log: $log_file)"
  fi
  log "$what: done in $((SECONDS - start))s"
}

# --- Base images -------------------------------------------------------------------------------
# debian:bookworm is mmdebstrap's minbase (what Docker's debian image is made from); -slim
# additionally keeps dpkg from installing docs, man pages and locales, as debian:*-slim does.
# The dpkg options stay in the image (/etc/dpkg/dpkg.cfg.d), so later apt installs obey them too.
SLIM_DPKG_OPTS=(
  'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright'
  'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/info/*'
  'path-exclude=/usr/share/locale/*' 'path-exclude=/usr/share/lintian/*'
)

base_image() {  # base_image NAME [DPKG_OPT...]: make (or reuse) debian:NAME in the storage
  local name="$1"; shift
  local opts=() o
  for o in "$@"; do opts+=("--dpkgopt=$o"); done
  local sources="deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY_MIRROR $SUITE-security main"
  local key
  key="$(printf '%s\n' "mmdebstrap $(mmdebstrap --version)" minbase "$sources" "$@" | sha256sum | cut -c1-16)"
  local tarball="$OUT/bases/debian-$name-$key.tar" local_ref="localhost/graintune-base:$name-$key"
  if ! bah inspect --type image "$local_ref" >/dev/null 2>&1; then
    if [ ! -s "$tarball" ]; then
      with_progress "base debian:$name (mmdebstrap minbase)" "$OUT/logs/base-$name.log" \
        nice mmdebstrap --variant=minbase --skip=output/dev --format=tar "${opts[@]}" \
          "$SUITE" "$tarball.tmp" "$sources"
      mv "$tarball.tmp" "$tarball"
    fi
    local ctr
    ctr="$(bah from --pull=never scratch)"
    bah add "$ctr" "$tarball" / >/dev/null
    bah config --cmd '["bash"]' --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      --label "graintune.dev/base-key=$key" "$ctr"
    bah commit --quiet --rm "$ctr" "$local_ref" >/dev/null
    log "base debian:$name imported ($(du -m "$tarball" | cut -f1) MB rootfs)"
  fi
  # The Dockerfile's FROM resolves a short name to docker.io/library/…; only the local one exists.
  bah tag "$local_ref" "docker.io/library/debian:$name"
}

# --- Build context -----------------------------------------------------------------------------
# .dockerignore's lines as git pathspec exclusions (a name also excludes what is below it).
pathspecs=(.)
while IFS= read -r line; do
  line="${line%%#*}"; line="${line%"${line##*[![:space:]]}"}"
  [ -n "$line" ] || continue
  pathspecs+=(":(exclude,glob)$line" ":(exclude,glob)$line/**")
done <"$REPO/.dockerignore"

if [ "$SOURCE" != worktree ]; then
  git -C "$REPO" archive --format=tar "$SOURCE" -- "${pathspecs[@]}" | tar -C "$WORK/context" -x
else
  # Tracked and untracked-not-ignored files that exist (a deleted tracked file is not sent).
  git -C "$REPO" ls-files -z -co --exclude-standard -- "${pathspecs[@]}" \
    | (cd "$REPO" && while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done) \
    | tar -C "$REPO" --null -T - -c | tar -C "$WORK/context" -x
fi
cp "$REPO/Dockerfile" "$WORK/Dockerfile"
SOURCE_HASH="$(
  { (cd "$WORK/context" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
    sha256sum "$WORK/Dockerfile" | cut -d' ' -f1; echo "jobs=$JOBS"; } | sha256sum | cut -c1-64)"
REVISION="$(git -C "$REPO" rev-parse "${SOURCE/#worktree/HEAD}")"
if [ "$SOURCE" = worktree ] && [ -n "$(git -C "$REPO" status --porcelain -- "${pathspecs[@]}")$(
    git -C "$REPO" status --porcelain -- Dockerfile)" ]; then
  REVISION="$REVISION-dirty"
fi
PAUSE_HASH="$({ sha256sum "$WORK/context/tests/node/pause.c" | cut -d' ' -f1
                sha256sum "$WORK/Dockerfile" | cut -d' ' -f1; } | sha256sum | cut -c1-64)"
TAG="${TAG:-dev-${SOURCE_HASH:0:12}}"

# --binaries: the Dockerfile's /build/ paths from BUILD_DIR, and pause compiled here.
ARCHIVE_KEY="$SOURCE_HASH"
if [ -n "$BINARIES" ]; then
  # The sources of every `COPY --from=build` instruction (continuation lines joined).
  mapfile -t built_paths < <(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$WORK/Dockerfile" \
    | grep '^COPY --from=build ' | tr -s ' ' '\n' | grep '^/build/' | sort -u)
  [ "${#built_paths[@]}" -gt 0 ] || die "the Dockerfile copies nothing from /build/"
  for path in "${built_paths[@]}"; do
    [ -f "$BINARIES/${path#/build/}" ] || die "--binaries $BINARIES has no ${path#/build/} (the Dockerfile copies $path): build it first"
    mkdir -p "$WORK/prebuilt$(dirname "$path")"
    strip --strip-debug -o "$WORK/prebuilt$path" "$BINARIES/${path#/build/}"
  done
  mkdir -p "$WORK/pause-built"
  gcc -static -Os -s -Wall -Wextra -o "$WORK/pause-built/pause" "$WORK/context/tests/node/pause.c"
  ARCHIVE_KEY="$({ (cd "$WORK/prebuilt" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
                   sha256sum "$WORK/Dockerfile" | cut -d' ' -f1; } | sha256sum | cut -c1-64)"
  log "binaries: ${#built_paths[@]} from $BINARIES (key ${ARCHIVE_KEY:0:12})"
fi
log "context: $(find "$WORK/context" -type f | wc -l) files, $(du -sm "$WORK/context" | cut -f1) MB, source hash ${SOURCE_HASH:0:12} ($REVISION)"

# --- Images ------------------------------------------------------------------------------------
bases_ready=""
ensure_bases() {
  [ -z "$bases_ready" ] || return 0
  # With --binaries nothing starts FROM debian:bookworm (the toolchain).
  [ -n "$BINARIES" ] || base_image "$SUITE"
  base_image "$SUITE-slim" "${SLIM_DPKG_OPTS[@]}"
  bases_ready=1
}

# run_build WHAT TARGET REF [BUILDAH BUILD ARGS...]: builds the Dockerfile's TARGET stage as REF.
run_build() {
  local what="$1" target="$2" ref="$3"; shift 3
  ensure_bases
  with_progress "$what (buildah build)" "$OUT/logs/$what.log" \
    nice buildah --root "$OUT/buildah" --runroot "$WORK/runroot" --storage-driver vfs \
      --registries-conf "$CONTAINERS_REGISTRIES_CONF" \
      build --pull=never --layers=false --isolation chroot --signature-policy "$WORK/config/policy.json" \
      --build-arg "JOBS=$JOBS" --target "$target" -f "$WORK/Dockerfile" \
      --label "org.opencontainers.image.revision=$REVISION" \
      --label "org.opencontainers.image.source=https://github.com/graintune/graintune" \
      "$@" -t "$ref" "$WORK/context"
}

# The stages the targets share, built once per source hash (only when a target needs them) and
# removed at exit: `build` (the toolchain and the compiled tree) and `runtime`.
BUILD_STAGE_REF="localhost/graintune-stage-build:${SOURCE_HASH:0:16}"
RUNTIME_STAGE_REF="localhost/graintune-stage-runtime:${SOURCE_HASH:0:16}"
stages_ready=""
ensure_stages() {
  [ -z "$stages_ready" ] || return 0
  [ -n "$BINARIES" ] || run_build build build "$BUILD_STAGE_REF"
  run_build runtime runtime "$RUNTIME_STAGE_REF"
  stages_ready=1
}
remove_stages() {
  bah rmi "$BUILD_STAGE_REF" "$RUNTIME_STAGE_REF" >/dev/null 2>&1 || true
}

# build_image TARGET REF ARCHIVE HASH: builds the Dockerfile's TARGET stage into ARCHIVE.
build_image() {
  local target="$1" ref="$2" archive="$3" hash="$4"
  if [ -s "$archive" ]; then
    log "$target: cached $(basename "$archive")"
    return
  fi
  PRUNE=1
  local contexts=()
  if [ "$target" = pause ] && [ -n "$BINARIES" ]; then
    contexts=(--build-context "pause-build=$WORK/pause-built")
  elif [ "$target" = pause ]; then
    # pause.c needs only the toolchain: the build stage's image holds it when this run made one.
    [ -z "$stages_ready" ] || contexts=(--build-context "toolchain=container-image://$BUILD_STAGE_REF")
  else
    ensure_stages
    local build_context="container-image://$BUILD_STAGE_REF"
    [ -z "$BINARIES" ] || build_context="$WORK/prebuilt"
    contexts=(--build-context "build=$build_context"
              --build-context "runtime=container-image://$RUNTIME_STAGE_REF")
  fi
  run_build "$target" "$target" "$ref" "${contexts[@]}" --label "graintune.dev/source-hash=$hash"
  bah push --quiet "$ref" "oci-archive:$archive.tmp:$ref" >/dev/null
  mv "$archive.tmp" "$archive"
  log "$target: wrote $(basename "$archive") ($(du -m "$archive" | cut -f1) MB)"
}

IMAGE_REF="localhost/graintune:$TAG"
TEST_REF="localhost/graintune-test:$TAG"
IMAGE_ARCHIVE="$OUT/graintune_${TAG}_${ARCHIVE_KEY:0:16}.oci.tar"
TEST_ARCHIVE="$OUT/graintune-test_${TAG}_${ARCHIVE_KEY:0:16}.oci.tar"
PAUSE_ARCHIVE="$OUT/graintune-pause_1.0_${PAUSE_HASH:0:16}.oci.tar"
build_image graintune "$IMAGE_REF" "$IMAGE_ARCHIVE" "$SOURCE_HASH"
build_image graintune-test "$TEST_REF" "$TEST_ARCHIVE" "$SOURCE_HASH"
build_image pause "$PAUSE_REF" "$PAUSE_ARCHIVE" "$PAUSE_HASH"
remove_stages

# Keeps the newest 3 archives of each image, and in the storage this run's images, the bases
# and the layers they need (old build stages are several GB each with vfs).
prune() {
  local prefix old ref
  for prefix in graintune_ graintune-test_ graintune-pause_; do
    ls -t "$OUT/$prefix"*.oci.tar 2>/dev/null | tail -n +4 | while read -r old; do rm -f "$old"; done
  done
  bah images --format '{{.Name}}:{{.Tag}}' 2>/dev/null | grep -E '^localhost/graintune(-test|-pause|-stage-build|-stage-runtime)?:' \
    | while read -r ref; do
        case "$ref" in "$IMAGE_REF"|"$TEST_REF"|"$PAUSE_REF") ;; *) bah rmi "$ref" >/dev/null ;; esac
      done
  bah rmi --prune >/dev/null 2>&1 || true
  log "pruned: storage $(du -sh "$OUT/buildah" | cut -f1), archives $(du -ch "$OUT"/*.oci.tar | tail -1 | cut -f1)"
}
[ -z "$PRUNE" ] || prune
log "all images ready"

cat <<EOF
GRAINTUNE_IMAGE_ARCHIVE=$IMAGE_ARCHIVE
GRAINTUNE_IMAGE_REF=$IMAGE_REF
GRAINTUNE_TEST_IMAGE_ARCHIVE=$TEST_ARCHIVE
GRAINTUNE_TEST_IMAGE_REF=$TEST_REF
GRAINTUNE_PAUSE_IMAGE_ARCHIVE=$PAUSE_ARCHIVE
GRAINTUNE_PAUSE_IMAGE_REF=$PAUSE_REF
GRAINTUNE_IMAGE_SOURCE_HASH=$SOURCE_HASH
GRAINTUNE_IMAGE_REVISION=$REVISION
EOF
