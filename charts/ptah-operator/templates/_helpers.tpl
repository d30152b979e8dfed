{{/* The release-scoped base name of every object. */}}
{{- define "ptah-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels every object of the release carries. */}}
{{- define "ptah-operator.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The manager's ServiceAccount name. */}}
{{- define "ptah-operator.managerServiceAccount" -}}
{{- default (printf "%s-manager" (include "ptah-operator.fullname" .)) .Values.serviceAccount.name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Where realm Leases and the controller state live: the release namespace unless set. */}}
{{- define "ptah-operator.coordinationNamespace" -}}
{{- default .Release.Namespace .Values.coordinationNamespace -}}
{{- end -}}

{{/* The name of the state ConfigMap; fixed by crates/controllerstate (STATE_CONFIGMAP). */}}
{{- define "ptah-operator.stateConfigMap" -}}
ptah-operator-state
{{- end -}}

{{/*
Refuses values the release cannot run with. Included once, from serviceaccount.yaml, so every
render checks them: required images, a digest-pinned executor, and a trusted namespace.
*/}}
{{- define "ptah-operator.validate" -}}
{{- $_ := required "image.manager is required" .Values.image.manager -}}
{{- $executor := required "image.executor is required (<name>@sha256:<64 hex>)" .Values.image.executor -}}
{{- $_ := required "image.runner is required" .Values.image.runner -}}
{{- if not (regexMatch "^[^\\s@]+@sha256:[0-9a-f]{64}$" $executor) -}}
{{- fail (printf "image.executor %q must be pinned by digest (<name>@sha256:<64 hex>): plans and approvals bind it" $executor) -}}
{{- end -}}
{{- range $ns := list .Release.Namespace (include "ptah-operator.coordinationNamespace" .) -}}
{{- if or (eq $ns "default") (hasPrefix "kube-" $ns) -}}
{{- fail (printf "namespace %q is shared infrastructure; install ptah-operator into a namespace of its own" $ns) -}}
{{- end -}}
{{- end -}}
{{- if lt (int .Values.replicas) 1 -}}
{{- fail "replicas must be at least 1" -}}
{{- end -}}
{{- end -}}
