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
# What each container runs, as crates/workload builds it (containers.rs, volumes.rs: the runner and
# ptah paths, the work directory, the fetch limits); the T3 test admits every built Job and checks
# these literals against the workload's constants.
- name: installedRunnerCommand
  expression: "['/runner/ptah-runner']"
- name: imageRunnerCommand
  expression: "['/usr/local/bin/ptah-runner']"
- name: runnerArgs
  expression: "['--operation', string(variables.operation), '--ptah-binary', '/usr/local/bin/ptah', '--work-dir', '/work', '--max-plan-bytes', '8388608']"
- name: installRunnerArgs
  expression: "['--install-to', '/runner/ptah-runner']"
- name: ptahCommand
  expression: "['/usr/local/bin/ptah']"
- name: fetchLimits
  expression: "['--format', 'json', '--max-total-bytes', '50331648', '--max-file-bytes', '16777216', '--max-manifest-bytes', '1048576']"
- name: fetchSchemaArgs
  expression: "['oci', 'pull', '--kind', 'schema', '--out', '/source/schema'] + variables.fetchLimits"
- name: fetchMigrationsArgs
  expression: "['migrations', 'pull', '--out', '/source/migrations'] + variables.fetchLimits"
# The Secret-backed variables of the registry: credentials and the grants their Secret carries.
- name: registryCredentials
  expression: "['PTAH_REGISTRY_USERNAME', 'PTAH_REGISTRY_PASSWORD', 'PTAH_REGISTRY_TOKEN']"
- name: registryGrantKeys
  expression: {{ include "ptah-operator.registryGrantKeys" $root | quote }}
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
      (has(e.valueFrom.secretKeyRef) && !has(e.valueFrom.configMapKeyRef) && !has(e.valueFrom.fieldRef) && !has(e.valueFrom.resourceFieldRef)) ||
      (c.name == 'ptah' && has(e.valueFrom.fieldRef) && !has(e.valueFrom.secretKeyRef) && !has(e.valueFrom.configMapKeyRef) && !has(e.valueFrom.resourceFieldRef) &&
       ((e.name == 'PTAH_POD_NAME' && e.valueFrom.fieldRef.fieldPath == 'metadata.name') ||
        (e.name == 'PTAH_POD_UID' && e.valueFrom.fieldRef.fieldPath == 'metadata.uid')))))
  message: "an operation Pod's variables come from values or from secretKeyRef, and only the runner learns its own Pod's name and UID from the downward API; nothing else"
  reason: Forbidden
- expression: >-
    variables.containers.all(c, !has(c.env) || c.env.all(e, !has(e.valueFrom) || !has(e.valueFrom.secretKeyRef) ||
      (e.name == 'PTAH_DB_URL' && c.name == 'ptah' && !variables.registryOperation) ||
      (e.name == 'PTAH_DEV_URL' && c.name == 'ptah' && variables.operation == 'plan') ||
      ((e.name in variables.registryCredentials || e.name in variables.registryGrantKeys) &&
        (c.name.startsWith('fetch-') || (c.name == 'ptah' && variables.registryOperation)))))
  message: "Secrets reach only the containers that need them: the database URL the main container of a database operation, registry credentials and their grants the fetch containers and the main container of Resolve and Verify"
  reason: Forbidden
# Whatever Secret a Job names (docs/security.md: a Job whose owner does not exist is checked against
# no spec), its registry credentials travel with the grants of that same Secret, which the runner
# and ptah check before any request: they can only go where their own Secret says.
- expression: >-
    variables.containers.all(c, !has(c.env) || c.env.all(e, !has(e.valueFrom) || !has(e.valueFrom.secretKeyRef) ||
      !(e.name in variables.registryCredentials || e.name in variables.registryGrantKeys) ||
      ((!(e.name in variables.registryGrantKeys) || e.valueFrom.secretKeyRef.key == variables.registryGrantKeys[e.name]) &&
       c.env.all(f, !has(f.valueFrom) || !has(f.valueFrom.secretKeyRef) ||
         !(f.name in variables.registryCredentials || f.name in variables.registryGrantKeys) ||
         f.valueFrom.secretKeyRef.name == e.valueFrom.secretKeyRef.name) &&
       (!has(variables.spec.volumes) || variables.spec.volumes.all(v, !has(v.secret) ||
         (has(v.secret.secretName) && v.secret.secretName == e.valueFrom.secretKeyRef.name))))))
  message: "registry credentials and their grants come from one Secret, the grants from its keys registry, allowPlainHTTP and caSHA256"
  reason: Forbidden
