{{/*
Shared helpers: names, labels and security contexts. Every template uses these; none spells
them out itself. They mirror components/shared/ (names.ts, labels.ts, security.ts).
*/}}

{{/* The base of every object name: the release name unless nameOverride is set. */}}
{{- define "entryway.base" -}}
{{- default .Release.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/*
A DNS-1123 label from parts joined by "-", at most "max" characters. Longer, it is cut and
suffixed with a hash of the whole, so two long names never collapse into one: cappedName() in
components/shared/names.ts does the same, and both front ends name objects alike.
Call with (dict "parts" (list "a" "b") "max" 63).
*/}}
{{- define "entryway.capName" -}}
{{- $joined := join "-" (compact .parts) -}}
{{- if le (len $joined) (int .max) -}}
{{- $joined -}}
{{- else -}}
{{- printf "%s-%s" ($joined | trunc (sub (int .max) 9 | int) | trimSuffix "-") (sha256sum $joined | trunc 8) -}}
{{- end -}}
{{- end -}}

{{/* A DNS-1123 label of at most 63 characters (objectName()). Call with (list "a" "b"). */}}
{{- define "entryway.joinName" -}}
{{- include "entryway.capName" (dict "parts" . "max" 63) -}}
{{- end -}}

{{/* An object name: base + part. Call with (dict "root" $ "part" "exec-gateway"). */}}
{{- define "entryway.name" -}}
{{- include "entryway.joinName" (list (include "entryway.base" .root) .part) -}}
{{- end -}}

{{/*
A StatefulSet's name (and its Service's): at most 52 characters, so its pods' label
controller-revision-hash (name + "-" + a hash of up to 10) fits in 63 (statefulSetName() in
components/shared/names.ts, which cites the Kubernetes source). Same arguments as entryway.name.
*/}}
{{- define "entryway.statefulSetName" -}}
{{- include "entryway.capName" (dict "parts" (list (include "entryway.base" .root) .part) "max" 52) -}}
{{- end -}}

{{/* Selector labels: never change over an object's life. (dict "root" $ "name" "exec-gateway" "component" "server") */}}
{{- define "entryway.selectorLabels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end -}}

{{/* All standard labels: selector labels plus the ones that may change. Same arguments. */}}
{{- define "entryway.labels" -}}
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{ include "entryway.selectorLabels" . }}
app.kubernetes.io/part-of: entryway
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Pod Security "restricted" pod context. (dict "user" 1000 "group" 1000 "fsGroup" 1000) */}}
{{- define "entryway.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .user }}
runAsGroup: {{ default .user .group }}
fsGroup: {{ default (default .user .group) .fsGroup }}
fsGroupChangePolicy: OnRootMismatch
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Restricted container context. (dict "readOnlyRootFilesystem" true "addCapabilities" (list) "user" 1000) */}}
{{- define "entryway.containerSecurityContext" -}}
allowPrivilegeEscalation: false
privileged: false
readOnlyRootFilesystem: {{ ternary .readOnlyRootFilesystem true (hasKey . "readOnlyRootFilesystem") }}
runAsNonRoot: true
{{- with .user }}
runAsUser: {{ . }}
runAsGroup: {{ . }}
{{- end }}
capabilities:
  drop: ["ALL"]
  {{- with .addCapabilities }}
  add: {{ toJson . }}
  {{- end }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}


{{/*
NetworkPolicy pieces, as components/shared/network.ts makes them. A peer for pods in a namespace
known by name: (dict "namespace" "kube-system" "podSelector" (dict "k8s-app" "kube-dns")).
*/}}
{{- define "entryway.peerIn" -}}
namespaceSelector:
  matchLabels:
    kubernetes.io/metadata.name: {{ .namespace }}
podSelector:
  matchLabels:
    {{- toYaml .podSelector | nindent 4 }}
{{- end -}}

{{/* Egress to the cluster DNS (networkPolicy.dns) on 53, UDP and TCP. Call with the root. */}}
{{- define "entryway.dnsEgressRule" -}}
to:
  - {{ include "entryway.peerIn" .Values.networkPolicy.dns | indent 4 | trim }}
ports:
  - port: 53
    protocol: UDP
  - port: 53
    protocol: TCP
{{- end -}}

{{/*
The two policies of a namespace the chart owns: a default deny of all ingress and egress, and DNS
for every pod; each workload's own policy allows the rest. (dict "root" $ "namespace" "ns")
*/}}
{{- define "entryway.namespacePolicies" -}}
{{- $labels := include "entryway.labels" (dict "root" .root "name" "entryway") }}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "entryway.name" (dict "root" .root "part" "default-deny") }}
  namespace: {{ .namespace }}
  labels:
    {{- $labels | nindent 4 }}
spec:
  podSelector: {}
  policyTypes: ["Ingress", "Egress"]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "entryway.name" (dict "root" .root "part" "allow-dns") }}
  namespace: {{ .namespace }}
  labels:
    {{- $labels | nindent 4 }}
spec:
  podSelector: {}
  policyTypes: ["Egress"]
  egress:
    - {{ include "entryway.dnsEgressRule" .root | indent 6 | trim }}
{{- end -}}
