#!/usr/bin/env bash
# The Dockerfile stays the way users build graintune (`docker build .`), while scripts/test.sh
# makes the images from its own build folder (scripts/image.sh --binaries). This keeps the two
# the same build: the Dockerfile's `build` stage compiles exactly the targets its later stages
# copy from /build/, and each of those is a file of the CMake build folder given ($1) at the same
# path, so --binaries finds what `docker build` would have compiled.
#   dockerfile_test.sh BUILD_DIR [DOCKERFILE]
set -euo pipefail
build_dir="$1"
dockerfile="${2:-$(dirname "$0")/../../Dockerfile}"
joined="$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$dockerfile")"
copied="$(grep '^COPY --from=build ' <<<"$joined" | tr -s ' ' '\n' | grep '^/build/' | sort -u)"
compiled="$(grep -A0 'ninja -C /build' <<<"$joined" | tr -s ' ' '\n' \
  | sed -n '/^-j/,$p' | grep -v '^-j' | sort -u)"
status=0
[ -n "$copied" ] || { echo "FAIL: the Dockerfile copies nothing from /build/"; exit 1; }
if [ "$(basename -a $copied | sort -u)" != "$compiled" ]; then
  echo "FAIL: the build stage compiles [$(echo $compiled)] but later stages copy [$(echo $copied)]"
  status=1
fi
for path in $copied; do
  if [ ! -x "$build_dir/${path#/build/}" ]; then
    echo "FAIL: $path is not at ${path#/build/} in the build folder $build_dir"
    status=1
  fi
done
[ "$status" -ne 0 ] || echo "ok: the Dockerfile compiles and copies $(echo $copied | wc -w) binaries, each in $build_dir"
exit "$status"
