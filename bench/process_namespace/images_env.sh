#!/usr/bin/env bash
# Writes $D/images.env: the newest archives scripts/image.sh left in its cache (the
# variables image.sh prints), and the control plane's bin folder (GRAINTUNE_CONTROLPLANE_BIN, as
# scripts/test.sh builds it into ~/.cache/graintune/controlplane/).
set -euo pipefail
D=${GRAINTUNE_SPN_PROBE_DIR:-/tmp/graintune-spn-probe}
mkdir -p $D
BIN=${GRAINTUNE_CONTROLPLANE_BIN:-$(ls -d /root/.cache/graintune/controlplane/*/bin | head -1)}
I=/root/.cache/graintune/images
g=$(ls -t $I/graintune_dev-*.oci.tar | head -1); t=$(ls -t $I/graintune-test_dev-*.oci.tar | head -1)
p=$(ls -t $I/graintune-pause_*.oci.tar | head -1)
tag=$(basename "$g" | sed -E 's/^graintune_(dev-[0-9a-f]+)_([0-9a-f]+)\.oci\.tar$/\1/')
hash=$(basename "$g" | sed -E 's/^graintune_(dev-[0-9a-f]+)_([0-9a-f]+)\.oci\.tar$/\2/')
[ -f "$I/graintune-test_${tag}_${hash}.oci.tar" ] || { echo "no test archive for $tag" >&2; exit 1; }
cat > $D/images.env <<ENV
export GRAINTUNE_CONTROLPLANE_BIN=$BIN
export GRAINTUNE_REQUIRE_CONTROLPLANE=1
export GRAINTUNE_IMAGE_ARCHIVE=$g GRAINTUNE_IMAGE_REF=localhost/graintune:$tag
export GRAINTUNE_TEST_IMAGE_ARCHIVE=$I/graintune-test_${tag}_${hash}.oci.tar GRAINTUNE_TEST_IMAGE_REF=localhost/graintune-test:$tag
export GRAINTUNE_PAUSE_IMAGE_ARCHIVE=$p GRAINTUNE_PAUSE_IMAGE_REF=localhost/graintune-pause:1.0
export GRAINTUNE_IMAGE_SOURCE_HASH=$hash
ENV
cat $D/images.env
