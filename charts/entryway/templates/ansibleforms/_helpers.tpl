{{/*
AnsibleForms and its RTE: names, labels, the app's environment, the RTE container (sidecar and
remote alike), the runner seed and every check on the values. They mirror
components/ansibleforms/ (common.ts, runner-seed.ts, ansibleforms.ts, remote-rte.ts) so both front
ends make the same objects. Secrets are never generated here: see docs/ansibleforms.md.
*/}}

{{- define "entryway.ansibleForms.name" -}}{{ include "entryway.name" (dict "root" .root "part" (printf "ansibleforms%s" (ternary "" (printf "-%s" .part) (empty .part)))) }}{{- end -}}

{{/* The built-in MySQL's StatefulSet (and Service): at most 52 characters (entryway.statefulSetName). */}}
{{- define "entryway.ansibleForms.mysqlName" -}}{{ include "entryway.statefulSetName" (dict "root" . "part" "ansibleforms-mysql") }}{{- end -}}

{{- define "entryway.ansibleForms.selectorLabels" -}}
{{ include "entryway.selectorLabels" (dict "root" . "name" "ansibleforms" "component" "server") }}
{{- end -}}
{{- define "entryway.ansibleForms.labels" -}}
{{ include "entryway.labels" (dict "root" . "name" "ansibleforms" "component" "server") }}
{{- end -}}
{{- define "entryway.ansibleForms.mysqlSelectorLabels" -}}
{{ include "entryway.selectorLabels" (dict "root" . "name" "ansibleforms" "component" "database") }}
{{- end -}}
{{- define "entryway.ansibleForms.mysqlLabels" -}}
{{ include "entryway.labels" (dict "root" . "name" "ansibleforms" "component" "database") }}
{{- end -}}
{{- define "entryway.remoteRte.selectorLabels" -}}
{{ include "entryway.selectorLabels" (dict "root" . "name" "ansibleforms-rte" "component" "rte") }}
{{- end -}}
{{- define "entryway.remoteRte.labels" -}}
{{ include "entryway.labels" (dict "root" . "name" "ansibleforms-rte" "component" "rte") }}
{{- end -}}

{{/* The app folders RTE_FILES=local mounts, as a JSON list (LOCAL_FILES_FOLDERS, from files/contract.json). */}}
{{- define "entryway.ansibleForms.localFilesFolders" -}}
{{- toJson (include "entryway.contract" . | fromJson).ansibleForms.localFilesFolders -}}
{{- end -}}

{{/* The variables the chart sets in the app container, as a JSON list (COMPONENT_APP_ENV, from files/contract.json). */}}
{{- define "entryway.ansibleForms.componentEnvNames" -}}
{{- toJson (include "entryway.contract" . | fromJson).ansibleForms.componentAppEnv -}}
{{- end -}}

{{/*
Egress to host:port, a YAML list item: an IPv4 literal as a /32, a name by port only (a
NetworkPolicy matches no names; common.ts hostPortEgress). (dict "host" h "port" p)
*/}}
{{- define "entryway.ansibleForms.hostPortEgress" -}}
{{- if regexMatch "^(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])([.](25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}$" .host }}
- to:
    - ipBlock:
        cidr: {{ printf "%s/32" .host }}
  ports:
    - port: {{ int .port }}
      protocol: TCP
{{- else }}
- ports:
    - port: {{ int .port }}
      protocol: TCP
{{- end }}
{{- end -}}

{{/* Egress to a URL's host and port (the scheme's default when it names none; common.ts urlEgress). */}}
{{- define "entryway.ansibleForms.urlEgress" -}}
{{- $u := urlParse . -}}
{{- $port := ternary 443 80 (has $u.scheme (list "https" "wss")) -}}
{{- $host := $u.host -}}
{{- if regexMatch ":[0-9]+$" $host -}}
{{- $port = regexFind "[0-9]+$" $host | int -}}
{{- $host = regexReplaceAll ":[0-9]+$" $host "" -}}
{{- end -}}
{{- include "entryway.ansibleForms.hostPortEgress" (dict "host" $host "port" $port) -}}
{{- end -}}

{{/* The monitoring namespace (and its Prometheus pods) as a NetworkPolicy peer; takes a metrics section (common.ts monitoringPeer). */}}
{{- define "entryway.ansibleForms.monitoringPeer" -}}
- namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: {{ default "monitoring" .namespace }}
  {{- with .podSelector.matchLabels }}
  podSelector:
    matchLabels:
      {{- toYaml . | nindent 6 }}
  {{- end }}
{{- end -}}

