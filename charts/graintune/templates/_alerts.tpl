{{/*
Alerts on graintune's own health, shared by the PrometheusRule and the Google Managed Prometheus
Rules in alerts.yaml. Every metric named here is exported by graintune-webhook or
graintune-operator; tests/integration/alert_rules_test.cc checks that against the running
binaries and runs these rules through promtool (syntax and tests/integration/testdata/alerts_test.yaml).
*/}}
{{- define "graintune.alertGroups" -}}
- name: graintune
  rules:
    - alert: GraintuneWebhookFailingOpen
      expr: |
        sum(rate(graintune_webhook_requests_total{outcome="failed_open"}[10m]))
          / sum(rate(graintune_webhook_requests_total[10m])) > 0.05
      for: 10m
      labels: {severity: warning}
      annotations:
        summary: graintune's webhook lets more than 5% of admissions through unchanged after an internal error.
        description: Those workloads keep grain_worker_count=-1 (MaxText's RAM-only pick). The admission warnings on them and the webhook's log say why (no host shape, a source unavailable).
    - alert: GraintuneWebhookRejectingRequests
      expr: sum(rate(graintune_webhook_requests_total{outcome="rejected_request"}[10m])) > 0
      for: 10m
      labels: {severity: warning}
      annotations:
        summary: graintune's webhook receives AdmissionReviews it cannot read.
        description: Malformed, oversize or unexpected requests are answered 400 and the API server lets the object through unchanged (failurePolicy Ignore). Check admissionReviewVersions and what calls the webhook.
    - alert: GraintuneWebhookSlow
      # The share of answers slower than 1 s (a bucket bound), not histogram_quantile: the
      # histogram's top finite bucket is 1 s, so a quantile would never read above it.
      expr: |
        1 - sum(rate(graintune_webhook_request_duration_seconds_bucket{le="1"}[10m]))
              / sum(rate(graintune_webhook_request_duration_seconds_count[10m])) > 0.01
      for: 10m
      labels: {severity: warning}
      annotations:
        summary: graintune's webhook takes over 1 s for more than 1% of admissions.
        description: The API server waits at most {{ .Values.webhook.timeoutSeconds }} s and then admits the object unchanged.
    - alert: GraintuneOperatorNoLeader
      expr: (max(graintune_operator_leader) or vector(0)) < 1
      for: 5m
      labels: {severity: warning}
      annotations:
        summary: No graintune-operator replica leads.
        description: No attempt is measured and no recommendation improves until one leads (Lease in the release namespace).
    - alert: GraintuneRunEndedEarly
      expr: sum(increase(graintune_operator_total{kind="ended_early"}[1h])) > 0
      labels: {severity: warning}
      annotations:
        summary: A MaxText trainer graintune tunes exited 0 before its configured steps.
        description: >-
          The GrainTuning's EndedEarly condition and a Warning Event on the workload name the attempt and
          its last step. MaxText stops this way, exit code 0, when a resumed run cannot restore Grain's
          iterator (another grain_worker_count than its checkpoint was saved with); its log says
          "Training stopped".
    - alert: GraintuneOperatorReconcileErrors
      expr: |
        sum(rate(graintune_operator_total{kind="reconcile_error"}[15m]))
          / sum(rate(graintune_operator_total{kind="reconcile"}[15m])) > 0.1
      for: 15m
      labels: {severity: warning}
      annotations:
        summary: More than 10% of graintune-operator's reconciles fail.
        description: GrainTuning writes or reads are failing; the operator log names the object and the API error.
    - alert: GraintuneExportersUnreachable
      expr: |
        sum(rate(graintune_operator_total{kind="scrape_error"}[15m]))
          / sum(rate(graintune_operator_total{kind="scrape"}[15m])) > 0.5
      for: 15m
      labels: {severity: warning}
      annotations:
        summary: graintune-operator cannot read most of its exporters.
        description: Attempts go unmeasured. Check the exporter port (webhook.exporter.port, pods with hostNetwork) and NetworkPolicies between the operator and training pods.
{{- end }}
