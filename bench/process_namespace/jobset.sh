#!/usr/bin/env bash
# jobset.sh VARIANT RUN_NAME TEST_IMAGE: prints the JobSet of one probe variant (xpk's one-host
# TPU shape: v6e 2x2, restartPolicy Never, backoffLimit 0, terminationGracePeriodSeconds 30 = xpk's
# --termination-grace-period-seconds default, trainer privileged as xpk's container).
#   xpk         xpk's container script verbatim (AI-Hypercomputer/xpk src/xpk/core/docker_container.py
#               lines 156-171, empty gcloud/internal/stacktrace/gpu parts) around `python3 train.py`
#   xpk-export  the same with a command that is an and-list (`export ... && python3 ...`), as
#               MaxText's own xpk recipes write it
#   xpk-pipe    the same with `python3 ... 2>&1 | tee /tmp/train.log` (the subshell cannot exec python)
#   plain       `bash -c "echo; python3 ...; EXIT_CODE=$?; ...; exit $EXIT_CODE"` without a trap
#   exec        `bash -c "python3 ..."` (one command: bash execs python)
#   sameuid     a trainer running as uid 65532 (the exporter's uid), only for what the sidecar reads
set -euo pipefail
D=${GRAINTUNE_SPN_PROBE_DIR:-/tmp/graintune-spn-probe}
V="$1" RUN="$2" IMAGE="$3"
VENV=/root/.cache/graintune/venv-maxtext-trainer-c991b3c7d5c0
PYPREFIX=/root/.pyenv/versions/3.12.1
TRAIN="python3 $D/MaxText/train.py run_name=$RUN base_output_directory=$D/out grain_worker_count=-1"
case "$V" in
  xpk|xpk-export|xpk-pipe)
    CMD="$TRAIN"
    [ "$V" = xpk-export ] && CMD="export WANDB_API_KEY=inline-secret-in-script && $TRAIN"
    [ "$V" = xpk-pipe ] && CMD="$TRAIN 2>&1 | tee /tmp/train.log"
    SCRIPT="echo XPK Start: \$(date);
_sigterm() (kill -SIGTERM \$! 2>/dev/null;);
trap _sigterm SIGTERM;

($CMD) & PID=\$!;
while kill -0 \$PID 2>/dev/null;
    do sleep 5;
done;
wait \$PID;
EXIT_CODE=\$?;

echo XPK End: \$(date);
echo EXIT_CODE=\$EXIT_CODE;


exit \$EXIT_CODE" ;;
  plain) SCRIPT="echo start: \$(date); $TRAIN; EXIT_CODE=\$?; echo EXIT_CODE=\$EXIT_CODE; exit \$EXIT_CODE" ;;
  exec) SCRIPT="$TRAIN" ;;
  sameuid) SCRIPT="echo not really MaxText grain_worker_count=-1; sleep 3600" ;;
  *) echo "unknown variant $V" >&2; exit 2 ;;
esac
SEC="securityContext: {privileged: true, runAsUser: 0, runAsGroup: 0}"
[ "$V" = sameuid ] && SEC="securityContext: {runAsUser: 65532, runAsGroup: 65532}"
indent() { sed 's/^/                      /'; }
cat <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: $V, namespace: spn}
spec:
  failurePolicy: {maxRestarts: 0}
  replicatedJobs:
    - name: slice-job
      replicas: 1
      template:
        spec:
          parallelism: 1
          completions: 1
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              terminationGracePeriodSeconds: 30
              nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice, cloud.google.com/gke-tpu-topology: 2x2}
              tolerations: [{key: google.com/tpu, operator: Exists}]
              volumes:
                - {name: venv, hostPath: {path: "$VENV", type: Directory}}
                - {name: python, hostPath: {path: "$PYPREFIX", type: Directory}}
                - {name: probe, hostPath: {path: $D/MaxText, type: Directory}}
                - {name: out, hostPath: {path: $D/out, type: Directory}}
              containers:
                - name: maxtext
                  image: $IMAGE
                  imagePullPolicy: IfNotPresent
                  $SEC
                  command:
                    - bash
                    - -c
                    - |
$(printf '%s\n' "$SCRIPT" | indent)
                  env:
                    - {name: PATH, value: "$VENV/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
                    - {name: JAX_PLATFORMS, value: cpu}
                    - {name: HF_TOKEN, value: hf_secret_in_trainer_env}
                  volumeMounts:
                    - {name: venv, mountPath: "$VENV", readOnly: true}
                    - {name: python, mountPath: "$PYPREFIX", readOnly: true}
                    - {name: probe, mountPath: $D/MaxText, readOnly: true}
                    - {name: out, mountPath: $D/out}
                  resources: {limits: {google.com/tpu: 4, memory: 2Gi}}
YAML
