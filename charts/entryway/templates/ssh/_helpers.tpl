{{/*
SSH workspaces behind a dedicated Istio CONNECT port: names and checks shared by
connect-gateway.yaml and workspaces.yaml. They mirror components/ssh/ (connect-gateway.ts,
ssh-workspace.ts): the same object names, labels and specs.
*/}}

{{/* The gateway's object name. */}}
{{- define "entryway.ssh.gatewayName" -}}
{{- include "entryway.name" (dict "root" . "part" "connect-gateway") -}}
{{- end -}}

{{/*
The gateway's own namespace (default <release namespace>-connect): it holds the gateway, the
workspaces' route patches and the TLS Secret, nothing else.
*/}}
{{- define "entryway.ssh.namespace" -}}
{{- default (printf "%s-connect" .Release.Namespace) .Values.connectGateway.namespace -}}
{{- end -}}

{{/* The gateway pods' selector labels. */}}
{{- define "entryway.ssh.gatewaySelector" -}}
{{- include "entryway.selectorLabels" (dict "root" . "name" "connect-gateway") -}}
{{- end -}}

{{/*
The Envoy route configuration Istio gives the port (pilot/pkg/model gateway.go,
gatewayRDSRouteName): http.<port>, or https.<port>.<portName>.<gatewayName>.<namespace> with TLS.
*/}}
{{- define "entryway.ssh.routeConfigurationName" -}}
{{- $g := .Values.connectGateway -}}
{{- if $g.tls.enabled -}}
{{- printf "https.%d.connect.%s.%s" (int $g.port) (include "entryway.ssh.gatewayName" .) (include "entryway.ssh.namespace" .) -}}
{{- else -}}
{{- printf "http.%d" (int $g.port) -}}
{{- end -}}
{{- end -}}

{{/* A workspace's object name. (dict "root" $ "ws" <workspace>) */}}
{{- define "entryway.ssh.workspaceName" -}}
{{- include "entryway.capName" (dict "parts" (list (include "entryway.name" (dict "root" .root "part" (printf "ws-%s" .ws.name)))) "max" 52) -}}
{{- end -}}

{{/* Checks the section; fails with one clear message. */}}
{{- define "entryway.ssh.validate" -}}
{{- $g := .Values.connectGateway -}}
{{- $connect := include "entryway.ssh.namespace" . -}}
{{- if $g.enabled -}}
{{- if gt (len $connect) 63 -}}
{{- fail (printf "the connect gateway's namespace %s is longer than 63 characters; set connectGateway.namespace" $connect) -}}
{{- end -}}
{{- if eq $connect .Release.Namespace -}}
{{- fail (printf "connectGateway.namespace must differ from the release namespace %s: the internet-facing gateway may read every Secret in its own" $connect) -}}
{{- end -}}
{{- if has (int $g.port) (list 80 443 15000 15001 15004 15006 15008 15009 15020 15021 15053 15090) -}}
{{- fail (printf "connectGateway.port %d is reserved (80/443 carry web traffic; 150xx are Istio's); pick a dedicated port such as 2222" (int $g.port)) -}}
{{- end -}}
{{- if and $g.nodePort (eq $g.serviceType "ClusterIP") -}}
{{- fail "connectGateway.nodePort needs serviceType NodePort or LoadBalancer" -}}
{{- end -}}
{{- if and $g.tls.enabled (not $g.tls.credentialName) -}}
{{- fail (printf "connectGateway.tls.credentialName must name a Secret in namespace %s" $connect) -}}
{{- end -}}
{{- /* The Gateway server's host with TLS: Istio refuses one without a dot (components/ssh/validate.ts). */ -}}
{{- if and $g.tls.enabled $g.hostname (not (contains "." $g.hostname)) -}}
{{- fail (printf "connectGateway.hostname %q must be a fully qualified name with tls (Istio refuses a Gateway host without a dot)" $g.hostname) -}}
{{- end -}}
{{- if and $g.autoscaling.enabled (gt (int $g.autoscaling.minReplicas) (int $g.autoscaling.maxReplicas)) -}}
{{- fail "connectGateway.autoscaling needs 1 <= minReplicas <= maxReplicas" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.workspaces (not $g.enabled) -}}
{{- fail "workspaces need connectGateway.enabled: true (they register on its CONNECT port)" -}}
{{- end -}}
{{- $domains := dict -}}
{{- range .Values.workspaces -}}
{{- $name := include "entryway.ssh.workspaceName" (dict "root" $ "ws" .) -}}
{{- /* The virtual host's domain: the Service's name without the port (see workspaces.yaml). */ -}}
{{- $domain := printf "%s.%s.svc.cluster.local" $name (default $.Release.Namespace .namespace) -}}
{{- if hasKey $domains $domain -}}
{{- fail (printf "workspaces: domain %s is already routed by workspace %s on the connect gateway; Envoy would reject every route on port %d" $domain (get $domains $domain) (int $g.port)) -}}
{{- end -}}
{{- $_ := set $domains $domain $name -}}
{{- if eq (default $.Release.Namespace .namespace) $connect -}}
{{- fail (printf "workspaces[%s]: namespace %s is the connect gateway's; a workspace (and its keys Secret) runs in another namespace, since the internet-facing gateway may read every Secret in its own" .name $connect) -}}
{{- end -}}
{{- if eq (and (hasKey . "authorizedKeys") (gt (len (default list .authorizedKeys)) 0)) (hasKey . "authorizedKeysSecret") -}}
{{- fail (printf "workspaces[%s]: give exactly one of authorizedKeys (non-empty) and authorizedKeysSecret" .name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
