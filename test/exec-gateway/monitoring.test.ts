/**
 * The Grafana dashboard (charts/entryway/files/grafana/entryway.json) reads only metrics that
 * exist: the exec gateway's, by their names in the gateway's own registry (gateway/src/metrics.ts,
 * with prom-client's _bucket/_sum/_count series of a histogram), and the CONNECT gateway's Envoy's,
 * by the names a real Envoy 1.40 (scripts/realcp) writes on /stats/prometheus for a workspace's
 * cluster as Istio configures it: the cluster `outbound|22||<workspace Service>` with the alternate
 * stat name `<cluster>;` (istio pilot/pkg/networking/core/cluster_builder.go, buildCluster:
 * `AltStatName = util.DelimitedStatsPrefix(name)`), and Istio's bootstrap tag `cluster_name` taken
 * by the regex `^cluster(\.(.+);)` (istio tools/packaging/common/envoy_bootstrap.json, stats_tags,
 * with use_all_default_tags false). Envoy's cluster statistics: envoyproxy.io, Configuration
 * reference, Cluster manager, Statistics (upstream_cx_total, upstream_cx_active,
 * upstream_cx_connect_fail, upstream_cx_rx_bytes_total, upstream_cx_tx_bytes_total).
 *
 * The prometheus-operator objects (execGateway.monitoring, connectGateway.monitoring; the chart's
 * ci/monitoring.yaml and its stack twin test/parity/monitoring.stack.yaml, equal by test/parity):
 * every alert reads those same metrics (or Prometheus's own `up`), each monitor scrapes a port its
 * gateway really names, both validate against the operator's schemas (kubernetes-models and its own
 * CRDs from scripts/realcp), and nothing is made unless asked for.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Ajv from "ajv";
import { parse, parseAllDocuments, stringify } from "yaml";
import { createMetrics } from "../../gateway/src/metrics";
import { parseStackConfig, Stack } from "../../components/stack";
import { helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { metricNames } from "../../testkit/harness/promql";
import { render } from "../../testkit/harness/pulumi";
import { realTool } from "../../testkit/harness/realcp-tool";
import { assertValidObjects, type ObjectLike } from "../../testkit/harness/validate";

const DASHBOARD = path.join(repoRoot, "charts/entryway/files/grafana/entryway.json");
const WORKSPACE_CLUSTER = "outbound|22||entryway-ws-alice.team-a.svc.cluster.local";

interface Panel {
  title: string;
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as { panels: Panel[] };
const expressions = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

/** Every series name the gateway's registry exposes: a histogram's as Prometheus writes them. */
async function gatewaySeries(): Promise<Set<string>> {
  const metrics = await createMetrics().registry.getMetricsAsJSON();
  return new Set(
    metrics.flatMap((m) =>
      String(m.type) === "histogram" ? ["_bucket", "_sum", "_count"].map((s) => `${m.name}${s}`) : [m.name],
    ),
  );
}

/** /stats/prometheus of a real Envoy with one workspace cluster named as Istio names it. */
let envoyStats = "";
const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-envoy-stats-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

