{{/*
Exec gateway helpers. They mirror components/exec-gateway/index.ts (names, RBAC rules, the settings document).
*/}}

{{- define "entryway.execGateway.fullname" -}}
{{- include "entryway.name" (dict "root" . "part" "exec-gateway") -}}
{{- end -}}

{{/* A cluster-scoped name: base-namespace-part, like objectName(name, namespace, part). */}}
{{- define "entryway.execGateway.clusterName" -}}
{{- include "entryway.joinName" (list (include "entryway.base" .root) .root.Release.Namespace .part) -}}
{{- end -}}

{{- define "entryway.execGateway.labels" -}}
{{- include "entryway.labels" (dict "root" . "name" "exec-gateway" "component" "server") -}}
{{- end -}}

{{- define "entryway.execGateway.selectorLabels" -}}
{{- include "entryway.selectorLabels" (dict "root" . "name" "exec-gateway" "component" "server") -}}
{{- end -}}

{{/* The webhook URL's Secret key: an existing one, or the Secret this chart makes. */}}
{{- define "entryway.execGateway.webhookSecret" -}}
{{- $w := .Values.execGateway.webhook -}}
{{- if $w.urlSecret.name -}}
name: {{ $w.urlSecret.name }}
key: {{ $w.urlSecret.key }}
{{- else -}}
name: {{ include "entryway.name" (dict "root" . "part" "exec-gateway-auth") }}
key: webhook-url
{{- end -}}
{{- end -}}

{{/* The RBAC rules for entering pods (EXEC_RULES in the component), and DEBUG_RULE only with debug containers. */}}
{{- define "entryway.execGateway.execRules" -}}
{{- $rules := (include "entryway.contract" . | fromJson).execGateway.rules -}}
{{- /* EXEC_RULES says why pods/exec needs both get and create. */ -}}
{{- include "entryway.rbacRules" (ternary (concat $rules.exec $rules.debug) $rules.exec (not (empty .Values.execGateway.debugContainers.images))) }}
{{- end -}}

