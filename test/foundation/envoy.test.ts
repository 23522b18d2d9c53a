import { describe, expect, it } from "vitest";
import { checkEnvoyFilter } from "../../testkit/harness/envoy";

const HCM = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";

/** An EnvoyFilter named `name` with the one config patch given. */
function envoyFilter(name: string, configPatch: Record<string, unknown>) {
  return {
    apiVersion: "networking.istio.io/v1alpha3",
    kind: "EnvoyFilter",
    metadata: { name },
    spec: { configPatches: [configPatch] },
  };
}

/** The listener patch at the gateway's port 2222: `value` merged into its HTTP connection manager. */
function connectFilter(value: Record<string, unknown>) {
  return envoyFilter("connect", {
    applyTo: "NETWORK_FILTER",
    match: {
      context: "GATEWAY",
      listener: {
        portNumber: 2222,
        filterChain: { filter: { name: "envoy.filters.network.http_connection_manager" } },
      },
    },
    patch: { operation: "MERGE", value },
  });
}

/** A workspace's virtual host at the gateway's port 2222, its CONNECT route going to `route`. */
function virtualHost(route: Record<string, unknown>) {
  return envoyFilter("ws", {
    applyTo: "VIRTUAL_HOST",
    match: { context: "GATEWAY", routeConfiguration: { portNumber: 2222, name: "http.2222" } },
    patch: {
      operation: "ADD",
      value: {
        name: "ws",
        domains: ["ws.dev.svc.cluster.local:22"],
        routes: [{ match: { connect_matcher: {} }, route }],
      },
    },
  });
}

describe("Envoy payloads checked against Envoy's own protos", () => {
  it("accepts the CONNECT listener patch of the design", async () => {
    const filter = connectFilter({
      typed_config: {
        "@type": HCM,
        upgrade_configs: [{ upgrade_type: "CONNECT" }],
        http_protocol_options: { accept_http_10: true },
        http2_protocol_options: { allow_connect: true },
        stream_idle_timeout: "0s",
      },
    });
    await expect(checkEnvoyFilter(filter)).resolves.toEqual([]);
  });

  it("accepts a workspace VIRTUAL_HOST with a static cluster and no timeout", async () => {
    const filter = virtualHost({
      cluster: "outbound|22||ws.dev.svc.cluster.local",
      timeout: "0s",
      idle_timeout: "3600s",
      upgrade_configs: [{ upgrade_type: "CONNECT", connect_config: {} }],
    });
    await expect(checkEnvoyFilter(filter)).resolves.toEqual([]);
  });

  it("rejects a misspelt Envoy field (clustr)", async () => {
    const errors = await checkEnvoyFilter(virtualHost({ clustr: "outbound|22||ws.dev.svc.cluster.local" }));
    expect(errors).toEqual([
      'EnvoyFilter/ws.configPatches[0].patch.value.routes[0].route.clustr: envoy.config.route.v3.RouteAction has no field "clustr"',
    ]);
  });

  it("rejects wrong types inside an Any, bad durations and two members of one oneof", async () => {
    const errors = await checkEnvoyFilter(
      connectFilter({
        typed_config: {
          "@type": HCM,
          http_protocol_options: { accept_http_10: "yes" },
          stream_idle_timeout: "10 minutes",
        },
      }),
    );
    expect(errors.join("\n")).toMatch(/accept_http_10: expected bool/);
    expect(errors.join("\n")).toMatch(/stream_idle_timeout: not a valid google.protobuf.Duration/);
    const twoTargets = await checkEnvoyFilter(virtualHost({ cluster: "a", cluster_header: "x" }));
    expect(twoTargets.join("\n")).toMatch(/oneof cluster_specifier already set/);
  });

  it("rejects an Any with an unknown type", async () => {
    await expect(
      checkEnvoyFilter(connectFilter({ typed_config: { "@type": "type.googleapis.com/envoy.Nope" } })),
    ).rejects.toThrow(/no such type/);
  });
});