{{/* A scrape endpoint's bearer token from a Secret (common.ts bearerFrom). */}}
{{- define "entryway.ansibleForms.bearerFrom" -}}
type: Bearer
credentials:
  name: {{ . }}
  key: token
{{- end -}}

{{/* The Secret holding the RTE token (key "token"). */}}
{{- define "entryway.ansibleForms.tokenSecret" -}}
{{- default (include "entryway.ansibleForms.name" (dict "root" . "part" "rte-token")) .Values.ansibleForms.existingSecrets.rteToken -}}
{{- end -}}

{{/* The database: (dict host port user secretName secretKey) as JSON. */}}
{{- define "entryway.ansibleForms.db" -}}
{{- $af := .Values.ansibleForms -}}
{{- if $af.externalDatabase.host -}}
{{- toJson (dict "host" $af.externalDatabase.host "port" (int (default 3306 $af.externalDatabase.port)) "user" $af.externalDatabase.user "secretName" $af.externalDatabase.passwordSecret.name "secretKey" $af.externalDatabase.passwordSecret.key) -}}
{{- else -}}
{{- toJson (dict "host" (include "entryway.ansibleForms.mysqlName" .) "port" 3306 "user" "ansibleforms" "secretName" $af.existingSecrets.database "secretKey" "password") -}}
{{- end -}}
{{- end -}}

{{- define "entryway.ansibleForms.secretEnv" -}}
- name: {{ .name | quote }}
  valueFrom:
    secretKeyRef:
      name: {{ .secretName | quote }}
      key: {{ .key | quote }}
{{- end -}}

{{/* DB_*: the app's, and the database-mode RTE's (which never gets ENCRYPTION_SECRET: see database-rte.ts). */}}
{{- define "entryway.ansibleForms.databaseEnv" -}}
{{- $db := include "entryway.ansibleForms.db" . | fromJson -}}
- name: DB_HOST
  value: {{ $db.host | quote }}
- name: DB_PORT
  value: {{ $db.port | int | toString | quote }}
- name: DB_USER
  value: {{ $db.user | quote }}
{{ include "entryway.ansibleForms.secretEnv" (dict "name" "DB_PASSWORD" "secretName" $db.secretName "key" $db.secretKey) }}
{{- end -}}

{{/* The app container's environment. */}}
{{- define "entryway.ansibleForms.appEnv" -}}
{{- $af := .Values.ansibleForms -}}
- name: PORT
  value: "8000"
{{ include "entryway.ansibleForms.databaseEnv" . }}
{{ include "entryway.ansibleForms.secretEnv" (dict "name" "ENCRYPTION_SECRET" "secretName" $af.existingSecrets.keys "key" "encryption-secret") }}
{{ include "entryway.ansibleForms.secretEnv" (dict "name" "ACCESS_TOKEN_SECRET" "secretName" $af.existingSecrets.keys "key" "access-token-secret") }}
- name: ADMIN_USERNAME
  value: {{ $af.adminUsername | quote }}
{{ include "entryway.ansibleForms.secretEnv" (dict "name" "ADMIN_PASSWORD" "secretName" $af.existingSecrets.keys "key" "admin-password") }}
{{ include "entryway.ansibleForms.secretEnv" (dict "name" "RTE_TOKEN" "secretName" (include "entryway.ansibleForms.tokenSecret" .) "key" "token") }}
- name: RTE_QUEUE_MINUTES
  value: {{ $af.queueMinutes | int | toString | quote }}
- name: CONFIG_SEED_PATH
  value: /etc/ansibleforms/seed/seed.yaml
- name: CONFIG_SEED_RELOAD_SECONDS
  value: {{ $af.seedReloadSeconds | int | toString | quote }}
{{- if $af.metrics.enabled }}
{{ include "entryway.ansibleForms.secretEnv" (dict "name" "METRICS_TOKEN" "secretName" $af.metrics.existingSecret "key" "token") }}
{{- end }}
{{- range $af.secretEnv }}
{{ include "entryway.ansibleForms.secretEnv" . }}
{{- end }}
{{- end -}}