{{/*
A Role (with a namespace) or ClusterRole and its binding to the gateway's ServiceAccount, the
rules as YAML text. (dict "root" $ "kind" "Role" "name" $name "namespace" "team-a" "rules" $rules)
*/}}
{{- define "entryway.execGateway.grant" -}}
{{- $labels := include "entryway.execGateway.labels" .root -}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: {{ .kind }}
metadata:
  name: {{ .name }}
  {{- with .namespace }}
  namespace: {{ . }}
  {{- end }}
  labels:
    {{- $labels | nindent 4 }}
rules:
  {{- .rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: {{ .kind }}Binding
metadata:
  name: {{ .name }}
  {{- with .namespace }}
  namespace: {{ . }}
  {{- end }}
  labels:
    {{- $labels | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: {{ .kind }}
  name: {{ .name }}
subjects:
  - kind: ServiceAccount
    name: {{ include "entryway.execGateway.fullname" .root }}
    namespace: {{ .root.Release.Namespace }}
{{- end -}}

{{/*
The gateway's settings document, config.json in its ConfigMap (the gateway reads the file
ENTRYWAY_CONFIG names): its keys are the gateway's own, settings as given, the rest from the values.
Nothing secret goes in: the webhook URL and S3 credentials reach the pod from Secrets.
execGatewayConfig() in components/exec-gateway/index.ts makes the same document.
*/}}
{{- define "entryway.execGateway.config" -}}
{{- $g := .Values.execGateway -}}
{{- $contract := (include "entryway.contract" . | fromJson).execGateway -}}
{{- $config := dict "host" "0.0.0.0" "port" $contract.port "metricsPort" $contract.metricsPort "backend" "kubernetes" "authorizer" $g.authorizer -}}
{{- if and .Values.connectGateway.enabled (not $g.allowOwnedNamespaces) -}}
{{- /* The release's other namespace: the CONNECT gateway's service account reads its TLS key. */ -}}
{{- $_ := set $config "refusedNamespaces" (list (include "entryway.ssh.namespace" .)) -}}
{{- end -}}
{{- if and (eq $g.authorizer "webhook") (hasKey $g.webhook "timeoutMs") -}}
{{- $_ := set $config "webhookTimeoutMs" $g.webhook.timeoutMs -}}
{{- end -}}
{{- if eq $g.authorizer "oidc" -}}
{{- $_ := set $config "oidcIssuer" $g.oidc.issuer -}}
{{- $_ := set $config "oidcAudience" $g.oidc.audience -}}
{{- range $key, $setting := dict "jwksUri" "oidcJwksUri" "usernameClaim" "oidcUsernameClaim" "namespacesClaim" "oidcNamespacesClaim" "groupsClaim" "oidcGroupsClaim" "algorithms" "oidcAlgorithms" -}}
{{- with index $g.oidc $key -}}{{- $_ := set $config $setting . -}}{{- end -}}
{{- end -}}
{{- if hasKey $g.oidc "maxTokenAgeSeconds" -}}
{{- $_ := set $config "oidcMaxTokenAgeSeconds" $g.oidc.maxTokenAgeSeconds -}}
{{- end -}}
{{- end -}}
{{- $config = merge $config $g.settings -}}
{{- /* Behind the one proxy exposure routes through (it appends the address it saw to X-Forwarded-For), the client is the last address there; else every client would share the proxy's limits. */ -}}
{{- if and $g.exposure.kind (not (hasKey $g.settings "trustedProxies")) (not (hasKey $g.settings "trustedProxyHops")) -}}
{{- $_ := set $config "trustedProxyHops" $contract.exposureProxyHops -}}
{{- end -}}
{{- /* Browsers may open sessions only from the public host's pages unless told otherwise. */ -}}
{{- if and $g.exposure.kind (not (hasKey $g.settings "allowedOrigins")) -}}
{{- $_ := set $config "allowedOrigins" (list (printf "https://%s" $g.exposure.host)) -}}
{{- end -}}
{{- $sink := include "entryway.execGateway.recordingsSink" . -}}
{{- if eq $sink "s3" -}}
{{- $s3 := $g.recordings.s3 -}}
{{- $_ := set $config "recordS3Bucket" $s3.bucket -}}
{{- range $key, $setting := dict "endpoint" "recordS3Endpoint" "region" "recordS3Region" "prefix" "recordS3Prefix" -}}
{{- with index $s3 $key -}}{{- $_ := set $config $setting . -}}{{- end -}}
{{- end -}}
{{- if $s3.forcePathStyle -}}{{- $_ := set $config "recordS3ForcePathStyle" true -}}{{- end -}}
{{- else if eq $sink "volume" -}}
{{- $_ := set $config "recordDir" $contract.recordDir -}}
{{- $_ := set $config "recordRetentionDays" $g.recordings.retentionDays -}}
{{- end -}}
{{- with $g.debugContainers.images -}}
{{- $_ := set $config "debugImages" . -}}
{{- if $g.debugContainers.defaultImage -}}{{- $_ := set $config "debugDefaultImage" $g.debugContainers.defaultImage -}}{{- end -}}
{{- end -}}
{{- toJson $config -}}
{{- end -}}

{{/* The ConfigMap key of the gateway's CA bundle (caSource() in the component): the one made for caBundle, or existingCaConfigMap; "" without either. */}}
{{- define "entryway.execGateway.caSource" -}}
{{- $g := .Values.execGateway -}}
{{- if $g.caBundle -}}
name: {{ include "entryway.name" (dict "root" . "part" "exec-gateway-ca") }}
key: {{ (include "entryway.contract" . | fromJson).execGateway.caFile }}
{{- else if $g.existingCaConfigMap.name -}}
name: {{ $g.existingCaConfigMap.name }}
key: {{ $g.existingCaConfigMap.key }}
{{- end -}}
{{- end -}}

{{/* Where recordings go: "s3" (recordings.s3.bucket set), "volume", or "" (not recorded). */}}
{{- define "entryway.execGateway.recordingsSink" -}}
{{- $r := .Values.execGateway.recordings -}}
{{- if $r.enabled -}}{{- if $r.s3.bucket -}}s3{{- else -}}volume{{- end -}}{{- end -}}
{{- end -}}

{{/* The S3 endpoint's port when it is not 443 (the NetworkPolicy lets the gateway reach it), else nothing. */}}
{{- define "entryway.execGateway.s3EndpointPort" -}}
{{- if eq (include "entryway.execGateway.recordingsSink" .) "s3" -}}
{{- with .Values.execGateway.recordings.s3.endpoint -}}
{{- $port := regexFind "[0-9]+$" (regexFind ":[0-9]+/?$" .) -}}
{{- if and $port (ne $port "443") (ne $port "6443") -}}{{ $port }}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Cross-field checks the schema cannot express; each fails with a clear message. */}}
{{- define "entryway.execGateway.validate" -}}
{{- $g := .Values.execGateway -}}
{{- if and (not $g.targetNamespaces) (not $g.clusterWide) -}}
{{- fail "execGateway.targetNamespaces is empty: name the namespaces the gateway may enter (or set execGateway.clusterWide: true explicitly)" -}}
{{- end -}}
{{- if ne (len $g.targetNamespaces) (len (uniq $g.targetNamespaces)) -}}
{{- fail "execGateway.targetNamespaces has duplicates" -}}
{{- end -}}
{{- /* Exec there reaches the gateway's pods and their service-account token, past its audit. */ -}}
{{- if has .Release.Namespace $g.targetNamespaces -}}
{{- fail (printf "execGateway.targetNamespaces includes %q, the gateway's own namespace; run the targets in a namespace of their own" .Release.Namespace) -}}
{{- end -}}
{{- if and .Values.connectGateway.enabled (not $g.allowOwnedNamespaces) (has (include "entryway.ssh.namespace" .) $g.targetNamespaces) -}}
{{- fail (printf "execGateway.targetNamespaces includes %q, a namespace the release owns (the CONNECT gateway's: its service account reads its TLS key); set execGateway.allowOwnedNamespaces to allow it" (include "entryway.ssh.namespace" .)) -}}
{{- end -}}
{{- if eq $g.authorizer "webhook" -}}
{{- if eq (not $g.webhook.url) (not $g.webhook.urlSecret.name) -}}
{{- fail "execGateway.authorizer \"webhook\" needs exactly one of execGateway.webhook.url or execGateway.webhook.urlSecret" -}}
{{- end -}}
{{- end -}}
{{- if and (eq $g.authorizer "oidc") (or (not $g.oidc.issuer) (not $g.oidc.audience)) -}}
{{- fail "execGateway.authorizer \"oidc\" needs execGateway.oidc.issuer and execGateway.oidc.audience" -}}
{{- end -}}
{{- if and $g.autoscaling.enabled (lt (int $g.autoscaling.maxReplicas) (int $g.autoscaling.minReplicas)) -}}
{{- fail "execGateway.autoscaling needs 1 <= minReplicas <= maxReplicas" -}}
{{- end -}}
{{- /* A ReadWriteOnce volume attaches to one node: one replica, replaced with Recreate. */ -}}
{{- if and (eq (include "entryway.execGateway.recordingsSink" .) "volume") (eq $g.recordings.accessMode "ReadWriteOnce") (or $g.autoscaling.enabled (ne (int $g.replicas) 1)) -}}
{{- fail "execGateway.recordings on a ReadWriteOnce volume need replicas: 1 and no autoscaling (one node mounts it); use accessMode ReadWriteMany or recordings.s3 for more replicas" -}}
{{- end -}}
{{- with $g.debugContainers -}}
{{- if .images -}}
{{- if ne (len .images) (len (uniq .images)) -}}
{{- fail "execGateway.debugContainers.images has duplicates" -}}
{{- end -}}
{{- if and .defaultImage (not (has .defaultImage .images)) -}}
{{- fail (printf "execGateway.debugContainers.defaultImage %q is not one of execGateway.debugContainers.images" .defaultImage) -}}
{{- end -}}
{{- if ne $g.authorizer "kubernetes" -}}
{{- fail "execGateway.debugContainers need execGateway.authorizer \"kubernetes\" (a SubjectAccessReview for patch pods/ephemeralcontainers)" -}}
{{- end -}}
{{- if and (hasKey $g.settings "maxSessionSeconds") (eq (int64 $g.settings.maxSessionSeconds) 0) -}}
{{- fail "execGateway.debugContainers need execGateway.settings.maxSessionSeconds > 0 (a debug container lives that long)" -}}
{{- end -}}
{{- else if .defaultImage -}}
{{- fail "execGateway.debugContainers.defaultImage is set but execGateway.debugContainers.images is empty" -}}
{{- end -}}
{{- end -}}
{{- /* The gateway's cross-field rules (gateway/src/config.ts), a setting left out at the gateway's default. */ -}}
{{- $s := merge (deepCopy $g.settings) (include "entryway.contract" . | fromJson).execGateway.settingDefaults -}}
{{- if le (float64 $s.reapTimeoutMs) (mulf $s.reapGraceSeconds 1000) -}}
{{- fail (printf "execGateway.settings.reapTimeoutMs (%v) must be longer than execGateway.settings.reapGraceSeconds (%v) x 1000: the reaper waits that long before SIGKILL" (int64 $s.reapTimeoutMs) (int64 $s.reapGraceSeconds)) -}}
{{- end -}}
{{- if gt (float64 $s.bufferLowBytes) (float64 $s.bufferHighBytes) -}}
{{- fail (printf "execGateway.settings.bufferLowBytes (%v) must not exceed execGateway.settings.bufferHighBytes (%v)" (int64 $s.bufferLowBytes) (int64 $s.bufferHighBytes)) -}}
{{- end -}}
{{- if and $g.caBundle $g.existingCaConfigMap.name -}}
{{- fail "execGateway: give caBundle or existingCaConfigMap, not both: the gateway reads one CA bundle" -}}
{{- end -}}
{{- if and $g.existingCaConfigMap.name (not $g.existingCaConfigMap.key) -}}
{{- fail "execGateway.existingCaConfigMap.key is required with existingCaConfigMap.name: the key holding the PEM certificates" -}}
{{- end -}}
{{- if $g.exposure.kind -}}
{{- if not $g.exposure.host -}}
{{- fail "execGateway.exposure.host is required when execGateway.exposure.kind is set" -}}
{{- end -}}
{{- if not $g.exposure.tlsSecretName -}}
{{- fail "execGateway.exposure.tlsSecretName is required: the gateway is exposed with TLS only" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* NOTES.txt: where the exec gateway is and what it may enter. */}}
{{- define "entryway.execGateway.notes" -}}
{{- $g := .Values.execGateway -}}
{{- if $g.enabled }}

Exec gateway ({{ $g.authorizer }} authorizer):
{{- $fullname := include "entryway.execGateway.fullname" . }}
{{- $path := (include "entryway.contract" . | fromJson).execGateway.path }}
{{- if $g.exposure.kind }}
  URL: wss://{{ $g.exposure.host }}{{ $path }} (TLS from Secret {{ $g.exposure.tlsSecretName }})
{{- end }}
  In-cluster: ws://{{ $fullname }}.{{ .Release.Namespace }}.svc.cluster.local{{ $path }}
{{- if $g.clusterWide }}
  It may enter every namespace (clusterWide: true).
{{- else }}
  It may enter: {{ join ", " $g.targetNamespaces }}
{{- end }}
{{- $target := printf "%s/<pod>" (ternary "<namespace>" (first $g.targetNamespaces | default "<namespace>") $g.clusterWide) }}
  Next, open a shell in a pod:
{{- if eq $g.authorizer "kubernetes" }}
    export ENTRYWAY_TOKEN=$(kubectl create token <service-account> --audience {{ first ($g.settings.tokenAudiences | default (list "entryway")) }})
{{- else }}
    export ENTRYWAY_TOKEN=<a token the {{ $g.authorizer }} authorizer accepts>
{{- end }}
{{- if $g.exposure.kind }}
    entryway enter --gateway wss://{{ $g.exposure.host }}{{ $path }} {{ $target }}
{{- else }}
    kubectl -n {{ .Release.Namespace }} port-forward service/{{ $fullname }} 8080:80 &
    entryway enter --gateway ws://127.0.0.1:8080{{ $path }} {{ $target }}
{{- end }}
{{- end }}
{{- end -}}
