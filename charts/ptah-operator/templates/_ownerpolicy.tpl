{{/*
The Secrets an operation Job of the manager names are the ones its owner's spec names: one policy
per family, whose params are every PtahSchema (or PtahMigration) of the Job's namespace, read by
the API server itself. A param that is not the Job's controller owner holds trivially; the owner's
spec decides every secretKeyRef, the Docker config Secret volume and the pull Secrets. What CEL
cannot say here (that the owner named exists at all) is in docs/security.md, with what the
operation-jobs policy still holds such a Job to.

parameterNotFoundAction is Allow: the API server looks the params up before it evaluates the
match conditions, so Deny would refuse every Job of a namespace without this kind, whoever created
it (measured on v1.35), and labels cannot route a Job to its owner's family (a PtahMigration's
Resolve and Verify Jobs carry the schema labels).

Takes a dict: `root` (the chart root), `manager` (the manager's user name), `family` (schema or
migration), `kind` (PtahSchema or PtahMigration), `source` (the spec field of the artifact:
desired or artifact) and `dev` (whether the kind has spec.dev).
*/}}
{{- define "ptah-operator.registryGrantKeys" -}}
{'PTAH_REGISTRY_GRANT': 'registry', 'PTAH_REGISTRY_PLAIN_HTTP_GRANT': 'allowPlainHTTP', 'PTAH_REGISTRY_CA_SHA256_GRANT': 'caSHA256'}
{{- end -}}

{{- define "ptah-operator.ownerSecretsPolicy" -}}
{{- $root := .root -}}
{{- $name := printf "%s-%s-job-secrets" (include "ptah-operator.fullname" $root) .family -}}
{{- $src := printf "params.spec.%s" .source -}}
{{- $auth := printf "%s.registryAuthFrom" $src -}}
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: {{ $name }}
  labels:
    {{- include "ptah-operator.labels" $root | nindent 4 }}
    app.kubernetes.io/component: admission
