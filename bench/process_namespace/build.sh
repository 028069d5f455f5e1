#!/usr/bin/env bash
# Builds spn_holder against $REPO/build's libraries (copied first, so a later rebuild of the
# tree does not change them under us). Run after the tree is built (ninja -C build).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
D=${GRAINTUNE_SPN_PROBE_DIR:-/tmp/graintune-spn-probe} B=$(cd "$(dirname "$0")/../.." && pwd)/build
mkdir -p $D/lib
for l in tests/node/libgraintune_chart_on_node.a tests/controlplane/libgraintune_controlplane.a kube/libgraintune_kube.a \
         server/libgraintune_server.a tuner/libgraintune_tuner.a base/libgraintune_base.a; do cp $B/$l $D/lib/; done
g++ -std=c++20 -O1 -g -I$(cd "$(dirname "$0")/../.." && pwd) -DBOOST_ALL_NO_LIB -DBOOST_SYSTEM_DYN_LINK -DCPPREST_FORCE_HTTP_CLIENT_ASIO \
  -DCPPREST_FORCE_HTTP_LISTENER_ASIO -DCPPREST_NO_SSL_LEAK_SUPPRESS -o $D/spn_holder $HERE/spn_holder.cc \
  $D/lib/libgraintune_chart_on_node.a $D/lib/libgraintune_controlplane.a $D/lib/libgraintune_kube.a \
  $D/lib/libgraintune_server.a $D/lib/libgraintune_tuner.a $D/lib/libgraintune_base.a \
  -lcpprest -lyaml-cpp -lboost_system -lssl -lcrypto -lpthread
echo built $D/spn_holder
