{{/*
prometheus-operator objects for a gateway, each off unless asked for (components/shared/monitoring.ts
makes the same). (dict "monitoring" <values' monitoring> "kind" "ServiceMonitor"|"PodMonitor"
"name" "namespace" "labels" <YAML> "selector" <YAML> "port" "path" "group" "rules" <YAML list>)
*/}}
{{- define "entryway.monitoring" -}}
{{- $m := .monitoring | default dict -}}
{{- $labels := fromYaml .labels -}}
{{- $scrape := $m.serviceMonitor | default dict -}}
{{- if $scrape.enabled }}
---
apiVersion: monitoring.coreos.com/v1
kind: {{ .kind }}
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
  labels:
    {{- merge (deepCopy ($scrape.labels | default dict)) $labels | toYaml | nindent 4 }}
spec:
  selector:
    matchLabels:
      {{- .selector | nindent 6 }}
  {{ if eq .kind "ServiceMonitor" }}endpoints{{ else }}podMetricsEndpoints{{ end }}:
    - port: {{ .port }}
      path: {{ .path }}
      {{- with $scrape.interval }}
      interval: {{ . }}
      {{- end }}
{{- end }}
{{- $rule := $m.prometheusRule | default dict -}}
{{- if $rule.enabled }}
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
  labels:
    {{- merge (deepCopy ($rule.labels | default dict)) $labels | toYaml | nindent 4 }}
spec:
  groups:
    - name: {{ .group }}
      rules:
        {{- .rules | nindent 8 }}
{{- end }}
{{- end -}}