# A grant is the Secret's word, never a value the Job's author wrote; and without the mode variable
# neither the runner nor ptah checks a grant at all.
- expression: >-
    variables.containers.all(c, !has(c.env) || c.env.all(e, !(e.name in variables.registryGrantKeys) ||
      (has(e.valueFrom) && has(e.valueFrom.secretKeyRef))))
  message: "a registry grant comes from its Secret, never from a value"
  reason: Forbidden
- expression: >-
    variables.containers.all(c,
      (has(c.env) && c.env.exists(e, e.name in variables.registryCredentials)) ?
        (c.env.exists(e, e.name == 'PTAH_REGISTRY_GRANT_MODE') &&
         c.env.all(e, e.name != 'PTAH_REGISTRY_GRANT_MODE' || (has(e.value) && e.value == 'environment')) &&
         (!has(c.volumeMounts) || c.volumeMounts.all(m, m.name != 'registry-docker-config'))) :
      (has(c.volumeMounts) && c.volumeMounts.exists(m, m.name == 'registry-docker-config')) ?
        (has(c.env) && c.env.exists(e, e.name == 'PTAH_REGISTRY_GRANT_MODE') &&
         c.env.all(e, e.name != 'PTAH_REGISTRY_GRANT_MODE' || (has(e.value) && e.value == 'docker-config'))) :
      true)
  message: "a container with registry credentials turns the grant check on: PTAH_REGISTRY_GRANT_MODE environment beside credential variables, docker-config beside the Docker config"
  reason: Forbidden
- expression: >-
    variables.containers.all(c, !has(c.env) || c.env.all(e, has(e.valueFrom) ||
      e.name.startsWith('PTAH_') || e.name in ['HOME', 'TMPDIR', 'DOCKER_CONFIG']))
  message: "an operation Pod's plain variables are the data-plane contract's (PTAH_*, HOME, TMPDIR, DOCKER_CONFIG): no proxy or loader variable"
  reason: Forbidden
# A fixed command is what keeps a variable's value inside the process that needs it: a shell, a
# hook or a probe could print it.
- expression: >-
    size(variables.spec.containers) == 1 && variables.spec.containers[0].name == 'ptah' &&
    variables.containers.all(c,
      !has(c.lifecycle) && !has(c.livenessProbe) && !has(c.readinessProbe) && !has(c.startupProbe) &&
      has(c.command) && has(c.args) &&
      (c.name == 'ptah' ? ((c.command == variables.installedRunnerCommand || c.command == variables.imageRunnerCommand) && c.args == variables.runnerArgs) :
       c.name == 'install-runner' ? (c.command == variables.imageRunnerCommand && c.args == variables.installRunnerArgs) :
       (c.name == 'fetch-schema' || c.name == 'fetch-migrations') ? (c.command == variables.ptahCommand &&
         size(c.args) >= 2 && c.args[size(c.args) - 1].matches('^oci://[^@[:space:]]+@sha256:[0-9a-f]{64}$') &&
         ((c.name == 'fetch-schema' ? variables.fetchSchemaArgs : variables.fetchMigrationsArgs) + ['--', string(c.args[size(c.args) - 1])] == c.args ||
          (c.name == 'fetch-schema' ? variables.fetchSchemaArgs : variables.fetchMigrationsArgs) + ['--plain-http', '--', string(c.args[size(c.args) - 1])] == c.args)) :
       false))
  message: "an operation Pod runs exactly the commands the workload builds: one main container ptah running the runner for its operation, init containers install-runner, fetch-schema or fetch-migrations with their fixed arguments, no hook or probe"
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
