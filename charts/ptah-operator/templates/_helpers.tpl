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
The fixed names of the admission singleton. They are not release-prefixed: the cert rotator, the
webhook configurations and the Service must agree on them, and there is one release per cluster.
*/}}
{{- define "ptah-operator.webhookService" -}}
ptah-operator-webhook
{{- end -}}
{{- define "ptah-operator.webhookSecret" -}}
ptah-operator-webhook-tls
{{- end -}}
{{- define "ptah-operator.resultSecret" -}}
ptah-operator-result-tls
{{- end -}}
{{- define "ptah-operator.webhookConfiguration" -}}
ptah-operator
{{- end -}}

{{/* The cert rotator's ServiceAccount (and Role, ClusterRole) name. */}}
{{- define "ptah-operator.certRotatorName" -}}
{{- printf "%s-cert-rotator" (include "ptah-operator.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels selecting one component's Pods; `component` is passed in a dict with the root as `root`. */}}
{{- define "ptah-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
A Pod template's labels: the release labels, the component and `podLabels`. The chart's own keys
win over `podLabels`, so no value can give a manager Pod `app.kubernetes.io/managed-by:
ptah-operator` (which would send it through the operation-pod webhook it serves itself).
*/}}
{{- define "ptah-operator.podLabels" -}}
{{- $own := printf "%s\n%s" (include "ptah-operator.labels" .root) (include "ptah-operator.selectorLabels" .) | fromYaml -}}
{{- toYaml (merge $own (deepCopy (default (dict) .root.Values.podLabels))) -}}
{{- end -}}

{{/*
The caBundle the cert rotator injected into the live webhook configuration, so an upgrade writes
it back instead of wiping it: the live bundle of the webhook with the same name, else of any live
webhook of either configuration (all of them are served by one Service with one certificate).
Empty under `helm template`, `helm lint` and a client-side dry run (`lookup` sees no cluster) and on
first install; the rotator then injects it.
*/}}
{{- define "ptah-operator.liveCABundle" -}}
{{- $byName := "" -}}
{{- $any := "" -}}
{{- range $live := .lives -}}
{{- range $w := (dig "webhooks" (list) $live) -}}
{{- $bundle := dig "clientConfig" "caBundle" "" $w -}}
{{- if and $bundle (eq (toString $w.name) $.name) (not $byName) -}}
{{- $byName = $bundle -}}
{{- end -}}
{{- if and $bundle (not $any) -}}
{{- $any = $bundle -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- default $any $byName -}}
{{- end -}}

{{/*
One webhook's clientConfig: the webhook Service in the release namespace, on `path`, with the live
caBundle when there is one. Takes a dict: root, name, path, lives.
*/}}
{{- define "ptah-operator.webhookClientConfig" -}}
clientConfig:
  service:
    name: {{ include "ptah-operator.webhookService" .root }}
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: 443
{{- with include "ptah-operator.liveCABundle" . }}
  caBundle: {{ . }}
{{- end }}
{{- end -}}

{{/*
Stops the render with message `.`. `fail` and `required` only log under `helm lint`, which would let
a chart without its required images lint clean; so, reached only there, an include of a template
that cannot exist fails the lint too, carrying the same message in its error.
*/}}
{{- define "ptah-operator.refuse" -}}
{{- fail . -}}
{{- include (printf "refused: %s" .) nil -}}
{{- end -}}

{{/*
Refuses an image value that is missing or not pinned by digest. Takes a dict: value, name (the
value's path, e.g. `image.manager`), what (the image, in words) and why (why it must be pinned).
*/}}
{{- define "ptah-operator.pinnedImage" -}}
{{- $image := toString (default "" .value) -}}
{{- if not $image -}}
{{- include "ptah-operator.refuse" (printf "%s is required: set it to the %s pinned by digest, <name>@sha256:<64 hex> (e.g. --set %s=registry.example/ptah@sha256:...)" .name .what .name) -}}
{{- else if not (regexMatch "^[^\\s@]+@sha256:[0-9a-f]{64}$" $image) -}}
{{- include "ptah-operator.refuse" (printf "%s %q must be pinned by digest (<name>@sha256:<64 hex>): %s" .name $image .why) -}}
{{- end -}}
{{- end -}}

{{/*
Refuses values the release cannot run with. Included once, from serviceaccount.yaml, so every
render checks them: required images pinned by digest, and a trusted namespace.
*/}}
{{- define "ptah-operator.validate" -}}
{{- include "ptah-operator.pinnedImage" (dict "value" .Values.image.manager "name" "image.manager" "what" "manager image" "why" "plans record the manager image that made them") -}}
{{- include "ptah-operator.pinnedImage" (dict "value" .Values.image.executor "name" "image.executor" "what" "Ptah executor image" "why" "plans and approvals bind it") -}}
{{- include "ptah-operator.pinnedImage" (dict "value" .Values.image.runner "name" "image.runner" "what" "runner image" "why" "plans and approvals bind it") -}}
{{- include "ptah-operator.pinnedImage" (dict "value" .Values.image.certRotator "name" "image.certRotator" "what" "cert rotator image" "why" "it writes the webhooks' trust anchor") -}}
{{- include "ptah-operator.pinnedImage" (dict "value" .Values.image.crdManager "name" "image.crdManager" "what" "ptah-crd-manager image" "why" "it installs and upgrades the CRDs") -}}
{{- range $ns := list .Release.Namespace (include "ptah-operator.coordinationNamespace" .) -}}
{{- if or (eq $ns "default") (hasPrefix "kube-" $ns) -}}
{{- fail (printf "namespace %q is shared infrastructure; install ptah-operator into a namespace of its own" $ns) -}}
{{- end -}}
{{- end -}}
{{- if lt (int .Values.replicas) 1 -}}
{{- fail "replicas must be at least 1" -}}
{{- end -}}
{{- end -}}

{{/* The name base of the release-lifecycle hooks (ptah-crd-manager). */}}
{{- define "ptah-operator.crdManagerName" -}}
{{- printf "%s-crd-manager" (include "ptah-operator.fullname" .) | trunc 52 | trimSuffix "-" -}}
{{- end -}}

{{/*
The CRDs ptah-crd-manager installs, by name (RBAC limits its updates to them). The list must equal
crates/api's CRDs; a chart test compares them.
*/}}
{{- define "ptah-operator.crdNames" -}}
- ptahschemas.operator.ptah.run
- ptahschemaplans.operator.ptah.run
- ptahschemaplanchunks.operator.ptah.run
- ptahschemaapprovals.operator.ptah.run
- ptahmigrations.operator.ptah.run
- ptahmigrationplans.operator.ptah.run
- ptahmigrationapprovals.operator.ptah.run
- ptahmigrationrunacknowledgments.operator.ptah.run
- ptahrealms.operator.ptah.run
- ptahresultrecords.operator.ptah.run
{{- end -}}

{{/*
One release-lifecycle hook: its ServiceAccount, the least RBAC it needs, and the Job running
`ptah-crd-manager <command>`. Takes a dict: root, hook (the command), events (Helm hook events),
clusterRules and coordinationRules / releaseRules (lists of RBAC rules, rendered as YAML), args.
*/}}
{{- define "ptah-operator.lifecycleHook" -}}
{{- $root := .root -}}
{{- $name := printf "%s-%s" (include "ptah-operator.crdManagerName" $root) .hook -}}
{{- $rbac := dict "helm.sh/hook" .events "helm.sh/hook-weight" "-10" "helm.sh/hook-delete-policy" "before-hook-creation,hook-succeeded" -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "ptah-operator.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .hook }}-hook
  annotations:
    {{- toYaml $rbac | nindent 4 }}
automountServiceAccountToken: true
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $name }}
  labels:
    {{- include "ptah-operator.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .hook }}-hook
  annotations:
    {{- toYaml $rbac | nindent 4 }}
rules:
  {{- .clusterRules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $name }}
  labels:
    {{- include "ptah-operator.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .hook }}-hook
  annotations:
    {{- toYaml $rbac | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $name }}
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ $root.Release.Namespace }}
{{- range $scope := list (dict "ns" (include "ptah-operator.coordinationNamespace" $root) "rules" .coordinationRules "suffix" "coordination") (dict "ns" $root.Release.Namespace "rules" .releaseRules "suffix" "release") }}
{{- if $scope.rules }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}-{{ $scope.suffix }}
  namespace: {{ $scope.ns }}
  labels:
    {{- include "ptah-operator.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $.hook }}-hook
  annotations:
    {{- toYaml $rbac | nindent 4 }}
rules:
  {{- $scope.rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}-{{ $scope.suffix }}
  namespace: {{ $scope.ns }}
  labels:
    {{- include "ptah-operator.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $.hook }}-hook
  annotations:
    {{- toYaml $rbac | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $name }}-{{ $scope.suffix }}
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ $root.Release.Namespace }}
{{- end }}
{{- end }}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "ptah-operator.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .hook }}-hook
  annotations:
    helm.sh/hook: {{ .events }}
    helm.sh/hook-weight: "0"
    # A failed hook Job stays (with its log) until the next attempt replaces it.
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
    # helm prints the hook's log (3.21 and 4 both do): the report of what it did, or the refusal
    # saying what to do.
    helm.sh/hook-output-log-policy: hook-succeeded,hook-failed
spec:
  # Every hook is idempotent; one retry rides out an API server hiccup, a refusal fails twice.
  backoffLimit: 1
  activeDeadlineSeconds: {{ $root.Values.lifecycleHooks.activeDeadlineSeconds }}
  template:
    metadata:
      labels:
        {{- include "ptah-operator.podLabels" (dict "root" $root "component" (printf "%s-hook" .hook)) | nindent 8 }}
    spec:
      serviceAccountName: {{ $name }}
      automountServiceAccountToken: true
      enableServiceLinks: false
      restartPolicy: Never
      {{- with $root.Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        seccompProfile:
          type: RuntimeDefault
      containers:
        - name: {{ .hook }}
          image: {{ $root.Values.image.crdManager }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          command: ["/ptah-crd-manager"]
          args:
            - {{ .hook }}
            - --release-name={{ $root.Release.Name }}
            - --release-namespace={{ $root.Release.Namespace }}
            - --coordination-namespace={{ include "ptah-operator.coordinationNamespace" $root }}
            - --webhook-configuration={{ include "ptah-operator.webhookConfiguration" $root }}
            - --log-format=json
            {{- range .args }}
            - {{ . }}
            {{- end }}
          terminationMessagePolicy: FallbackToLogsOnError
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            runAsNonRoot: true
            runAsUser: 65532
            runAsGroup: 65532
            capabilities:
              drop: ["ALL"]
            seccompProfile:
              type: RuntimeDefault
          {{- with $root.Values.lifecycleHooks.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
      {{- with $root.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}