beforeAll(async () => {
  const bootstrap = {
    admin: { address: { socket_address: { address: "127.0.0.1", port_value: 0 } } },
    stats_config: {
      use_all_default_tags: false,
      stats_tags: [{ tag_name: "cluster_name", regex: "^cluster(\\.(.+);)" }],
    },
    static_resources: {
      clusters: [
        {
          name: WORKSPACE_CLUSTER,
          alt_stat_name: `${WORKSPACE_CLUSTER};`,
          type: "STATIC",
          connect_timeout: "1s",
          load_assignment: {
            cluster_name: WORKSPACE_CLUSTER,
            endpoints: [
              {
                lb_endpoints: [{ endpoint: { address: { socket_address: { address: "127.0.0.1", port_value: 9 } } } }],
              },
            ],
          },
        },
      ],
    },
  };
  writeFileSync(path.join(scratch, "envoy.yaml"), stringify(bootstrap));
  const adminFile = path.join(scratch, "admin-address");
  const envoy = spawn(
    path.join(realTool("envoy"), "envoy"),
    [
      "--config-path",
      path.join(scratch, "envoy.yaml"),
      "--admin-address-path",
      adminFile,
      "--disable-hot-restart",
      "--concurrency",
      "1",
      "-l",
      "error",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  envoy.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  try {
    for (let i = 0; !existsSync(adminFile) || readFileSync(adminFile, "utf8").trim() === ""; i++) {
      if (envoy.exitCode !== null || i > 300) throw new Error(`envoy did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const admin = readFileSync(adminFile, "utf8").trim();
    envoyStats = await (await fetch(`http://${admin}/stats/prometheus`)).text();
  } finally {
    envoy.kill();
  }
}, 60_000);

/**
 * The Envoy metrics of `exprs` are series a real Envoy writes for an Istio workspace cluster, with
 * its cluster_name label, and each expression's workspace matcher selects that cluster only.
 */
function expectEnvoyWorkspaceSeries(exprs: string[]): void {
  const envoyNames = exprs.flatMap((expr) => metricNames(expr)).filter((n) => !n.startsWith("entryway_"));
  expect(envoyNames.length).toBeGreaterThan(0);
  for (const name of envoyNames) {
    expect(envoyStats, name).toMatch(
      new RegExp(`^${name}\\{cluster_name="${WORKSPACE_CLUSTER.replaceAll("|", "\\|")}"\\} `, "m"),
    );
  }
  // The workspace matcher selects that label value (PromQL regexes are anchored).
  for (const expr of exprs.filter((e) => e.includes("envoy_"))) {
    const matcher = /cluster_name=~"((?:[^"\\]|\\.)*)"/.exec(expr)?.[1];
    expect(matcher, expr).toBeDefined();
    const regex = new RegExp(`^(?:${matcher!.replace(/\\\\/g, "\\")})$`);
    expect(regex.test(WORKSPACE_CLUSTER), expr).toBe(true);
    expect(regex.test("xds-grpc"), expr).toBe(false);
  }
}

describe("Grafana dashboard", () => {
  it("shows sessions, denials, bytes, errors and latency of the exec gateway, each from a metric its registry exports", async () => {
    const series = await gatewaySeries();
    const used = expressions.flatMap(({ expr }) => metricNames(expr)).filter((n) => n.startsWith("entryway_"));
    expect(used.filter((name) => !series.has(name))).toEqual([]);
    expect(new Set(used)).toEqual(
      new Set([
        "entryway_sessions_active",
        "entryway_sessions_total",
        "entryway_auth_denials_total",
        "entryway_bytes_total",
        "entryway_backend_errors_total",
        "entryway_recording_failures_total",
        "entryway_stdout_lines_dropped_total",
        "entryway_shells_reaped_total",
        "entryway_session_setup_seconds_bucket",
        "entryway_recording_write_seconds_bucket",
      ]),
    );
  });

  it("shows the CONNECT gateway's connections per workspace from the names and label a real Envoy writes for an Istio workspace cluster", () => {
    expectEnvoyWorkspaceSeries(expressions.map(({ expr }) => expr));
  });
});

const SCENARIO = path.join(repoRoot, "charts/entryway/ci/monitoring.yaml");
const STACK = path.join(repoRoot, "test/parity/monitoring.stack.yaml");
const MONITORING_API = "monitoring.coreos.com/v1";

async function renderStack(config: unknown): Promise<ObjectLike[]> {
  const { manifests } = await render(() => new Stack("entryway", parseStackConfig(config, "monitoring test")));
  return manifests as ObjectLike[];
}

type Rule = { alert: string; expr: string };
const rulesOf = (objects: ObjectLike[], namespace: string): Rule[] =>
  objects
    .filter((o) => o.kind === "PrometheusRule" && o.metadata?.namespace === namespace)
    .flatMap((o) => (o as unknown as { spec: { groups: { rules: Rule[] }[] } }).spec.groups.flatMap((g) => g.rules));

describe("prometheus-operator objects (execGateway.monitoring, connectGateway.monitoring)", () => {
  const helm = helmBinaries()[0];
  const fromHelm = helmTemplate(helm, path.join(repoRoot, "charts/entryway"), { valuesFiles: [SCENARIO] });

  it("alert on the exec gateway's own metrics (and Prometheus's up), scoped to its Service's job", async () => {
    const series = await gatewaySeries();
    const rules = rulesOf(fromHelm, "entryway");
    expect(rules.map((r) => r.alert).sort()).toEqual([
      "EntrywayExecGatewayDenialsSurge",
      "EntrywayExecGatewayDown",
      "EntrywayExecGatewayRecordingFailures",
      "EntrywayExecGatewaySessionSetupErrors",
    ]);
    const used = rules.flatMap((r) => metricNames(r.expr));
    // `up`: Prometheus's own series per scraped target (prometheus.io, Jobs and instances).
    expect(used.filter((name) => name !== "up" && !series.has(name))).toEqual([]);
    expect(new Set(used)).toEqual(
      new Set([
        "up",
        "entryway_auth_denials_total",
        "entryway_backend_errors_total",
        "entryway_recording_failures_total",
      ]),
    );
    // A ServiceMonitor's job label is its Service's name: the Service the monitor selects.
    const service = fromHelm.find((o) => o.kind === "Service" && o.metadata?.name === "entryway-exec-gateway");
    for (const { expr } of rules) expect(expr).toContain(`job="${service!.metadata!.name}", namespace="entryway"`);
  });

  it("alert on the CONNECT gateway's upstream connect failures from the names a real Envoy writes for a workspace cluster", () => {
    const rules = rulesOf(fromHelm, "entryway-connect");
    expect(rules.map((r) => r.alert)).toEqual(["EntrywayConnectGatewayUpstreamConnectFailures"]);
    expectEnvoyWorkspaceSeries(rules.map((r) => r.expr));
  });

  it("scrape ports the gateways really name: the exec gateway's Service port metrics, the CONNECT gateway pods' http-envoy-prom", () => {
    type Monitor = {
      spec: {
        selector: { matchLabels: Record<string, string> };
        endpoints?: { port: string; path: string; interval?: string }[];
        podMetricsEndpoints?: { port: string; path: string }[];
      };
    };
    const selects = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
      Object.entries(selector).every(([k, v]) => labels[k] === v);
    const serviceMonitor = fromHelm.find((o) => o.kind === "ServiceMonitor") as unknown as Monitor & ObjectLike;
    expect(serviceMonitor.metadata?.labels?.release).toBe("kube-prometheus-stack");
    expect(serviceMonitor.spec.endpoints).toEqual([{ port: "metrics", path: "/metrics", interval: "30s" }]);
    const services = fromHelm.filter(
      (o) =>
        o.kind === "Service" &&
        o.metadata?.namespace === "entryway" &&
        selects(serviceMonitor.spec.selector.matchLabels, o.metadata?.labels),
    ) as unknown as { spec: { ports: { name: string; port: number }[] } }[];
    expect(services.length).toBe(1);
    expect(services[0].spec.ports).toContainEqual(expect.objectContaining({ name: "metrics", port: 9090 }));

    const podMonitor = fromHelm.find((o) => o.kind === "PodMonitor") as unknown as Monitor & ObjectLike;
    expect(podMonitor.metadata?.namespace).toBe("entryway-connect");
    expect(podMonitor.spec.podMetricsEndpoints).toEqual([{ port: "http-envoy-prom", path: "/stats/prometheus" }]);
    const deployments = fromHelm.filter(
      (o) => o.kind === "Deployment" && o.metadata?.namespace === "entryway-connect",
    ) as unknown as {
      spec: { template: { metadata: { labels: Record<string, string> } }; containers: never };
    }[];
    const pods = deployments
      .map(
        (d) =>
          d.spec.template as unknown as {
            metadata: { labels: Record<string, string> };
            spec: { containers: { ports?: { name: string; containerPort: number }[] }[] };
          },
      )
      .filter((t) => selects(podMonitor.spec.selector.matchLabels, t.metadata.labels));
    expect(pods.length).toBe(1);
    expect(pods[0].spec.containers.flatMap((c) => c.ports ?? [])).toContainEqual({
      name: "http-envoy-prom",
      containerPort: 15090,
      protocol: "TCP",
    });
  });

  it("validate against the prometheus-operator schemas, from the chart and from the components", async () => {
    const fromPulumi = await renderStack(parse(readFileSync(STACK, "utf8")));
    for (const objects of [fromHelm, fromPulumi]) {
      const monitoring = objects.filter((o) => o.apiVersion === MONITORING_API);
      expect(monitoring.map((o) => o.kind).sort()).toEqual([
        "PodMonitor",
        "PrometheusRule",
        "PrometheusRule",
        "ServiceMonitor",
      ]);
      await assertValidObjects(monitoring);
    }
  });

  it("validate against the openAPIV3Schema of prometheus-operator v0.85.0's own CRDs (realcp tool crds)", async () => {
    // The CRDs exactly as the real API server gets them (scripts/realcp/crds/recipe.sh); the API
    // server's structural-schema keywords (x-kubernetes-*) are annotations here.
    const share = path.join(path.dirname(realTool("crds")), "share", "prometheus-operator.yaml");
    type Crd = {
      spec: { names: { kind: string }; versions: { name: string; schema: { openAPIV3Schema: object } }[] };
    };
    const crds = parseAllDocuments(readFileSync(share, "utf8")).map((d) => d.toJS() as Crd);
    // The API server reads `pattern` as a Go (RE2) regexp; the only RE2-only syntax in these CRDs is
    // a leading `(?i)` (after `^`), which JavaScript spells as the i flag.
    const re2 = (pattern: string, flags = "") => {
      const insensitive = /^(\^?)\(\?i\)/.exec(pattern);
      return insensitive
        ? new RegExp(insensitive[1] + pattern.slice(insensitive[0].length), `${flags}i`)
        : new RegExp(pattern, flags);
    };
    // `code` names the engine only for standalone code, which this test does not generate.
    const ajv = new Ajv({ strict: false, allErrors: true, code: { regExp: Object.assign(re2, { code: "re2" }) } });
    const fromPulumi = await renderStack(parse(readFileSync(STACK, "utf8")));
    for (const object of [...fromHelm, ...fromPulumi].filter((o) => o.apiVersion === MONITORING_API)) {
      const crd = crds.find((c) => c.spec.names.kind === object.kind);
      expect(crd, object.kind).toBeDefined();
      const schema = crd!.spec.versions.find((v) => v.name === "v1")!.schema.openAPIV3Schema;
      const valid = ajv.validate(schema, object);
      expect(valid ? [] : ajv.errors, `${object.kind}/${object.metadata?.name}`).toEqual([]);
    }
    // The check can fail: a field of the wrong type is refused.
    const rule = fromHelm.find((o) => o.kind === "PrometheusRule")!;
    const broken = { ...rule, spec: { groups: [{ name: "g", rules: [{ alert: "A", expr: "up", for: 5 }] }] } };
    const ruleSchema = crds.find((c) => c.spec.names.kind === "PrometheusRule")!.spec.versions[0].schema
      .openAPIV3Schema;
    expect(ajv.validate(ruleSchema, broken)).toBe(false);
  });

  it("are made only when asked for: both gateways on, monitoring left out, render none", async () => {
    const withoutMonitoring = (scenario: Record<string, { monitoring?: unknown }>) => {
      for (const section of Object.values(scenario)) if (typeof section === "object") delete section.monitoring;
      return scenario;
    };
    const off = path.join(mkdtempSync(path.join(os.tmpdir(), "entryway-monitoring-off-")), "values.yaml");
    writeFileSync(off, stringify(withoutMonitoring(parse(readFileSync(SCENARIO, "utf8")))));
    const chartOff = helmTemplate(helm, path.join(repoRoot, "charts/entryway"), { valuesFiles: [off] });
    rmSync(path.dirname(off), { recursive: true, force: true });
    const stackOff = await renderStack(withoutMonitoring(parse(readFileSync(STACK, "utf8"))));
    for (const objects of [chartOff, stackOff]) {
      expect(objects.some((o) => o.kind === "Deployment")).toBe(true);
      expect(objects.filter((o) => o.apiVersion === MONITORING_API)).toEqual([]);
    }
  });
});

describe("metricNames", () => {
  it("keeps metric names and drops functions, label matchers, ranges, grouping and strings", () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le, step) (rate(a_seconds_bucket{ns=~"x|y", b="rate(c)"}[5m]))) / on (pod) group_left (node) b_total > bool 0 or absent(c)',
      ),
    ).toEqual(["a_seconds_bucket", "b_total", "c"]);
  });
});
