/**
 * prometheus-operator objects for a gateway: a ServiceMonitor or PodMonitor that scrapes it and a
 * PrometheusRule with its alerts, each off unless asked for (they need the operator's CRDs,
 * monitoring.coreos.com/v1). The chart's templates (exec-gateway/monitoring.yaml,
 * ssh/connect-gateway.yaml) write the same objects; test/parity keeps them equal.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";

/** A scrape of the gateway's metrics by prometheus-operator. */
export interface ScrapeMonitorArgs {
  /** Make the ServiceMonitor (exec gateway) or PodMonitor (connect gateway); needs the prometheus-operator CRDs. */
  enabled?: boolean;
  /** Labels on the monitor, e.g. the release label a Prometheus's serviceMonitorSelector / podMonitorSelector picks. */
  labels?: Record<string, string>;
  /**
   * The scrape interval (default: the Prometheus's own), a Prometheus duration such as 30s.
   * @pattern ^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$
   */
  interval?: string;
}

/** The gateway's alerts as a PrometheusRule. */
export interface PrometheusRuleArgs {
  /** Make the PrometheusRule; needs the prometheus-operator CRDs. */
  enabled?: boolean;
  /** Labels on the rule, e.g. the release label a Prometheus's ruleSelector picks. */
  labels?: Record<string, string>;
}

/** prometheus-operator objects for a gateway (off by default). */
export interface MonitoringArgs {
  /** Scrape the gateway's metrics: a ServiceMonitor for the exec gateway, a PodMonitor for the connect gateway's Envoy. */
  serviceMonitor?: ScrapeMonitorArgs;
  /** Alerts on those metrics (docs/monitoring.md lists them). */
  prometheusRule?: PrometheusRuleArgs;
}

/** One alerting rule of a PrometheusRule (monitoring.coreos.com/v1 Rule). @internal */
export interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: "warning" | "critical" };
  annotations: { summary: string; description: string };
}

/**
 * The exec gateway's alerts. `job` is its Service's name (a ServiceMonitor's default job label),
 * `namespace` its namespace; `up` is Prometheus's own series per target (prometheus.io, Jobs and
 * instances, "Automatically generated labels and time series"). @internal
 */
export function execGatewayAlerts(job: string, namespace: string): AlertRule[] {
  const sel = `job="${job}", namespace="${namespace}"`;
  return [
    {
      alert: "EntrywayExecGatewayDown",
      expr: `sum(up{${sel}}) == 0 or absent(up{${sel}})`,
      for: "5m",
      labels: { severity: "critical" },
      annotations: {
        summary: "No exec gateway replica answers",
        description: `No replica of ${namespace}/${job} has served /metrics for 5 minutes: nobody can open a shell.`,
      },
    },
    {
      alert: "EntrywayExecGatewayDenialsSurge",
      expr: `sum by (reason) (rate(entryway_auth_denials_total{${sel}}[5m])) > 0.2`,
      for: "10m",
      labels: { severity: "warning" },
      annotations: {
        summary: "Many refused sessions",
        description: `${namespace}/${job} refuses more than 12 sessions a minute for reason {{ $labels.reason }}.`,
      },
    },
    {
      alert: "EntrywayExecGatewaySessionSetupErrors",
      expr: `sum by (operation) (rate(entryway_backend_errors_total{${sel}}[5m])) > 0`,
      for: "10m",
      labels: { severity: "warning" },
      annotations: {
        summary: "Sessions fail to start",
        description: `${namespace}/${job}: the backend fails at {{ $labels.operation }} for 10 minutes.`,
      },
    },
    {
      alert: "EntrywayExecGatewayRecordingFailures",
      expr: `sum by (sink, stage) (increase(entryway_recording_failures_total{${sel}}[10m])) > 0`,
      for: "0m",
      labels: { severity: "critical" },
      annotations: {
        summary: "Session recordings fail",
        description: `${namespace}/${job}: recording writes to {{ $labels.sink }} failed at {{ $labels.stage }}; sessions are refused or ended.`,
      },
    },
  ];
}

/**
 * The connect gateway's alerts, on its Envoy's cluster statistics for the workspaces' clusters
 * (named `outbound|22||<workspace>`, the dashboard's matcher; docs/monitoring.md). @internal
 */
export function connectGatewayAlerts(namespace: string): AlertRule[] {
  return [
    {
      alert: "EntrywayConnectGatewayUpstreamConnectFailures",
      expr: `sum by (cluster_name) (rate(envoy_cluster_upstream_cx_connect_fail{namespace="${namespace}", cluster_name=~"outbound\\\\|22\\\\|\\\\|.*"}[5m])) > 0`,
      for: "10m",
      labels: { severity: "warning" },
      annotations: {
        summary: "The CONNECT gateway cannot reach a workspace",
        description: `The CONNECT gateway in ${namespace} fails to connect to {{ $labels.cluster_name }} for 10 minutes.`,
      },
    },
  ];
}

/** The PrometheusRule of `rules` in one group named `group`, when asked for. @internal */
export function prometheusRule(
  resourceName: string,
  args: PrometheusRuleArgs | undefined,
  metadata: { name: string; namespace: pulumi.Input<string>; labels: Record<string, string> },
  group: string,
  rules: pulumi.Input<AlertRule[]>,
  opts: pulumi.CustomResourceOptions,
): void {
  if (!args?.enabled) return;
  new k8s.apiextensions.CustomResource(
    resourceName,
    {
      apiVersion: "monitoring.coreos.com/v1",
      kind: "PrometheusRule",
      metadata: { ...metadata, labels: { ...metadata.labels, ...args.labels } },
      spec: { groups: [{ name: group, rules }] },
    },
    opts,
  );
}

/** A ServiceMonitor or PodMonitor scraping `endpoint`, when asked for. @internal */
export function scrapeMonitor(
  resourceName: string,
  kind: "ServiceMonitor" | "PodMonitor",
  args: ScrapeMonitorArgs | undefined,
  metadata: { name: string; namespace: pulumi.Input<string>; labels: Record<string, string> },
  selector: Record<string, string>,
  endpoint: { port: string; path: string },
  opts: pulumi.CustomResourceOptions,
): void {
  if (!args?.enabled) return;
  const endpoints = [{ ...endpoint, ...(args.interval ? { interval: args.interval } : {}) }];
  new k8s.apiextensions.CustomResource(
    resourceName,
    {
      apiVersion: "monitoring.coreos.com/v1",
      kind,
      metadata: { ...metadata, labels: { ...metadata.labels, ...args.labels } },
      spec: {
        selector: { matchLabels: selector },
        ...(kind === "ServiceMonitor" ? { endpoints } : { podMetricsEndpoints: endpoints }),
      },
    },
    opts,
  );
}
