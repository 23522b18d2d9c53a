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
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { createMetrics } from "../../gateway/src/metrics";
import { repoRoot } from "../harness/helm";
import { metricNames } from "../harness/promql";
import { realTool } from "../harness/realcp-tool";

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
    const envoyNames = expressions.flatMap(({ expr }) => metricNames(expr)).filter((n) => !n.startsWith("entryway_"));
    expect(envoyNames.length).toBeGreaterThan(0);
    for (const name of envoyNames) {
      expect(envoyStats, name).toMatch(
        new RegExp(`^${name}\\{cluster_name="${WORKSPACE_CLUSTER.replaceAll("|", "\\|")}"\\} `, "m"),
      );
    }
    // The dashboard's workspace matcher selects that label value (PromQL regexes are anchored).
    for (const { expr } of expressions.filter(({ expr }) => expr.includes("envoy_"))) {
      const matcher = /cluster_name=~"((?:[^"\\]|\\.)*)"/.exec(expr)?.[1];
      expect(matcher, expr).toBeDefined();
      const regex = new RegExp(`^(?:${matcher!.replace(/\\\\/g, "\\")})$`);
      expect(regex.test(WORKSPACE_CLUSTER), expr).toBe(true);
      expect(regex.test("xds-grpc"), expr).toBe(false);
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
