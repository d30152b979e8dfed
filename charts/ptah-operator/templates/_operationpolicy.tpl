{{/*
The shape every operation Pod must have, as CEL the API server evaluates itself: shared by the Job
policy (the Pod template of every Job the manager creates) and the Pod policy (every Pod labelled
as an operation Pod, whoever creates it). Each rule restates what crates/workload builds; the T3
test crates/workload/tests/admission_policies.rs admits every operation's built Job and Pod and
refuses one violation per rule.

Takes a dict: `root` (the chart root), `meta` and `spec` (CEL expressions for the Pod metadata and
Pod spec of the matched object).
*/}}
{{- define "ptah-operator.operationPodVariables" -}}
{{- $root := .root -}}
- name: meta
  expression: {{ .meta | quote }}
- name: spec
  expression: {{ .spec | quote }}
- name: labels
  expression: "has(variables.meta.labels) ? variables.meta.labels : {}"
- name: operation
  expression: "'operator.ptah.run/operation' in variables.labels ? variables.labels['operator.ptah.run/operation'] : ''"
# Resolve and Verify are the only operations whose main container talks to the registry.
- name: registryOperation
  expression: "variables.operation in ['resolve', 'verify']"
- name: containers
  expression: "variables.spec.containers + (has(variables.spec.initContainers) ? variables.spec.initContainers : [])"
# The release's own ServiceAccounts: an operation Pod may never run as one of them.
- name: releaseServiceAccount
  expression: >-
    request.namespace == {{ $root.Release.Namespace | quote }} &&
    has(variables.spec.serviceAccountName) &&
    (variables.spec.serviceAccountName.startsWith({{ include "ptah-operator.fullname" $root | quote }}) ||
     variables.spec.serviceAccountName == {{ include "ptah-operator.managerServiceAccount" $root | quote }})
{{- end -}}

{{- define "ptah-operator.operationPodValidations" -}}
{{- $root := .root -}}
- expression: >-
    'app.kubernetes.io/managed-by' in variables.labels &&
    variables.labels['app.kubernetes.io/managed-by'] == 'ptah-operator' &&
    'app.kubernetes.io/component' in variables.labels &&
    ((variables.labels['app.kubernetes.io/component'] == 'schema-operation' && 'operator.ptah.run/schema' in variables.labels) ||
     (variables.labels['app.kubernetes.io/component'] == 'migration-operation' && 'operator.ptah.run/migration' in variables.labels)) &&
    variables.operation in ['resolve', 'verify', 'observe', 'plan', 'apply', 'migration-history', 'migration-apply'] &&
    'operator.ptah.run/operation-id' in variables.labels &&
    variables.labels['operator.ptah.run/operation-id'].matches('^[0-9a-f]{16}$')
  message: "an operation Pod carries the operation labels: managed-by, component, its schema or migration, operation and operation-id"
  reason: Forbidden
- expression: >-
    variables.containers.all(c, has(c.image) &&
      (c.name == 'install-runner' ? c.image == {{ $root.Values.image.runner | quote }} : c.image == {{ $root.Values.image.executor | quote }})) &&
    (!has(variables.spec.ephemeralContainers) || size(variables.spec.ephemeralContainers) == 0)
  message: "an operation Pod runs only the executor and runner images this release pins by digest, and no ephemeral container"
  reason: Forbidden
- expression: >-
    has(variables.spec.automountServiceAccountToken) && variables.spec.automountServiceAccountToken == false &&
    !variables.releaseServiceAccount
  message: "an operation Pod mounts no ServiceAccount token (automountServiceAccountToken: false) and never runs as one of the release's ServiceAccounts"
  reason: Forbidden
- expression: "variables.containers.all(c, !has(c.envFrom) || size(c.envFrom) == 0)"
  message: "an operation Pod takes no envFrom: every variable is named"
  reason: Forbidden
- expression: >-
    !has(variables.spec.volumes) || variables.spec.volumes.all(v,
      has(v.emptyDir) || has(v.configMap) ||
      (has(v.projected) && v.projected.sources.all(s, has(s.configMap))) ||
      (has(v.secret) && v.name == 'registry-docker-config'))
  message: "an operation Pod's volumes are emptyDirs, ConfigMaps, projected ConfigMaps and the registry Docker config Secret, nothing else (no hostPath, no token, no other Secret)"
  reason: Forbidden
- expression: >-
    variables.containers.all(c, !has(c.env) || c.env.all(e, !has(e.valueFrom) ||
      (has(e.valueFrom.secretKeyRef) && !has(e.valueFrom.configMapKeyRef) && !has(e.valueFrom.fieldRef) && !has(e.valueFrom.resourceFieldRef))))
  message: "an operation Pod's variables come from values or from secretKeyRef, nothing else"
  reason: Forbidden
- expression: >-
    variables.containers.all(c, !has(c.env) || c.env.all(e, !has(e.valueFrom) || !has(e.valueFrom.secretKeyRef) ||
      (e.name == 'PTAH_DB_URL' && c.name == 'ptah' && !variables.registryOperation) ||
      (e.name == 'PTAH_DEV_URL' && c.name == 'ptah' && variables.operation == 'plan') ||
      (e.name in ['PTAH_REGISTRY_USERNAME', 'PTAH_REGISTRY_PASSWORD', 'PTAH_REGISTRY_TOKEN'] &&
        (c.name.startsWith('fetch-') || (c.name == 'ptah' && variables.registryOperation)))))
  message: "Secrets reach only the containers that need them: the database URL the main container of a database operation, registry credentials the fetch containers and the main container of Resolve and Verify"
  reason: Forbidden
- expression: >-
    variables.containers.all(c, !has(c.volumeMounts) || c.volumeMounts.all(m, m.name != 'registry-docker-config' ||
      c.name.startsWith('fetch-') || (c.name == 'ptah' && variables.registryOperation)))
  message: "the registry Docker config Secret is mounted only where registry credentials belong"
  reason: Forbidden
- expression: >-
    !(has(variables.spec.hostNetwork) && variables.spec.hostNetwork) &&
    !(has(variables.spec.hostPID) && variables.spec.hostPID) &&
    !(has(variables.spec.hostIPC) && variables.spec.hostIPC) &&
    variables.containers.all(c, !has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0))
  message: "an operation Pod shares no host namespace and binds no host port"
  reason: Forbidden
- expression: >-
    has(variables.spec.securityContext) &&
    has(variables.spec.securityContext.runAsNonRoot) && variables.spec.securityContext.runAsNonRoot == true &&
    has(variables.spec.securityContext.seccompProfile) && variables.spec.securityContext.seccompProfile.type == 'RuntimeDefault' &&
    variables.containers.all(c, has(c.securityContext) &&
      !(has(c.securityContext.privileged) && c.securityContext.privileged) &&
      has(c.securityContext.allowPrivilegeEscalation) && c.securityContext.allowPrivilegeEscalation == false &&
      has(c.securityContext.capabilities) && has(c.securityContext.capabilities.drop) && 'ALL' in c.securityContext.capabilities.drop &&
      (!has(c.securityContext.capabilities.add) || size(c.securityContext.capabilities.add) == 0) &&
      !(has(c.securityContext.runAsUser) && c.securityContext.runAsUser == 0))
  message: "an operation Pod meets Pod Security restricted: non-root, RuntimeDefault seccomp, no privilege, no escalation, every capability dropped"
  reason: Forbidden
{{- end -}}
