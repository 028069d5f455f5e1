#!/usr/bin/env bash
# probe.sh MODE [VARIANTS...]: starts the real node with the chart at
# webhook.exporter.shareProcessNamespace=MODE (spn_holder), runs each variant (run_variant.sh),
# then stops the node. Default variants: xpk xpk-export plain exec sameuid.
set -uo pipefail
MODE="$1"; shift; VARIANTS=("${@:-}"); [ -z "${VARIANTS[0]}" ] && VARIANTS=(xpk xpk-export plain exec sameuid)
HERE=$(cd "$(dirname "$0")" && pwd)
D=${GRAINTUNE_SPN_PROBE_DIR:-/tmp/graintune-spn-probe}
. $D/images.env
mkdir -p $D/out $D/MaxText && cp $HERE/MaxText/train.py $D/MaxText/
rm -f $D/holder-$MODE.out
$D/spn_holder "$MODE" > $D/holder-$MODE.out 2> $D/holder-$MODE.err &
H=$!
for i in $(seq 1 400); do grep -q '^ready ' $D/holder-$MODE.out && break; kill -0 $H 2>/dev/null || break; sleep 1; done
grep -q '^ready ' $D/holder-$MODE.out || { echo "node did not start:"; tail -50 $D/holder-$MODE.err; exit 1; }
read -r _ CPDIR KCFG NODEDIR < <(grep '^ready ' $D/holder-$MODE.out)
K() { kubectl --kubeconfig "$KCFG" "$@"; }
K create namespace spn
K apply -f - <<'YAML'
apiVersion: graintune.dev/v1alpha1
kind: GrainTunePolicy
metadata: {name: spn}
spec:
  priority: 10
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: spn}}
  reservedCpu: "0"
  reservedMemory: "0"
  maxWorkers: 2
YAML
K -n graintune-system get deploy gt-webhook -o jsonpath='{.spec.template.spec.containers[0].args}{"\n"}'
for v in "${VARIANTS[@]}"; do echo "=== $MODE $v"; $HERE/run_variant.sh "$MODE" "$v"; done
kill -TERM $H; wait $H; echo "holder exit $?"; tail -3 $D/holder-$MODE.out