{{/* The names of the app's environment variables, as a JSON list (what ${VAR} may reference). */}}
{{- define "entryway.ansibleForms.appEnvNames" -}}
{{- $names := list -}}
{{- range (include "entryway.ansibleForms.appEnv" . | fromYamlArray) }}{{ $names = append $names .name }}{{ end -}}
{{- toJson $names -}}
{{- end -}}

{{/* The RTE's resources, sized from its job count unless given. */}}
{{- define "entryway.ansibleForms.rteResources" -}}
{{- if .resources -}}
{{ toYaml .resources }}
{{- else -}}
{{- $jobs := int .maxJobs -}}
requests:
  cpu: {{ printf "%dm" (add 100 (mul 100 $jobs)) }}
  memory: {{ printf "%dMi" (add 256 (mul 128 $jobs)) }}
limits:
  memory: {{ printf "%dMi" (add 512 (mul 256 $jobs)) }}
{{- end -}}
{{- end -}}

{{/*
The RTE image: a custom repository, else the flavour's published layer
ghcr.io/ansibleforms/ansibleforms-rte-<full|core|base>, at the given tag or the app's
(components/ansibleforms/common.ts rteImage; upstream ansibleforms server/src/runners/README.md).
*/}}
{{- define "entryway.ansibleForms.rteImage" -}}
{{- include "entryway.image" (dict "root" .root "image" .s.image "repository" (printf "ansibleforms/ansibleforms-rte-%s" (default "full" .s.flavor)) "tag" .defaultTag) -}}
{{- end -}}

