{{/* app.kubernetes.io/name of every object: nameOverride or "graintune". */}}
{{- define "graintune.name" -}}{{ .Values.nameOverride | default "graintune" | trunc 63 | trimSuffix "-" }}{{- end -}}
{{/* The prefix of every object's name: fullnameOverride or the release name. 40 characters leave
room for the longest suffix ("-webhook-tls") and the namespace in the cluster-scoped names. */}}
{{- define "graintune.fullname" -}}{{ .Values.fullnameOverride | default .Release.Name | trunc 40 | trimSuffix "-" }}{{- end -}}
{{/* repository@digest when a digest is given (the tag is then ignored), else repository:tag. */}}
{{- define "graintune.imageRef" -}}
{{- if .digest -}}{{ .repository }}@{{ .digest }}{{- else -}}{{ .repository }}:{{ .tag }}{{- end -}}
{{- end -}}
{{- define "graintune.image" -}}
{{- include "graintune.imageRef" (dict "repository" .Values.image.repository "digest" .Values.image.digest "tag" (.Values.image.tag | default .Chart.AppVersion)) -}}
{{- end -}}
{{/* The exporter sidecar's image: the chart's image unless webhook.exporter.image names a
repository, tag or digest; then its own tag (default: appVersion) or digest. */}}
{{- define "graintune.exporterImage" -}}
{{- $e := .Values.webhook.exporter.image | default dict -}}
{{- if or $e.repository $e.tag $e.digest -}}
{{- include "graintune.imageRef" (dict "repository" ($e.repository | default .Values.image.repository) "digest" $e.digest "tag" ($e.tag | default .Chart.AppVersion)) -}}
{{- else -}}
{{- include "graintune.image" . -}}
{{- end -}}
{{- end -}}
{{- define "graintune.labels" -}}
app.kubernetes.io/name: {{ include "graintune.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
{{- define "graintune.webhookName" -}}{{ include "graintune.fullname" . }}-webhook{{- end -}}
{{- define "graintune.operatorName" -}}{{ include "graintune.fullname" . }}-operator{{- end -}}
{{- define "graintune.webhookConfigName" -}}{{ include "graintune.fullname" . }}-{{ .Release.Namespace }}{{- end -}}
{{- define "graintune.certSecret" -}}{{ include "graintune.fullname" . }}-webhook-tls{{- end -}}
{{/* Pod Security "restricted": non-root, read-only root, no capabilities, RuntimeDefault. */}}
{{- define "graintune.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
seccompProfile: {type: RuntimeDefault}
{{- end -}}
{{- define "graintune.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities: {drop: [ALL]}
{{- end -}}

{{/* CEL: does the container `c` run MaxText or mention grain_worker_count? */}}
{{- define "graintune.celContainer" -}}
((c.?command.orValue([]) + c.?args.orValue([])).exists(a, a.contains('grain_worker_count') || a.contains('MaxText') || a.contains('maxtext')) || c.?env.orValue([]).exists(e, e.name.startsWith('M_GRAIN_WORKER_COUNT')))
{{- end -}}
{{/* CEL over a pod spec expression passed as the context. */}}
{{- define "graintune.celPodSpec" -}}
({{ . }}.containers + {{ . }}.?initContainers.orValue([])).exists(c, {{ include "graintune.celContainer" . }})
{{- end -}}
{{- define "graintune.celMarked" -}}
({{ . }}.?labels.orValue({}).exists(k, k.startsWith('graintune.dev/')) || {{ . }}.?annotations.orValue({}).exists(k, k.startsWith('graintune.dev/')))
{{- end -}}
{{- define "graintune.markerCondition" -}}
{{ include "graintune.celMarked" "object.metadata" }} ||
(object.kind == 'Pod' && {{ include "graintune.celPodSpec" "object.spec" }}) ||
(object.kind == 'Job' && ({{ include "graintune.celMarked" "object.spec.template.?metadata.orValue({})" }} || {{ include "graintune.celPodSpec" "object.spec.template.spec" }})) ||
(object.kind == 'JobSet' && object.spec.replicatedJobs.exists(r, {{ include "graintune.celMarked" "r.template.spec.template.?metadata.orValue({})" }} || {{ include "graintune.celPodSpec" "r.template.spec.template.spec" }}))
{{- end -}}

{{/* hostNetwork and dnsPolicy of a pod, from a component's values (webhook or operator): nothing
     at the defaults; ClusterFirstWithHostNet with hostNetwork unless dnsPolicy says otherwise. */}}
{{- define "graintune.podNetwork" -}}
{{- if .hostNetwork -}}
hostNetwork: true
dnsPolicy: {{ .dnsPolicy | default "ClusterFirstWithHostNet" }}
{{- else if .dnsPolicy -}}
dnsPolicy: {{ .dnsPolicy }}
{{- end }}
{{- end }}
