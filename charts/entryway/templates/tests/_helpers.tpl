{{/*
`helm test` pods (helm.sh/hook: test): one per enabled part, each running a script from
files/tests/ with curl. Helm creates them only on `helm test`, in order of hook weight, waits for
each to finish, and deletes them (and the hook NetworkPolicies) once all succeeded; a failed one
stays for `kubectl logs`. They carry no ServiceAccount token, run restricted and non-root, and
stay out of the mesh (a sidecar would keep a test pod running forever).
*/}}

{{/* The hook annotations. (dict "weight" "0") */}}
{{- define "entryway.tests.hookAnnotations" -}}
helm.sh/hook: test
helm.sh/hook-weight: {{ .weight | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end -}}

{{/* A test pod's selector labels: the one a hook NetworkPolicy admits. (dict "root" $ "part" "exec-gateway") */}}
{{- define "entryway.tests.selectorLabels" -}}
{{- include "entryway.selectorLabels" (dict "root" .root "name" "entryway-test" "component" .part) -}}
{{- end -}}

{{/*
A test pod. (dict "root" $ "part" "exec-gateway" "script" "http-ready.sh" "env" (list ...)
"serviceLinks" false "namespace" "ns"): the script's variables come from env; namespace defaults
to the release's.
*/}}
{{- define "entryway.tests.pod" -}}
{{- $t := .root.Values.tests -}}
apiVersion: v1
kind: Pod
metadata:
  name: {{ include "entryway.name" (dict "root" .root "part" (printf "test-%s" .part)) }}
  namespace: {{ .namespace | default .root.Release.Namespace }}
  {{- $labels := merge (include "entryway.labels" (dict "root" .root "name" "entryway-test" "component" .part) | fromYaml) (dict "sidecar.istio.io/inject" "false") }}
  {{- include "entryway.podMetadata" (dict "labels" ($labels | toYaml) "annotations" (include "entryway.tests.hookAnnotations" (dict "weight" "0") | fromYaml) "pod" $t) | nindent 2 }}
spec:
  restartPolicy: Never
  {{- with include "entryway.podPlacement" (dict "root" .root "pod" $t) | trim }}{{ . | nindent 2 }}{{ end }}
  automountServiceAccountToken: false
  enableServiceLinks: {{ .serviceLinks | default false }}
  securityContext:
    {{- include "entryway.podSecurityContext" (dict "user" (int $t.runAsUser)) | nindent 4 }}
  containers:
    - name: test
      image: {{ include "entryway.image" (dict "root" .root "image" $t.image) | quote }}
      imagePullPolicy: IfNotPresent
      command: ["sh", "-c", {{ .root.Files.Get (printf "files/tests/%s" .script) | quote }}]
      env:
        {{- toYaml .env | nindent 8 }}
      resources:
        {{- toYaml $t.resources | nindent 8 }}
      securityContext:
        {{- include "entryway.containerSecurityContext" (dict) | nindent 8 }}
{{- end -}}

{{/*
While the tests run, let the test pod of a part reach its target's port. Every namespace the
chart owns denies all traffic by default (entryway.namespacePolicies), so the test pod needs an
egress rule to the target, and the target an ingress rule from the test pod unless its own policy
already admits that port from anywhere ("ingress" false). NetworkPolicies add up: these only widen
what the installed ones allow, only for the test pod. Weight -1: they exist before the test pod
starts, and go with it.
(dict "root" $ "part" "exec-gateway" "namespace" "the test pod's" "targetNamespace" "ns"
"targetSelector" <labels YAML> "port" "http" "ingress" true)
*/}}
{{- define "entryway.tests.networkPolicy" -}}
{{- $testNamespace := .namespace | default .root.Release.Namespace }}
{{- $testPeer := dict "namespace" $testNamespace "podSelector" (include "entryway.tests.selectorLabels" . | fromYaml) }}
{{- $targetPeer := dict "namespace" .targetNamespace "podSelector" (.targetSelector | fromYaml) }}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "entryway.name" (dict "root" .root "part" (printf "test-%s-egress" .part)) }}
  namespace: {{ $testNamespace }}
  labels:
    {{- include "entryway.labels" (dict "root" .root "name" "entryway-test" "component" .part) | nindent 4 }}
  annotations:
    {{- include "entryway.tests.hookAnnotations" (dict "weight" "-1") | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "entryway.tests.selectorLabels" . | nindent 6 }}
  policyTypes: ["Egress"]
  egress:
    - to:
        - {{ include "entryway.peerIn" $targetPeer | indent 10 | trim }}
      ports:
        - port: {{ .port }}
          protocol: TCP
{{- if .ingress }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "entryway.name" (dict "root" .root "part" (printf "test-%s" .part)) }}
  namespace: {{ .targetNamespace }}
  labels:
    {{- include "entryway.labels" (dict "root" .root "name" "entryway-test" "component" .part) | nindent 4 }}
  annotations:
    {{- include "entryway.tests.hookAnnotations" (dict "weight" "-1") | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- .targetSelector | nindent 6 }}
  policyTypes: ["Ingress"]
  ingress:
    - from:
        - {{ include "entryway.peerIn" $testPeer | indent 10 | trim }}
      ports:
        - port: {{ .port }}
          protocol: TCP
{{- end }}
{{- end -}}