spec:
  failurePolicy: Fail
  paramKind:
    apiVersion: operator.ptah.run/v1alpha1
    kind: {{ .kind }}
  matchConstraints:
    resourceRules:
      - apiGroups: ["batch"]
        apiVersions: ["v1"]
        resources: ["jobs"]
        operations: ["CREATE"]
  matchConditions:
    - name: created-by-the-manager
      expression: {{ printf "request.userInfo.username == %q" .manager | quote }}
    - name: controlled-by-a-{{ .family }}
      expression: {{ printf "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller && r.kind == '%s')" .kind | quote }}
  variables:
    - name: owner
      expression: {{ printf "object.metadata.ownerReferences.filter(r, has(r.controller) && r.controller && r.kind == '%s')[0]" .kind | quote }}
    # This param is the Job's owner by name; every other param of the namespace holds trivially.
    - name: named
      expression: "variables.owner.name == params.metadata.name"
    - name: pod
      expression: "object.spec.template.spec"
    - name: containers
      expression: "variables.pod.containers + (has(variables.pod.initContainers) ? variables.pod.initContainers : [])"
    - name: authName
      expression: {{ printf "has(%s) ? %s.name : ''" $auth $auth | quote }}
    - name: authMode
      expression: {{ printf "has(%s) && has(%s.mode) ? %s.mode : 'Environment'" $auth $auth $auth | quote }}
    # The CRD defaults these keys; the defaults are restated for an object stored without them.
    - name: credentialKeys
      expression: >-
        {'PTAH_REGISTRY_USERNAME': has({{ $auth }}) && has({{ $auth }}.usernameKey) ? {{ $auth }}.usernameKey : 'username',
         'PTAH_REGISTRY_PASSWORD': has({{ $auth }}) && has({{ $auth }}.passwordKey) ? {{ $auth }}.passwordKey : 'password',
         'PTAH_REGISTRY_TOKEN': has({{ $auth }}) && has({{ $auth }}.tokenKey) ? {{ $auth }}.tokenKey : 'token'}
    - name: grantKeys
      expression: {{ include "ptah-operator.registryGrantKeys" . | quote }}
    - name: dockerKey
      expression: {{ printf "has(%s) && has(%s.dockerConfigJSONKey) ? %s.dockerConfigJSONKey : ''" $auth $auth $auth | quote }}
    - name: pullSecrets
      expression: >-
        has(params.spec.execution) && has(params.spec.execution.imagePullSecrets) ?
        params.spec.execution.imagePullSecrets.map(s, has(s.name) ? s.name : '') : []
  validations:
    - expression: "!variables.named || variables.owner.uid == params.metadata.uid"
      message: {{ printf "a Job's controller owner is the %s of that name, by UID" .kind | quote }}
      reason: Forbidden
    - expression: >-
        !variables.named || variables.containers.all(c, !has(c.env) || c.env.all(e,
          !has(e.valueFrom) || !has(e.valueFrom.secretKeyRef) || !(e.name in ['PTAH_DB_URL', 'PTAH_DEV_URL']) ||
          (e.name == 'PTAH_DB_URL' &&
            e.valueFrom.secretKeyRef.name == params.spec.target.urlFrom.name && e.valueFrom.secretKeyRef.key == params.spec.target.urlFrom.key)
          {{- if .dev }} ||
          (e.name == 'PTAH_DEV_URL' && has(params.spec.dev) &&
            e.valueFrom.secretKeyRef.name == params.spec.dev.urlFrom.name && e.valueFrom.secretKeyRef.key == params.spec.dev.urlFrom.key)
          {{- end }}))
      message: {{ printf "the database URLs a Job reads are the Secret keys its %s's spec names (target.urlFrom%s)" .kind (ternary ", dev.urlFrom" "" .dev) | quote }}
      reason: Forbidden
    - expression: >-
        !variables.named || variables.containers.all(c, !has(c.env) || c.env.all(e,
          !has(e.valueFrom) || !has(e.valueFrom.secretKeyRef) ||
          !(e.name in variables.credentialKeys || e.name in variables.grantKeys) ||
          (variables.authName != '' && e.valueFrom.secretKeyRef.name == variables.authName &&
           (e.name in variables.credentialKeys ?
             variables.authMode == 'Environment' && e.valueFrom.secretKeyRef.key == variables.credentialKeys[e.name] :
             e.valueFrom.secretKeyRef.key == variables.grantKeys[e.name]))))
      message: {{ printf "the registry credentials and grants a Job reads are the keys of the Secret its %s's spec names (%s.registryAuthFrom)" .kind .source | quote }}
      reason: Forbidden
    - expression: >-
        !variables.named || !has(variables.pod.volumes) || variables.pod.volumes.all(v, !has(v.secret) ||
          (variables.authMode == 'DockerConfigJSON' && variables.authName != '' &&
           has(v.secret.secretName) && v.secret.secretName == variables.authName &&
           has(v.secret.items) && size(v.secret.items) == 1 && v.secret.items[0].key == variables.dockerKey))
      message: {{ printf "the Docker config a Job mounts is the key of the Secret its %s's spec names (%s.registryAuthFrom.dockerConfigJSONKey)" .kind .source | quote }}
      reason: Forbidden
    - expression: >-
        !variables.named || !has(variables.pod.imagePullSecrets) ||
        variables.pod.imagePullSecrets.all(s, has(s.name) && s.name in variables.pullSecrets)
      message: {{ printf "the pull Secrets a Job names are the ones its %s's spec names (execution.imagePullSecrets)" .kind | quote }}
      reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: {{ $name }}
  labels:
    {{- include "ptah-operator.labels" $root | nindent 4 }}
    app.kubernetes.io/component: admission
spec:
  policyName: {{ $name }}
  # Every object of the kind in the Job's namespace is a param (Allow: see the top of this file).
  paramRef:
    selector: {}
    parameterNotFoundAction: Allow
  validationActions: [Deny]
  # Only operation Jobs: the operation-jobs policy refuses a Job of the manager without this label.
  matchResources:
    objectSelector:
      matchLabels:
        app.kubernetes.io/managed-by: ptah-operator
{{- end -}}
