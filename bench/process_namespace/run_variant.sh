#!/usr/bin/env bash
# run_variant.sh MODE VARIANT: one probe pod on the held real node (spn_holder MODE must be
# running; its "ready" line is in $D/holder-MODE.out). Applies the variant's JobSet,
# waits for the stand-in trainer, records what the trainer and the exporter sidecar see, then
# deletes the pod (kubelet: SIGTERM, grace 30 s, SIGKILL) and records the timeline and exit code.
# Everything goes to $D/out/MODE-VARIANT.*
set -uo pipefail
MODE="$1" V="$2"
HERE=$(cd "$(dirname "$0")" && pwd)
D=${GRAINTUNE_SPN_PROBE_DIR:-/tmp/graintune-spn-probe}; O="$D/out/$MODE-$V"
read -r _ CPDIR KCFG NODEDIR < <(grep '^ready ' "$D/holder-$MODE.out")
. "$D/images.env"
K() { kubectl --kubeconfig "$KCFG" "$@"; }
ts() { date -u +%H:%M:%S.%3N; }
rm -f "$O".* "$D/out/$MODE-$V.trainer.log" "$D/out/$MODE-$V.orphan"
bash "$HERE/jobset.sh" "$V" "$MODE-$V" "$GRAINTUNE_TEST_IMAGE_REF" > "$O.jobset.yaml"
K apply -f "$O.jobset.yaml" > "$O.apply" 2>&1 || { cat "$O.apply"; exit 1; }
SEL="jobset.sigs.k8s.io/jobset-name=$V"
for i in $(seq 1 120); do
  POD=$(K get pods -n spn -l "$SEL" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null)
  [ -n "$POD" ] && [ "$(K get pod -n spn "$POD" -o jsonpath='{.status.phase}')" = Running ] && break
  sleep 1
done
echo "pod $POD running"
K get pod -n spn "$POD" -o json > "$O.pod.json"
UID_=$(jq -r .metadata.uid "$O.pod.json")
K logs -f -n spn "$POD" -c maxtext --timestamps > "$O.kubectl-logs" 2>&1 &
LOGS=$!
K logs -f -n spn "$POD" -c graintune-exporter --timestamps > "$O.exporter-log" 2>&1 &
ELOGS=$!
if [ "$V" != sameuid ]; then
  for i in $(seq 1 120); do grep -q READY "$D/out/$MODE-$V.trainer.log" 2>/dev/null && break; sleep 1; done
  grep -q READY "$D/out/$MODE-$V.trainer.log" || { echo "trainer never READY"; K logs -n spn "$POD" -c maxtext | tail; }
  sleep 9   # the orphan's three checks
else
  sleep 3
fi
{
  echo "== spec.shareProcessNamespace=$(jq .spec.shareProcessNamespace "$O.pod.json") terminationGracePeriodSeconds=$(jq .spec.terminationGracePeriodSeconds "$O.pod.json")"
  echo "== trainer container (maxtext): ps"
  K exec -i -n spn "$POD" -c maxtext -- bash -s < "$HERE/ps_inside.sh" 2>&1
  echo "== exporter sidecar (graintune-exporter): ps"
  K exec -i -n spn "$POD" -c graintune-exporter -- bash -s < "$HERE/ps_inside.sh" 2>&1
  echo "== exporter sidecar reads"
  K exec -i -n spn "$POD" -c graintune-exporter -- bash -s < "$HERE/reads_inside.sh" 2>&1
  echo "== trainer container reads"
  K exec -i -n spn "$POD" -c maxtext -- bash -s < "$HERE/reads_inside.sh" 2>&1
  IP=$(jq -r .status.podIP "$O.pod.json"); PORT=$(jq -r '.metadata.annotations["graintune.dev/exporter-port"]' "$O.pod.json")
  echo "== exporter /steps (http://$IP:$PORT/steps), process part"
  curl -s --max-time 5 "http://$IP:$PORT/steps" | jq -c '.process // "no process figures"' 2>&1
  echo "== host view of the pod's processes"
  python3 "$HERE/host_watch.py" "$UID_" 0.1
} > "$O.reads" 2>&1
n=$(K get pod -n spn "$POD" -o jsonpath='{.status.initContainerStatuses[0].restartCount}')
if [ "${n:-0}" -gt 0 ]; then
  { echo "exporter restartCount=$n lastState=$(K get pod -n spn "$POD" -o json | jq -c '.status.initContainerStatuses[0].lastState')"
    K logs -n spn "$POD" -c graintune-exporter --previous --timestamps; } > "$O.exporter-crash" 2>&1
  echo "EXPORTER RESTARTED: $O.exporter-crash"
fi
[ "$V" = sameuid ] && { K delete jobset -n spn "$V" --wait=false >/dev/null; kill $LOGS $ELOGS; echo "reads in $O.reads"; exit 0; }
( last=; while :; do
    j=$(K get pod -n spn "$POD" -o json 2>/dev/null) || { echo "$(ts) pod gone"; break; }
    l=$(jq -c '[.metadata.deletionTimestamp, (.status.initContainerStatuses[]?, .status.containerStatuses[]? | {(.name): .state})]' <<<"$j")
    [ "$l" != "$last" ] && echo "$(ts) $l"; last=$l; sleep 0.3
  done ) > "$O.status-watch" 2>&1 &
WATCH=$!
python3 "$HERE/host_watch.py" "$UID_" 60 > "$O.host-timeline" &
HW=$!
sleep 1
T0=$(date +%s.%N); echo "delete at $(ts)" > "$O.delete"
K delete pod -n spn "$POD" --wait=false >> "$O.delete" 2>&1
wait $HW
T1=$(date +%s.%N)
wait $WATCH
T2=$(date +%s.%N)
echo "host: pod's processes gone after $(echo "$T1 - $T0 - 2" | bc) s (minus the 2 s quiet check); pod object gone after $(echo "$T2 - $T0" | bc) s" >> "$O.delete"
kill $LOGS $ELOGS 2>/dev/null
K delete jobset -n spn "$V" --wait=true --timeout=60s >/dev/null 2>&1
echo "done: $O.*"
