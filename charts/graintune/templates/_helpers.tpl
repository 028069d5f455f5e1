{{- define "graintune.name" -}}graintune{{- end -}}
{{- define "graintune.image" -}}{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{- end -}}
{{- define "graintune.labels" -}}
app.kubernetes.io/name: graintune
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
{{- define "graintune.webhookName" -}}{{ .Release.Name }}-webhook{{- end -}}
{{- define "graintune.operatorName" -}}{{ .Release.Name }}-operator{{- end -}}
{{- define "graintune.webhookConfigName" -}}{{ .Release.Name }}-{{ .Release.Namespace }}{{- end -}}
{{- define "graintune.certSecret" -}}{{ .Release.Name }}-webhook-tls{{- end -}}
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
