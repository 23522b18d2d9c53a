/**
 * The Istio gateway model (istio-gateway-model.ts) on the chart's rendered SSH scenarios: the
 * route configuration and listener Istio would build, and the answers Envoy would give. It must
 * catch the mistakes it exists for: the old `<fqdn>:22` domain (404 on a real gateway), duplicate
 * domains (Envoy rejects the whole route configuration), and a gateway that has no cluster for
 * the workspace (503 NC).
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import type { ObjectLike } from "../../testkit/harness/validate";
import { buildGatewayEnvoy, decide, type GatewayModelOptions } from "./istio-gateway-model";

const chart = path.join(repoRoot, "charts/entryway");
const render = (scenario: string) =>
  helmTemplate(helmBinaries()[0], chart, { valuesFiles: [path.join(chart, "ci", `${scenario}.yaml`)] });
const alice = "entryway-ws-alice.entryway.svc.cluster.local";
const bob = "entryway-ws-bob.team-b.svc.cluster.local";
const connect = (authority: string, httpVersion: "1.0" | "1.1" = "1.1") => ({
  method: "CONNECT",
  authority,
  httpVersion,
});
const envoyFor = (objects: ObjectLike[], options: Omit<GatewayModelOptions, "objects"> = {}) =>
  buildGatewayEnvoy({ objects, ...options });

type Filter = ObjectLike & {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { configPatches: { patch: { value: { domains: string[]; routes: { match: unknown }[] } } }[] };
};
const routeFilter = (objects: ObjectLike[], workspace: string) =>
  objects.find((o) => o.kind === "EnvoyFilter" && o.metadata?.name === `entryway-ws-${workspace}-route`) as Filter;

describe("the model of Istio's gateway, from the rendered chart", () => {
  const objects = render("ssh-one-workspace");

  it("builds the route configuration as Istio does, with the workspace's virtual host added after blackhole", () => {
    const envoy = envoyFor(objects);
    expect(envoy.rejected).toBeUndefined();
    expect(envoy.routeConfig.name).toBe("http.2222");
    expect(envoy.routeConfig.ignore_port_in_host_matching).toBe(true);
    expect(envoy.routeConfig.virtual_hosts.map((v) => [v.name, v.domains])).toEqual([
      ["blackhole:2222", ["*"]],
      [`entryway-ws-alice.entryway`, [alice]],
    ]);
    // The listener MERGE appended CONNECT to Istio's websocket upgrade and turned on HTTP/1.0.
    expect(envoy.connectionManager.upgrade_configs).toEqual([
      { upgrade_type: "websocket" },
      { upgrade_type: "CONNECT" },
    ]);
    expect(envoy.connectionManager.http_protocol_options).toEqual({ accept_http_10: true });
    expect(envoy.connectionManager.rds).toEqual({ route_config_name: "http.2222" });
    expect([...envoy.clusters]).toContain(`outbound|22||${alice}`);
  });

  it("tunnels CONNECT <fqdn>:22 (HTTP/1.1 and 1.0) and answers 404 to anything else", () => {
    const envoy = envoyFor(objects);
    expect(decide(envoy, connect(`${alice}:22`))).toEqual({
      status: 200,
      details: "via_upstream",
      cluster: `outbound|22||${alice}`,
    });
    expect(decide(envoy, connect(`${alice.toUpperCase()}:22`)).status).toBe(404); // the :authority match is exact
    expect(decide(envoy, connect(`${alice}:22`, "1.0")).status).toBe(200);
    expect(decide(envoy, connect(`${alice}:2222`)).status).toBe(404);
    expect(decide(envoy, connect(alice)).status).toBe(404);
    expect(decide(envoy, connect("entryway-ws-mallory.entryway.svc.cluster.local:22")).status).toBe(404);
    expect(decide(envoy, connect("kubernetes.default.svc.cluster.local:443")).status).toBe(404);
    expect(decide(envoy, { method: "GET", authority: `${alice}:22`, path: "/", httpVersion: "1.1" }).status).toBe(404);
  });

  it("without the listener filter, HTTP/1.0 CONNECT gets 426 (Istio does not accept HTTP/1.0 by default)", () => {
    const envoy = envoyFor(objects.filter((o) => o.metadata?.name !== "entryway-connect-gateway-connect"));
    expect(decide(envoy, connect(`${alice}:22`, "1.0")).status).toBe(426);
  });

  it("CATCHES THE OLD FORM: a domain <fqdn>:22 never matches on Istio's gateway (404), though a router that keeps the port would route it", () => {
    const old = structuredClone(objects);
    const value = routeFilter(old, "alice").spec.configPatches[0].patch.value;
    value.domains = [`${alice}:22`];
    value.routes[0].match = { connect_matcher: {} };
    expect(decide(envoyFor(old), connect(`${alice}:22`))).toEqual({ status: 404, details: "route_not_found (NR)" });
    // What the earlier stand-ins did: match the authority with its port.
    expect(decide(envoyFor(old, { ignorePortInHostMatching: false }), connect(`${alice}:22`)).status).toBe(200);
  });

  it("CATCHES DUPLICATE DOMAINS: Envoy rejects the whole route configuration, so nothing is routed", () => {
    const copy = structuredClone(routeFilter(objects, "alice"));
    copy.metadata.name = "entryway-ws-alice-route-copy";
    const envoy = envoyFor([...objects, copy]);
    expect(envoy.rejected).toBe(
      `Only unique values for domains are permitted. Duplicate entry of domain ${alice} in route http.2222`,
    );
    expect(decide(envoy, connect(`${alice}:22`)).status).toBe(404);
  });

  it("with TLS, patches Istio's https route configuration and matches only the Gateway host's SNI", () => {
    const envoy = envoyFor(render("ssh-tls"));
    expect(envoy.routeConfig.name).toBe("https.2222.connect.entryway-connect-gateway.entryway-connect");
    expect(envoy.sniHosts).toEqual(["ssh.example.com"]);
    expect(decide(envoy, connect(`${alice}:22`)).status).toBe(200);
  });
});

describe("what else breaks on a real mesh, in the model", () => {
  const objects = render("ssh-several-workspaces");

  it("PILOT_FILTER_GATEWAY_CLUSTER_CONFIG: the referenced-services annotation gives the gateway the workspace clusters; without it, 503 NC", () => {
    expect(decide(envoyFor(objects, { filterGatewayClusterConfig: true }), connect(`${bob}:22`)).status).toBe(200);
    const bare = structuredClone(objects);
    for (const name of ["alice", "bob"]) delete routeFilter(bare, name).metadata.annotations;
    const envoy = envoyFor(bare, { filterGatewayClusterConfig: true });
    expect(decide(envoy, connect(`${bob}:22`))).toEqual({
      status: 503,
      details: "cluster_not_found (NC)",
      cluster: `outbound|22||${bob}`,
    });
    expect(decide(envoyFor(bare), connect(`${bob}:22`)).status).toBe(200); // Istio's default sends every cluster
  });

  it("a workspace namespace outside discoverySelectors gives 503 NC; a mesh exporting Services only to their own namespace does not, as each workspace Service is exported to the gateway's", () => {
    expect(decide(envoyFor(objects, { discoveredNamespaces: ["entryway"] }), connect(`${bob}:22`)).status).toBe(503);
    expect(decide(envoyFor(objects, { discoveredNamespaces: ["entryway"] }), connect(`${alice}:22`)).status).toBe(200);
    for (const workspace of [alice, bob])
      expect(decide(envoyFor(objects, { defaultServiceExportTo: ["."] }), connect(`${workspace}:22`)).status).toBe(200);
    // Without the annotation: every workspace lives outside the gateway's namespace, so "." hides it.
    const bare = structuredClone(objects);
    for (const service of bare.filter((o) => o.kind === "Service"))
      delete (service.metadata as { annotations?: unknown }).annotations;
    expect(decide(envoyFor(bare, { defaultServiceExportTo: ["."] }), connect(`${alice}:22`))).toMatchObject({
      status: 503,
      details: "cluster_not_found (NC)",
    });
  });
});
