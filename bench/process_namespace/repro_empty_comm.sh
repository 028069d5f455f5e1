#!/usr/bin/env bash
# repro_empty_comm.sh: shareProcessNamespace=true; a process in the trainer container names itself ""
# true keeps it only while it runs, so this starts its own spn_holder true), runs the xpk variant's
# (prctl PR_SET_NAME) and sleeps 5 s; reports the exporter sidecar restarts and its log.
#
set -uo pipefail
ROUNDS=${1:-20}
HERE=$(cd "$(dirname "$0")" && pwd)
D=${GRAINTUNE_SPN_PROBE_DIR:-/tmp/graintune-spn-probe}; . $D/images.env; O=$D/out/emptycomm
rm -f $D/holder-true.out $O.*
$D/spn_holder true > $D/holder-true.out 2> $D/holder-true.err & H=$!
for i in $(seq 1 400); do grep -q '^ready ' $D/holder-true.out && break; kill -0 $H 2>/dev/null || break; sleep 1; done
read -r _ CPDIR KCFG NODEDIR < <(grep '^ready ' $D/holder-true.out)
K() { kubectl --kubeconfig "$KCFG" "$@"; }
K create namespace spn >/dev/null
bash $HERE/jobset.sh xpk emptycomm "$GRAINTUNE_TEST_IMAGE_REF" | K apply -f - >/dev/null
for i in $(seq 1 120); do POD=$(K get pods -n spn -o jsonpath='{.items[0].metadata.name}' 2>/dev/null); [ -n "$POD" ] && grep -q READY $D/out/emptycomm.trainer.log 2>/dev/null && break; sleep 1; done
echo "pod $POD"
K logs -f -n spn "$POD" -c graintune-exporter --timestamps > $O.exporter-log 2>&1 &
L=$!
restarts() { K get pod -n spn "$POD" -o jsonpath='{.status.initContainerStatuses[0].restartCount}'; }
for r in $(seq 1 $ROUNDS); do
  K exec -n spn "$POD" -c maxtext -- python3 -c "import ctypes,time; ctypes.CDLL(None).prctl(15, b\"\", 0, 0, 0); print(open(\"/proc/self/status\").readline().strip()); time.sleep(5)"; sleep 2
  n=$(restarts); echo "round $r: exporter restartCount=$n"
  if [ "${n:-0}" -gt 0 ]; then
    K get pod -n spn "$POD" -o json | jq -c '.status.initContainerStatuses[0].lastState'
    echo "--- exporter log before the restart:"; K logs -n spn "$POD" -c graintune-exporter --previous --timestamps | tail -15
    break
  fi
done
kill $L 2>/dev/null; kill -TERM $H; wait $H; echo "holder exit $?"