{{/*
The RTE container and its volumes, as JSON (dict "container" ... "volumes" ...).
(dict "root" $ "s" <settings> "mode" inbound|outbound|database "port" N "tokenSecret" name
"metricsSecret" name "defaultTag" tag "ansibleCfgConfigMap" name "extraEnv" <yaml list> "extraMounts" <list>
"appSecrets" <the Secrets the app's container reads, in its pod> )
*/}}
{{- define "entryway.ansibleForms.rteContainer" -}}
{{- $s := .s -}}
{{- $socket := ne .mode "database" -}}
{{- $env := list (dict "name" "PORT" "value" (toString .port)) -}}
{{- if $socket }}{{ $env = append $env (dict "name" "RTE_MODE" "value" .mode) }}{{ end -}}
{{- $env = append $env (dict "name" "RTE_TOKEN" "valueFrom" (dict "secretKeyRef" (dict "name" .tokenSecret "key" "token"))) -}}
{{- $env = append $env (dict "name" "RTE_MAX_JOBS" "value" (toString (int $s.maxJobs))) -}}
{{- if $socket -}}
{{- $env = append $env (dict "name" "RTE_FILES" "value" $s.files) -}}
{{- $env = append $env (dict "name" "RTE_SPOOL_PATH" "value" "/var/spool/ansibleforms-rte") -}}
{{- $env = append $env (dict "name" "RTE_DRAIN_SECONDS" "value" (toString (int $s.drainSeconds))) -}}
{{- end -}}
{{- if $s.processMaxBuffer }}{{ $env = append $env (dict "name" "PROCESS_MAX_BUFFER" "value" (toString (int64 $s.processMaxBuffer))) }}{{ end -}}
{{- if .metricsSecret }}{{ $env = append $env (dict "name" "METRICS_TOKEN" "valueFrom" (dict "secretKeyRef" (dict "name" .metricsSecret "key" "token"))) }}{{ end -}}
{{- $env = concat $env (default list .extraEnv) -}}
{{- range $s.extraEnv -}}
{{- $name := .name -}}
{{- range $env }}{{ if eq .name $name }}{{ fail (printf "extraEnv %s: set by the chart (change the setting that sets it)" $name) }}{{ end }}{{ end -}}
{{- if or (hasKey . "valueFrom") (not (hasKey . "value")) }}{{ fail (printf "extraEnv %s: a plain value only (the RTE reads no Secret but its own token and metrics token)" $name) }}{{ end -}}
{{- end -}}
{{- /* Its sshSecret, mounted whole, is a Secret of its own: none its variables or the app read (components/ansibleforms/common.ts rteSecretProblems). */ -}}
{{- if $s.sshSecret -}}
{{- $read := default list $.appSecrets -}}
{{- range $env }}{{ with .valueFrom }}{{ with .secretKeyRef }}{{ $read = append $read .name }}{{ end }}{{ end }}{{ end -}}
{{- if has $s.sshSecret $read -}}
{{- fail (printf "sshSecret %s is a Secret the RTE's token or the app also reads: the RTE's ssh files are a Secret of their own (mounted whole, it gives every key it holds)" $s.sshSecret) -}}
{{- end -}}
{{- end -}}
{{- $env = concat $env (default list $s.extraEnv) -}}
{{- $mounts := list -}}
{{- if $socket }}{{ $mounts = append $mounts (dict "name" "rte-spool" "mountPath" "/var/spool/ansibleforms-rte") }}{{ end -}}
{{- $mounts = append $mounts (dict "name" "rte-tmp" "mountPath" "/tmp") -}}
{{- $mounts = append $mounts (dict "name" "rte-ansible-home" "mountPath" "/home/node/.ansible") -}}
{{- $volumes := list (dict "name" "rte-tmp" "emptyDir" dict) (dict "name" "rte-ansible-home" "emptyDir" dict) -}}
{{- if $s.sshSecret -}}
{{- $mounts = append $mounts (dict "name" "rte-ssh" "mountPath" "/home/node/.ssh" "readOnly" true) -}}
{{- $volumes = append $volumes (dict "name" "rte-ssh" "secret" (dict "secretName" $s.sshSecret "defaultMode" 256)) -}}
{{- end -}}
{{- if .ansibleCfgConfigMap -}}
{{- $mounts = append $mounts (dict "name" "rte-ansible-cfg" "mountPath" "/etc/ansible/ansible.cfg" "subPath" "ansible.cfg" "readOnly" true) -}}
{{- $volumes = append $volumes (dict "name" "rte-ansible-cfg" "configMap" (dict "name" .ansibleCfgConfigMap)) -}}
{{- end -}}
{{- if $s.collectionsClaim -}}
{{- $mounts = append $mounts (dict "name" "rte-collections" "mountPath" "/etc/ansible/collections" "readOnly" true) -}}
{{- $volumes = append $volumes (dict "name" "rte-collections" "persistentVolumeClaim" (dict "claimName" $s.collectionsClaim "readOnly" true)) -}}
{{- end -}}
{{- if $s.rolesClaim -}}
{{- $mounts = append $mounts (dict "name" "rte-roles" "mountPath" "/etc/ansible/roles" "readOnly" true) -}}
{{- $volumes = append $volumes (dict "name" "rte-roles" "persistentVolumeClaim" (dict "claimName" $s.rolesClaim "readOnly" true)) -}}
{{- end -}}
{{- $mounts = concat $mounts (default list .extraMounts) -}}
{{- $probe := dict "httpGet" (dict "path" "/live" "port" .port) "periodSeconds" 10 "timeoutSeconds" 5 "failureThreshold" 6 -}}
{{- $ready := dict "httpGet" (dict "path" "/ready" "port" .port) "periodSeconds" 10 "timeoutSeconds" 5 "failureThreshold" 3 -}}
{{- $container := dict
  "name" "rte"
  "image" (include "entryway.ansibleForms.rteImage" (dict "root" .root "s" $s "defaultTag" .defaultTag))
  "imagePullPolicy" "IfNotPresent"
  "ports" (list (dict "name" "rte" "containerPort" .port "protocol" "TCP"))
  "env" $env
  "volumeMounts" $mounts
  "resources" (include "entryway.ansibleForms.rteResources" $s | fromYaml)
  "livenessProbe" $probe
  "readinessProbe" $ready
  "securityContext" (include "entryway.containerSecurityContext" (dict "user" 1000) | fromYaml)
-}}
{{- toJson (dict "container" $container "volumes" $volumes) -}}
{{- end -}}

{{/* A token given as a value: at least 16 characters. (dict "where" "..." "token" "...") */}}
{{- define "entryway.ansibleForms.checkToken" -}}
{{- if and .token (lt (len .token) 16) -}}
{{- fail (printf "%s: the RTE token must be at least 16 characters (got %d)" .where (len .token)) -}}
{{- end -}}
{{- end -}}

