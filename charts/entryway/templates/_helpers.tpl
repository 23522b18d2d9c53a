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

{{/*
Pod Security "restricted" pod context. (dict "user" 1000 "group" 1000 "fsGroup" 1000)
"userOnContainersOnly" true leaves the user and group to the containers (a gateway pod, whose one
container is Istio's proxy; see proxyPodSecurityContext in components/shared/security.ts).
*/}}
{{- define "entryway.podSecurityContext" -}}
runAsNonRoot: true
{{- if not .userOnContainersOnly }}
runAsUser: {{ .user }}
runAsGroup: {{ default .user .group }}
{{- end }}
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

{{/*
The facts the chart shares with the components (ports, paths, RBAC rules, env names), as a dict:
files/contract.json, generated from their TypeScript constants (npm run generate:contract).
Call with the root: (include "entryway.contract" . | fromJson).
*/}}
{{- define "entryway.contract" -}}
{{- .Files.Get "files/contract.json" -}}
{{- end -}}

{{/* A list of strings in flow style, ["a", "b"], as the chart's RBAC rules are written. */}}
{{- define "entryway.flowList" -}}
{{- toJson . | replace "\",\"" "\", \"" -}}
{{- end -}}

{{/* RBAC rules (a list of {apiGroups, resources, verbs}), one YAML list item each. */}}
{{- define "entryway.rbacRules" -}}
{{- range $i, $rule := . }}
{{- if $i }}{{ "\n" }}{{ end -}}
- apiGroups: {{ include "entryway.flowList" $rule.apiGroups }}
  resources: {{ include "entryway.flowList" $rule.resources }}
  verbs: {{ include "entryway.flowList" $rule.verbs }}
{{- end }}
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

{{/*
The head of a workload's NetworkPolicy: its metadata and pods, isolated both ways; the caller
writes the ingress and egress that follow. Labels and selector as YAML text.
(dict "name" $name "namespace" $ns "labels" $labels "selector" $selector)
*/}}
{{- define "entryway.workloadNetworkPolicy" -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
  labels:
    {{- .labels | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- .selector | nindent 6 }}
  policyTypes: ["Ingress", "Egress"]
{{- end -}}

{{/*
An image reference, as bitnami's common.images.image builds it (bitnami/charts
bitnami/common/templates/_images.tpl): <registry>/<repository>:<tag>, or @<digest> in place of the
tag when a digest is given; global.imageRegistry (a mirror) replaces every image's registry.
imageReference() in components/shared/image.ts does the same. A repository or tag left "" falls
back to the caller's (the RTE's come from its flavour and the app's tag).
(dict "root" $ "image" <{registry, repository, tag, digest}> "repository" "" "tag" "")
*/}}
{{- define "entryway.image" -}}
{{- $registry := default .image.registry .root.Values.global.imageRegistry -}}
{{- $repository := default .repository .image.repository -}}
{{- $name := ternary (printf "%s/%s" $registry $repository) $repository (ne $registry "") -}}
{{- if .image.digest -}}
{{- printf "%s@%s" $name .image.digest -}}
{{- else -}}
{{- printf "%s:%s" $name (default .tag .image.tag | toString) -}}
{{- end -}}
{{- end -}}

{{/*
A pod template's metadata: the workload's labels over its podLabels (so a selector label is never
replaced) and its own annotations over its podAnnotations. podMetadata() in
components/shared/pod.ts does the same. (dict "labels" <labels YAML> "annotations" <dict> "pod" <workload values>)
*/}}
{{- define "entryway.podMetadata" -}}
labels:
  {{- merge (.labels | fromYaml) (.pod.podLabels | default dict) | toYaml | nindent 2 }}
{{- with merge (.annotations | default dict) (.pod.podAnnotations | default dict) }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
A pod spec's placement and pull fields: global.imagePullSecrets, then the workload's nodeSelector,
tolerations, affinity, topologySpreadConstraints (in place of the workload's own "spread", a list)
and priorityClassName. podPlacement() in components/shared/pod.ts does the same.
(dict "root" $ "pod" <workload values> "spread" <list>)
*/}}
{{- define "entryway.podPlacement" -}}
{{- with .root.Values.global.imagePullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . }}
  {{- end }}
{{- end }}
{{- range $field := list "nodeSelector" "tolerations" "affinity" }}
{{- with index $.pod $field }}
{{ $field }}:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- with .pod.topologySpreadConstraints | default .spread }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .pod.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- end -}}