{{/* The runner seed as a dict, checked against AnsibleForms' seed rules; fails with every problem. */}}
{{- define "entryway.ansibleForms.seed" -}}
{{- $af := .Values.ansibleForms -}}
{{- $rte := $af.rte -}}
{{- $own := dict "type" "rte" "token" "${RTE_TOKEN}" "is_default" $rte.isDefault -}}
{{- if eq $rte.mode "remote" -}}
{{- $_ := set $own "name" (default "remote" $rte.runnerName) -}}
{{- $_ := set $own "mode" "outbound" -}}
{{- else -}}
{{- $_ := set $own "name" (default "rte" $rte.runnerName) -}}
{{- if eq $rte.mode "sidecar" }}{{ $_ := set $own "mode" "inbound" }}{{ end -}}
{{- $_ := set $own "uri" (printf "http://127.0.0.1:%d" (int $rte.port)) -}}
{{- end -}}
{{- $items := prepend (default list $af.runners.items) $own -}}
{{- $envNames := include "entryway.ansibleForms.appEnvNames" . | fromJsonArray -}}
{{- $notTokens := without (include "entryway.ansibleForms.componentEnvNames" . | fromJsonArray) "RTE_TOKEN" -}}
{{- $problems := list -}}
{{- $names := list -}}
{{- $defaults := list -}}
{{- $fields := dict "rte" (list "name" "type" "description" "is_default" "mode" "uri" "token") "awx" (list "name" "type" "description" "is_default" "uri" "token" "username" "password" "ignore_certs") -}}
{{- range $i, $r := $items -}}
{{- $label := ternary (printf "runner %q" (toString $r.name)) (printf "runner #%d" (add1 $i)) (not (empty $r.name)) -}}
{{- if empty $r.name -}}
{{- $problems = append $problems (printf "%s has no name" $label) -}}
{{- else if has $r.name $names -}}
{{- $problems = append $problems (printf "%s is declared twice (duplicate name)" $label) -}}
{{- else -}}
{{- $names = append $names $r.name -}}
{{- end -}}
{{- if not (hasKey $fields (toString $r.type)) -}}
{{- $problems = append $problems (printf "%s has unknown type %q (rte or awx)" $label (toString $r.type)) -}}
{{- else -}}
{{- $allowed := get $fields (toString $r.type) -}}
{{- range $key := keys $r | sortAlpha -}}
{{- if not (has $key $allowed) }}{{ $problems = append $problems (printf "%s has unknown field %q" $label $key) }}{{ end -}}
{{- end -}}
{{- if eq (toString $r.is_default) "true" }}{{ $defaults = append $defaults $r.name }}{{ end -}}
{{- if eq $r.type "rte" -}}
{{- if empty $r.token }}{{ $problems = append $problems (printf "%s is an rte runner without a token" $label) }}{{ end -}}
{{- if and (hasKey $r "mode") (not (has (toString $r.mode) (list "inbound" "outbound"))) }}{{ $problems = append $problems (printf "%s has unknown mode %q (inbound or outbound)" $label (toString $r.mode)) }}{{ end -}}
{{- if and (ne (toString $r.mode) "outbound") (empty $r.uri) }}{{ $problems = append $problems (printf "%s needs a uri: the app dials an %s RTE" $label (default "database-mode" $r.mode)) }}{{ end -}}
{{- else if empty $r.uri -}}
{{- $problems = append $problems (printf "%s is an awx runner without a uri" $label) -}}
{{- end -}}
{{- range $field := list "token" "password" -}}
{{- if and (hasKey $r $field) (not (regexMatch "^\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}$" (toString (get $r $field)))) -}}
{{- $problems = append $problems (printf "%s: %s must be a ${VAR} reference to the app's environment, never a literal" $label $field) -}}
{{- else if and (hasKey $r $field) (has (trimSuffix "}" (trimPrefix "${" (toString (get $r $field)))) $notTokens) -}}
{{- $problems = append $problems (printf "%s: %s may reference only a token variable (${RTE_TOKEN} or one of secretEnv), not %s" $label $field (toString (get $r $field))) -}}
{{- end -}}
{{- end -}}
{{- range $key := keys $r | sortAlpha -}}
{{- range $ref := regexFindAll "\\$\\{[^}]*\\}" (toString (get $r $key)) -1 -}}
{{- $var := trimSuffix "}" (trimPrefix "${" $ref) -}}
{{- if not (has $var $envNames) -}}
{{- $problems = append $problems (printf "%s: %s uses ${%s}, which the app container does not have (it has: %s)" $label $key $var (join ", " (sortAlpha $envNames))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if gt (len $defaults) 1 -}}
{{- $problems = append $problems (printf "more than one default runner: %s" (join ", " $defaults)) -}}
{{- end -}}
{{- if $problems -}}
{{- fail (printf "ansibleForms: the runner seed is invalid: %s" (join "; " $problems)) -}}
{{- end -}}
{{- $runners := dict "items" $items -}}
{{- if ne (toString $af.runners.prune) "<nil>" }}{{ $_ := set $runners "prune" $af.runners.prune }}{{ end -}}
{{- toYaml (dict "version" 1 "runners" $runners) -}}
{{- end -}}

{{/* Every check on ansibleForms values besides the seed; fails with a clear message. */}}
{{- define "entryway.ansibleForms.validate" -}}
{{- $af := .Values.ansibleForms -}}
{{- $problems := list -}}
{{- if not (has $af.rte.mode (list "sidecar" "remote" "database")) -}}
{{- $problems = append $problems (printf "rte.mode %q is unknown (sidecar, remote or database)" (toString $af.rte.mode)) -}}
{{- end -}}
{{- if and (ne $af.rte.mode "remote") (eq (int $af.rte.port) 8000) -}}
{{- $problems = append $problems (printf "rte.port %d is the app's port: the sidecar shares the pod's network, its port must differ" (int $af.rte.port)) -}}
{{- end -}}
{{- if and (eq $af.rte.mode "remote") (eq $af.rte.files "local") -}}
{{- $problems = append $problems "rte.files \"local\" needs the app's disk; an outbound RTE elsewhere cannot share it (use \"transfer\")" -}}
{{- end -}}
{{- if not $af.existingSecrets.keys -}}
{{- $problems = append $problems "existingSecrets.keys is required: a Secret with encryption-secret (32 characters), access-token-secret and admin-password (the chart never generates them; see docs/ansibleforms.md, Secrets)" -}}
{{- end -}}
{{- if and (not $af.externalDatabase.host) (not $af.existingSecrets.database) -}}
{{- $problems = append $problems "existingSecrets.database is required for the built-in MySQL: a Secret with password and root-password" -}}
{{- end -}}
{{- if and $af.externalDatabase.host (or (not $af.externalDatabase.user) (not $af.externalDatabase.passwordSecret.name) (not $af.externalDatabase.passwordSecret.key)) -}}
{{- $problems = append $problems "externalDatabase needs host, user and passwordSecret (name and key)" -}}
{{- end -}}
{{- if and $af.rte.sshFromApp $af.rte.sshSecret -}}
{{- $problems = append $problems "rte: give sshFromApp or sshSecret, not both" -}}
{{- end -}}
{{- if and $af.rte.sshFromApp (eq $af.rte.mode "remote") -}}
{{- $problems = append $problems "rte.sshFromApp needs the app's disk; an outbound RTE elsewhere cannot share it (use its own sshSecret)" -}}
{{- end -}}
{{- if and $af.externalDatabase.host $af.existingSecrets.database -}}
{{- $problems = append $problems "existingSecrets.database is for the built-in MySQL; an external database names its passwordSecret" -}}
{{- end -}}
{{- if and (not $af.existingSecrets.rteToken) (not $af.rteToken) -}}
{{- $problems = append $problems "the RTE token is required: existingSecrets.rteToken (a Secret with key token) or rteToken" -}}
{{- end -}}
{{- if and $af.existingSecrets.rteToken $af.rteToken -}}
{{- $problems = append $problems "give existingSecrets.rteToken or rteToken, not both" -}}
{{- end -}}
{{- if $af.metrics.enabled -}}
{{- if not $af.metrics.existingSecret -}}
{{- $problems = append $problems "metrics.existingSecret is required when metrics.enabled: a Secret with key token, the app's METRICS_TOKEN (the chart never generates secrets)" -}}
{{- end -}}
{{- if and (eq $af.rte.mode "sidecar") (not $af.metrics.rteExistingSecret) -}}
{{- $problems = append $problems "metrics.rteExistingSecret is required with the sidecar: a Secret with key token, the RTE's own METRICS_TOKEN" -}}
{{- end -}}
{{- if and $af.metrics.existingSecret (eq $af.metrics.existingSecret $af.metrics.rteExistingSecret) -}}
{{- $problems = append $problems "metrics: the RTE's METRICS_TOKEN must come from a Secret of its own (rteExistingSecret differs from existingSecret)" -}}
{{- end -}}
{{- end -}}
{{- if and $af.expose.enabled (not $af.expose.host) -}}
{{- $problems = append $problems "expose.host is required when expose.enabled" -}}
{{- end -}}
{{- $reserved := include "entryway.ansibleForms.componentEnvNames" . | fromJsonArray -}}
{{- range $af.secretEnv -}}
{{- if has .name $reserved }}{{ $problems = append $problems (printf "secretEnv %s is set by the chart" .name) }}{{ end -}}
{{- end -}}
{{- if $problems -}}
{{- fail (printf "ansibleForms: %s" (join "; " $problems)) -}}
{{- end -}}
{{- include "entryway.ansibleForms.checkToken" (dict "where" "ansibleForms" "token" $af.rteToken) -}}
{{- end -}}

{{- define "entryway.remoteRte.validate" -}}
{{- $r := .Values.remoteRte -}}
{{- $problems := list -}}
{{- if not $r.appUrl -}}
{{- $problems = append $problems "appUrl is required: an outbound RTE dials the app" -}}
{{- else if not (regexMatch "^(https?|wss?)://[^/\\s]+" $r.appUrl) -}}
{{- $problems = append $problems (printf "appUrl %q is not an http(s) URL" $r.appUrl) -}}
{{- else if and (regexMatch "^(?i)(http|ws)://" $r.appUrl) (not $r.allowInsecureAppUrl) -}}
{{- $problems = append $problems (printf "appUrl %q is plain %s: the RTE token would cross the network unencrypted; use https (or set allowInsecureAppUrl: true for an app in the same trusted network)" $r.appUrl (index (splitList ":" $r.appUrl) 0)) -}}
{{- end -}}
{{- if eq $r.files "local" -}}
{{- $problems = append $problems "files \"local\" needs the app's disk; an outbound RTE cannot share it (use \"transfer\")" -}}
{{- end -}}
{{- if ne $r.mode "outbound" -}}
{{- $problems = append $problems (printf "mode %q is unknown: a remote RTE is outbound" (toString $r.mode)) -}}
{{- end -}}
{{- if and (not $r.existingTokenSecret) (not $r.token) -}}
{{- $problems = append $problems "a token or an existingTokenSecret is required" -}}
{{- end -}}
{{- if and $r.existingTokenSecret $r.token -}}
{{- $problems = append $problems "give a token or an existingTokenSecret, not both" -}}
{{- end -}}
{{- if and $r.metrics.enabled (not $r.metrics.existingSecret) -}}
{{- $problems = append $problems "metrics.existingSecret is required when metrics.enabled: a Secret with key token, the RTE's own METRICS_TOKEN" -}}
{{- end -}}
{{- if and $r.caBundle $r.existingCaConfigMap -}}
{{- $problems = append $problems "give a caBundle or an existingCaConfigMap, not both" -}}
{{- end -}}
{{- if $problems -}}
{{- fail (printf "remoteRte: %s" (join "; " $problems)) -}}
{{- end -}}
{{- include "entryway.ansibleForms.checkToken" (dict "where" "remoteRte" "token" $r.token) -}}
{{- end -}}

{{- define "entryway.ansibleForms.deprecation" -}}
AnsibleForms RTE database mode is deprecated (RTE 7.0-7.2, removed in 8.0.0): the RTE holds the database credentials. Move to the inbound sidecar (rte.mode: sidecar) or an outbound RemoteRte.
{{- end -}}

{{/* NOTES.txt lines for AnsibleForms and the remote RTE. */}}
{{- define "entryway.ansibleForms.notes" -}}
{{- if .Values.ansibleForms.enabled }}
AnsibleForms: http://{{ include "entryway.ansibleForms.name" (dict "root" . "part" "") }}.{{ .Release.Namespace }}.svc.cluster.local:8000 (RTE mode: {{ .Values.ansibleForms.rte.mode }})
{{- if eq .Values.ansibleForms.rte.mode "database" }}
WARNING: {{ include "entryway.ansibleForms.deprecation" . }}
{{- end }}
{{- end }}
{{- if .Values.remoteRte.enabled }}
Outbound RTE: {{ .Values.remoteRte.replicas }} replica(s) dialing {{ .Values.remoteRte.appUrl }}
{{- end }}
{{- end -}}
