/**
 * The CONNECT gateway's config as REAL istiod code generates it (test/ssh/istiod.ts,
 * scripts/realcp/istio), from the dev stack and every `ssh-*` chart scenario under Helm 4 and 3:
 * the listener, route configuration and clusters istiod sends the gateway proxy, what adding a
 * workspace changes, what istiod does with one domain claimed twice, that the model's istiod half
 * (istio-gateway-model.ts) equals the real output, and `istioctl analyze` of every rendering.
 *
 * The istio tool is built from its Go module on first use (scripts/realcp/build.sh, cached); a
 * build that fails fails this file, with a line naming the tool.
 */
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { helmBinaries } from "../../testkit/harness/helm";
import { realTool } from "../../testkit/harness/realcp";
import type { ObjectLike } from "../../testkit/harness/validate";
import { devStackConfig, renderScenario, renderStack, sshScenarios } from "./front-ends";
import {
  buildGatewayEnvoy,
  decide,
  type ConnectionManager,
  type GatewayEnvoy,
  type GatewayModelOptions,
} from "./istio-gateway-model";
import {
  analyzeWithWorkloads,
  gatewayEnvoyFromIstiod,
  istioctlAnalyze,
  istiodGatewayConfig,
  istioGateway,
  istioInstall,
  type AnalyzeMessage,
  type IstiodGatewayConfig,
  type IstiodOptions,
} from "./istiod";

type Obj = ObjectLike & {
  metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
};

interface FrontEnd {
  readonly name: string;
  readonly objects: ObjectLike[];
  /** Renders the same front end with one more workspace, `carol`. */
  readonly withAnotherWorkspace: () => Promise<ObjectLike[]>;
}

const CAROL = {
  name: "carol",
  authorizedKeys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIqHgiy0GmQ2fM0zVj8Ff7R2xjH5l6mQfC1tq7g0nW9e carol@laptop"],
};

async function frontEnds(): Promise<FrontEnd[]> {
  const dev = devStackConfig();
  const fronts: FrontEnd[] = [
    {
      name: "Pulumi.dev.yaml",
      objects: (await renderStack(dev, "Pulumi.dev.yaml")).manifests,
      withAnotherWorkspace: async () =>
        (
          await renderStack(
            { ...dev, workspaces: [...(dev.workspaces as unknown[]), CAROL] },
            "Pulumi.dev.yaml + carol",
          )
        ).manifests,
    },
  ];
  for (const helm of helmBinaries()) {
    for (const scenario of sshScenarios()) {
      const objects = renderScenario(helm, scenario);
      const count = objects.filter(isWorkspaceService).length;
      fronts.push({
        name: `helm ${helm.major} ${path.basename(scenario)}`,
        objects,
        withAnotherWorkspace: () =>
          Promise.resolve(
            renderScenario(helm, scenario, [
              `workspaces[${count}].name=carol`,
              `workspaces[${count}].authorizedKeys[0]=${CAROL.authorizedKeys[0]}`,
            ]),
          ),
      });
    }
  }
  return fronts;
}

const isWorkspaceService = (o: ObjectLike) =>
  o.kind === "Service" && o.metadata?.labels?.["app.kubernetes.io/name"] === "ssh-workspace";
const fqdnsOf = (objects: ObjectLike[]) =>
  (objects as Obj[])
    .filter(isWorkspaceService)
    .map((s) => `${s.metadata.name}.${s.metadata.namespace}.svc.cluster.local`);
const connectGatewayName = (objects: ObjectLike[]) =>
  (objects as Obj[]).find((o) => o.kind === "Gateway" && o.metadata.name.endsWith("-connect-gateway"))!.metadata.name;
const routeFilters = (objects: ObjectLike[]) =>
  (objects as Obj[]).filter(
    (o) => o.kind === "EnvoyFilter" && o.metadata.name.includes("-ws-") && o.metadata.name.endsWith("-route"),
  );

/** The Gateway server's port and the route configuration name Istio gives it (pilot/pkg/model/gateway.go, gatewayRDSRouteName). */
function serverOf(objects: ObjectLike[]) {
  const gateway = istioGateway(objects, connectGatewayName(objects));
  const [server] = (gateway.spec as { servers: { port: { number: number; name: string; protocol: string } }[] })
    .servers;
  const routeName =
    server.port.protocol === "HTTPS"
      ? `https.${server.port.number}.${server.port.name}.${gateway.metadata.name}.${gateway.metadata.namespace}`
      : `http.${server.port.number}`;
  return { port: server.port.number, routeName };
}

const istiod = (objects: ObjectLike[], options: Omit<IstiodOptions, "gatewayName"> = {}) =>
  istiodGatewayConfig(objects, { gatewayName: connectGatewayName(objects), ...options });
const envoyOf = (config: IstiodGatewayConfig, objects: ObjectLike[]) =>
  gatewayEnvoyFromIstiod(config, objects, connectGatewayName(objects));
const listenerOf = (config: IstiodGatewayConfig, port: number) =>
  config.listeners.find((l) => l.name === `0.0.0.0_${port}`)!;
const hcmOf = (config: IstiodGatewayConfig, port: number) => {
  const chains = (
    listenerOf(config, port).resource as {
      filter_chains: { filters: { name: string; typed_config: Record<string, unknown> }[] }[];
    }
  ).filter_chains;
  return chains[0].filters.find((f) => f.name === "envoy.filters.network.http_connection_manager")!
    .typed_config as unknown as ConnectionManager & Record<string, unknown>;
};
const withoutRouteAnnotations = (objects: ObjectLike[]) => {
  const bare = structuredClone(objects);
  for (const filter of routeFilters(bare)) delete filter.metadata.annotations;
  return bare;
};
const messageLines = (messages: AnalyzeMessage[]) =>
  messages.map((m) => `${m.code} ${m.level} ${m.origin}: ${m.message}`);
const connect = (authority: string) => ({ method: "CONNECT", authority, httpVersion: "1.1" as const });

/** istiod's log lines that are expected, each with its reason; any other line fails the test above. */
const ISTIOD_LOG_EXPECTED: { pattern: RegExp; why: string }[] = [
  {
    pattern: /^constructed http route config for route \S+ on port \d+ with no vhosts; Setting up a default 404 vhost$/,
    why: "the Gateway server's host is bound by no VirtualService, on purpose: istiod makes the blackhole virtual host the workspaces' are added beside (pilot/pkg/networking/core/gateway.go)",
  },
  {
    pattern: /^CRD \S+\.gateway\.networking\.k8s\.io expected to have a v[\d.]+ annotation, but none found; ignoring$/,
    why: "the fake cluster's Gateway API CRDs carry no bundle-version annotation (pilot/test/xds registers them bare); nothing of ours",
  },
  {
    pattern:
      /^error handling \S+, retrying \(retry count: \d+\): gatewayclasses\.gateway\.networking\.k8s\.io "istio[\w-]*" already exists$/,
    why: "istiod's own built-in GatewayClass controller racing its informer at start: it creates istio, istio-remote, ... when its cache does not show them yet, and an AlreadyExists (not the Conflict it forgives) is retried by its queue (pilot/pkg/config/kube/gatewaycommon/gatewayclass.go reconcileClass, pkg/kube/controllers/queue.go processNextItem); seen once on a loaded machine, no object of ours",
  },
  {
    pattern: /^sync failed$/,
    why: "istio's cache-sync waits say it only when their stop channel closes first (pkg/kube/client.go WaitForCacheSync, pkg/kube/krt/helpers.go waitForCacheSync return false on stop alone): the fake istiod torn down at the end of the run with an informer still syncing, seen once on a loaded machine; the config itself is what the tests below check",
  },
];

let fronts: FrontEnd[] = [];
const real = new Map<string, IstiodGatewayConfig>();

beforeAll(async () => {
  // Builds the istio tool on first use (about 35 minutes cold on 2 shared cores); a failure fails the file.
  realTool("istio");
  fronts = await frontEnds();
  for (const front of fronts) real.set(front.name, await istiod(front.objects));
}, 60 * 60_000);

describe("istiod's real output for the CONNECT gateway, on every front end", () => {
  it("covers the dev stack and every ssh-* chart scenario under Helm 4 and 3, generated by the pinned Istio commit", () => {
    expect(fronts.map((f) => f.name)).toEqual([
      "Pulumi.dev.yaml",
      ...["4", "3"].flatMap((major) =>
        ["ssh-one-workspace.yaml", "ssh-several-workspaces.yaml", "ssh-tls.yaml"].map((s) => `helm ${major} ${s}`),
      ),
    ]);
    for (const config of real.values())
      expect(config.istio).toEqual({ version: "1.31-dev+eed52ebb66ad", gitRevision: "eed52ebb66ad" });
  });

  it("istiod takes every Istio object of every rendering (its own validation), and logs nothing about them", () => {
    for (const front of fronts) {
      const config = real.get(front.name)!;
      expect(config.istioConfigs.length).toBe(front.objects.filter((o) => /\.istio\.io\//.test(o.apiVersion)).length);
      expect({
        front: front.name,
        log: config.istiodLog
          .map((l) => l.msg)
          .filter((msg) => !ISTIOD_LOG_EXPECTED.some((known) => known.pattern.test(msg))),
      }).toEqual({ front: front.name, log: [] });
    }
  });

  it("1. the listener on the dedicated port carries CONNECT as the listener EnvoyFilter intends (HTTP/1.1, 1.0 and 2, no stream idle timeout), over RDS", () => {
    for (const front of fronts) {
      const { port, routeName } = serverOf(front.objects);
      const config = real.get(front.name)!;
      const hcm = hcmOf(config, port);
      expect({ front: front.name, upgrades: hcm.upgrade_configs }).toEqual({
        front: front.name,
        upgrades: [{ upgrade_type: "websocket" }, { upgrade_type: "CONNECT" }],
      });
      expect(hcm.http_protocol_options).toEqual({ accept_http_10: true });
      expect(hcm.http2_protocol_options).toMatchObject({ allow_connect: true });
      expect(hcm.stream_idle_timeout).toBe("0s");
      expect(hcm.rds.route_config_name).toBe(routeName);
      expect("route_config" in hcm).toBe(false);
    }
  });

  it("1. the AuthorizationPolicy (which the model leaves out) becomes the listener's RBAC filter: ALLOW only CONNECT to the port, from allowedSourceRanges when given", () => {
    for (const front of fronts) {
      const { port } = serverOf(front.objects);
      const policy = (front.objects as Obj[]).find(
        (o) => o.kind === "AuthorizationPolicy" && o.metadata.name === connectGatewayName(front.objects),
      )!;
      const ranges = (
        (policy.spec as { rules: { from?: { source: { remoteIpBlocks: string[] } }[] }[] }).rules[0].from ?? []
      ).flatMap((f) => f.source.remoteIpBlocks);
      const rbac = (
        hcmOf(real.get(front.name)!, port).http_filters as {
          name: string;
          typed_config: { rules: { action?: string; policies: Record<string, unknown> } };
        }[]
      ).find((f) => f.name === "envoy.filters.http.rbac")!.typed_config.rules;
      expect({ front: front.name, action: rbac.action ?? "ALLOW", policies: Object.values(rbac.policies) }).toEqual({
        front: front.name,
        action: "ALLOW",
        policies: [
          {
            permissions: [
              {
                and_rules: {
                  rules: [
                    { or_rules: { rules: [{ header: { name: ":method", string_match: { exact: "CONNECT" } } }] } },
                    { or_rules: { rules: [{ destination_port: port }] } },
                  ],
                },
              },
            ],
            principals: [
              {
                and_ids: {
                  ids:
                    ranges.length === 0
                      ? [{ any: true }]
                      : [
                          {
                            or_ids: {
                              ids: ranges.map((cidr) => ({
                                remote_ip: {
                                  address_prefix: cidr.split("/")[0],
                                  prefix_len: Number(cidr.split("/")[1]),
                                },
                              })),
                            },
                          },
                        ],
                },
              },
            ],
          },
        ],
      });
    }
  });

  it(
    "1. under the EDGE connection profile (ProxyConfig.connectionSettings, istio/istio#60576: a 5-minute stream idle timeout on gateways) the listener filter keeps idle sessions open: istiod's merge replaces the Duration",
    async () => {
      const edge = {
        defaultConfig: {
          ...(istioInstall().meshConfig.defaultConfig as object),
          connectionSettings: { profile: "EDGE" },
        },
      };
      for (const front of fronts.filter((f) => f.name.startsWith("Pulumi") || f.name.startsWith("helm 4"))) {
        const { port } = serverOf(front.objects);
        expect(hcmOf(await istiod(front.objects, { meshConfig: edge }), port).stream_idle_timeout).toBe("0s");
        // Without the filter's stream_idle_timeout, EDGE's default stands (connection_settings.go, applyEdgeProfileDefaults).
        const withoutIdleTimeout = structuredClone(front.objects) as Obj[];
        for (const filter of withoutIdleTimeout.filter(
          (o) => o.kind === "EnvoyFilter" && o.metadata.name.endsWith("-connect-gateway-connect"),
        )) {
          delete (filter.spec as { configPatches: { patch: { value: { typed_config: Record<string, unknown> } } }[] })
            .configPatches[0].patch.value.typed_config.stream_idle_timeout;
        }
        expect(hcmOf(await istiod(withoutIdleTimeout, { meshConfig: edge }), port).stream_idle_timeout).toBe("300s");
      }
    },
    10 * 60_000,
  );

  it("1. the route configuration holds blackhole and one virtual host per workspace: the bare FQDN, one CONNECT route pinned by the exact :authority <fqdn>:22", () => {
    for (const front of fronts) {
      const { port, routeName } = serverOf(front.objects);
      const config = real.get(front.name)!;
      const route = config.routes.find((r) => r.name === routeName)!.resource;
      expect(route.ignore_port_in_host_matching).toBe(true);
      const fqdns = fqdnsOf(front.objects);
      expect(fqdns.length).toBe(front.name.includes("several") ? 2 : 1);
      expect(route.virtual_hosts.map((v) => v.domains)).toEqual([["*"], ...fqdns.map((f) => [f])]);
      expect(route.virtual_hosts[0]).toEqual({ name: `blackhole:${port}`, domains: ["*"] });
      for (const [i, fqdn] of fqdns.entries()) {
        const vhost = route.virtual_hosts[i + 1];
        expect(vhost.routes).toHaveLength(1);
        expect(vhost.routes[0].match).toEqual({
          connect_matcher: {},
          headers: [{ name: ":authority", string_match: { exact: `${fqdn}:22` } }],
        });
        expect(vhost.routes[0].route).toMatchObject({
          cluster: `outbound|22||${fqdn}`,
          timeout: "0s",
          upgrade_configs: [{ upgrade_type: "CONNECT", connect_config: {} }],
        });
      }
    }
  });

  it(
    "1. each workspace's cluster outbound|22||<fqdn> exists, also under PILOT_FILTER_GATEWAY_CLUSTER_CONFIG=true, where the referenced-services annotation is what brings it",
    async () => {
      for (const front of fronts) {
        const fqdns = fqdnsOf(front.objects);
        const clusters = (config: IstiodGatewayConfig) =>
          config.clusters.map((c) => c.name).filter((n) => n.startsWith("outbound|22||"));
        const filtered = await istiod(front.objects, { filterGatewayClusterConfig: true });
        const bare = withoutRouteAnnotations(front.objects);
        const filteredBare = await istiod(bare, { filterGatewayClusterConfig: true });
        const unfilteredBare = await istiod(bare);
        expect({
          front: front.name,
          default: clusters(real.get(front.name)!),
          filtered: clusters(filtered),
          filteredWithoutAnnotation: clusters(filteredBare),
          defaultWithoutAnnotation: clusters(unfilteredBare),
        }).toEqual({
          front: front.name,
          default: [...fqdns.map((f) => `outbound|22||${f}`)].sort(),
          filtered: [...fqdns.map((f) => `outbound|22||${f}`)].sort(),
          filteredWithoutAnnotation: [],
          defaultWithoutAnnotation: [...fqdns.map((f) => `outbound|22||${f}`)].sort(),
        });
        // The Envoy half: without the annotation the filtered gateway answers 503 NC.
        expect(decide(envoyOf(filteredBare, bare), connect(`${fqdns[0]}:22`))).toEqual({
          status: 503,
          details: "cluster_not_found (NC)",
          cluster: `outbound|22||${fqdns[0]}`,
        });
      }
    },
    20 * 60_000,
  );

  it(
    "2. adding a workspace: istiod's listeners are byte-identical, the existing virtual hosts unchanged, one virtual host and one cluster added",
    async () => {
      for (const front of fronts) {
        const { routeName } = serverOf(front.objects);
        const before = real.get(front.name)!;
        const grownObjects = await front.withAnotherWorkspace();
        const after = await istiod(grownObjects);
        expect({ front: front.name, listeners: after.listeners.map((l) => [l.name, l.wireSha256]) }).toEqual({
          front: front.name,
          listeners: before.listeners.map((l) => [l.name, l.wireSha256]),
        });
        const vhosts = (config: IstiodGatewayConfig) =>
          config.routes.find((r) => r.name === routeName)!.resource.virtual_hosts;
        const [carol] = fqdnsOf(grownObjects).filter((f) => !fqdnsOf(front.objects).includes(f));
        expect(carol).toMatch(/-ws-carol\./);
        expect(vhosts(after).slice(0, -1)).toEqual(vhosts(before));
        expect(vhosts(after).at(-1)!.domains).toEqual([carol]);
        const byName = (config: IstiodGatewayConfig) => new Map(config.clusters.map((c) => [c.name, c.wireSha256]));
        const [old, grown] = [byName(before), byName(after)];
        expect([...grown.keys()].filter((n) => !old.has(n))).toEqual([`outbound|22||${carol}`]);
        for (const [name, sha] of old) expect({ name, sha: grown.get(name) }).toEqual({ name, sha });
      }
    },
    20 * 60_000,
  );
});

describe("the exec gateway's route, which the same istiod found refused", () => {
  it("has no route timeout (Envoy's 0s: none) without `timeout` in the VirtualService, and istiod refuses `timeout: 0s`", async () => {
    const objects = fronts[0].objects as Obj[];
    const options = {
      gatewayName: "entryway-exec-gateway",
      gatewayWorkload: { namespace: "istio-system", name: "istio-ingressgateway-0" },
    };
    const config = await istiodGatewayConfig(objects, options);
    const route = config.routes.find(
      (r) => r.name === "https.443.https-exec-gateway.entryway-exec-gateway.entryway-dev",
    )!.resource;
    const [vhost] = route.virtual_hosts;
    expect(vhost.domains).toEqual(["exec.dev.example.com"]);
    // One route per match (/v1/enter, /, /web/), each to the exec gateway with Envoy's timeout 0s: none.
    expect(vhost.routes.map((r) => [r.route?.cluster, (r.route as { timeout?: string } | undefined)?.timeout])).toEqual(
      Array(3).fill(["outbound|80||entryway-exec-gateway.entryway-dev.svc.cluster.local", "0s"]),
    );
    const withZeroTimeout = structuredClone(objects);
    (
      withZeroTimeout.find((o) => o.kind === "VirtualService")!.spec as { http: Record<string, unknown>[] }
    ).http[0].timeout = "0s";
    await expect(istiodGatewayConfig(withZeroTimeout, options)).rejects.toThrow(
      /istiod refuses VirtualService entryway-dev\/entryway-exec-gateway: .*duration must be greater than 1ms/,
    );
  });
});

describe("what istiod refuses, which the front ends refuse first", () => {
  it("a TLS Gateway whose host has no dot (the components and the chart refuse such a hostname with tls)", async () => {
    const front = fronts.find((f) => f.name === "helm 4 ssh-tls.yaml")!;
    const objects = structuredClone(front.objects) as Obj[];
    const gateway = objects.find((o) => o.kind === "Gateway")!;
    (gateway.spec as { servers: { hosts: string[] }[] }).servers[0].hosts = ["localhost"];
    await expect(istiod(objects)).rejects.toThrow(
      /istiod refuses Gateway entryway-connect\/entryway-connect-gateway: .*short names \(non FQDN\) are not allowed/,
    );
  });
});

describe("3. one workspace domain claimed twice on one gateway (two stacks or releases sharing it)", () => {
  it(
    "istiod adds both virtual hosts and says nothing, so Envoy would reject the whole route configuration: the guard in the components and the chart is still needed",
    async () => {
      const front = fronts[0];
      const [alice] = routeFilters(front.objects);
      // Another program's route filter for the same workspace Service: same patch, another name.
      const second = structuredClone(alice);
      second.metadata.name = `${alice.metadata.name}-other-stack`;
      const objects = [...front.objects, second];
      const config = await istiod(objects);
      const { routeName } = serverOf(objects);
      const [fqdn] = fqdnsOf(front.objects);
      expect(config.routes.find((r) => r.name === routeName)!.resource.virtual_hosts.map((v) => v.domains)).toEqual([
        ["*"],
        [fqdn],
        [fqdn],
      ]);
      expect(config.istiodLog.filter((l) => l.scope === "envoyfilter")).toEqual([]);
      const envoy = envoyOf(config, objects);
      expect(envoy.rejected).toBe(
        `Only unique values for domains are permitted. Duplicate entry of domain ${fqdn} in route ${routeName}`,
      );
      expect(decide(envoy, connect(`${fqdn}:22`)).status).toBe(404);
      // istioctl analyze does not see it either: the second filter gets only the warning every EnvoyFilter gets.
      const analysis = await istioctlAnalyze(objects);
      expect(messageLines(analysis.messages.filter((m) => m.code !== "IST0133"))).toEqual([]);
    },
    10 * 60_000,
  );
});

/** The model's istiod half beside the real output, field by field of what the Envoy half reads. */
function modelVersusReal(model: GatewayEnvoy, realEnvoy: GatewayEnvoy) {
  const hcmFields = (hcm: ConnectionManager) => ({
    rds: hcm.rds.route_config_name,
    http_protocol_options: hcm.http_protocol_options,
    upgrade_configs: hcm.upgrade_configs,
    http2_protocol_options: hcm.http2_protocol_options,
    stream_idle_timeout: hcm.stream_idle_timeout,
  });
  const side = (e: GatewayEnvoy) => ({
    port: e.port,
    route: {
      name: e.routeConfig.name,
      ignore_port_in_host_matching: e.routeConfig.ignore_port_in_host_matching,
      virtual_hosts: e.routeConfig.virtual_hosts,
    },
    connectionManager: hcmFields(e.connectionManager),
    outboundClusters: [...e.clusters].filter((c) => c.startsWith("outbound|")).sort(),
    sniHosts: e.sniHosts,
    rejected: e.rejected,
  });
  return { model: side(model), real: side(realEnvoy) };
}

describe("4. the model's istiod half equals istiod's real output", () => {
  it("on every front end", () => {
    for (const front of fronts) {
      const { model, real: realSide } = modelVersusReal(
        buildGatewayEnvoy({ objects: front.objects, gatewayName: connectGatewayName(front.objects) }),
        envoyOf(real.get(front.name)!, front.objects),
      );
      expect({ front: front.name, ...model }).toEqual({ front: front.name, ...realSide });
    }
  });

  it(
    "in the cases the model claims to cover: cluster filtering with and without the annotation, discoverySelectors, defaultServiceExportTo, a missing listener filter",
    async () => {
      const front = fronts.find((f) => f.name === "helm 4 ssh-several-workspaces.yaml")!;
      const gatewayName = connectGatewayName(front.objects);
      // discoverySelectors select Namespaces by label: the cluster's namespaces, labelled by name.
      const namespaces = [...new Set((front.objects as Obj[]).map((o) => o.metadata.namespace).filter(Boolean))];
      const withNamespaces = [
        ...front.objects.filter((o) => o.kind !== "Namespace"),
        ...namespaces.map((name) => ({
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name, labels: { "kubernetes.io/metadata.name": name } },
        })),
      ];
      const cases: {
        name: string;
        objects: ObjectLike[];
        model: Omit<GatewayModelOptions, "objects">;
        istiod: Omit<IstiodOptions, "gatewayName">;
      }[] = [
        {
          name: "filtered",
          objects: front.objects,
          model: { filterGatewayClusterConfig: true },
          istiod: { filterGatewayClusterConfig: true },
        },
        {
          name: "filtered, no annotation",
          objects: withoutRouteAnnotations(front.objects),
          model: { filterGatewayClusterConfig: true },
          istiod: { filterGatewayClusterConfig: true },
        },
        {
          name: "discoverySelectors: the gateway's and alice's namespaces only",
          objects: withNamespaces,
          model: { discoveredNamespaces: ["ssh-gateway", "entryway"] },
          istiod: {
            meshConfig: {
              discoverySelectors: [
                {
                  matchExpressions: [
                    { key: "kubernetes.io/metadata.name", operator: "In", values: ["ssh-gateway", "entryway"] },
                  ],
                },
              ],
            },
          },
        },
        {
          name: "defaultServiceExportTo: [.]",
          objects: front.objects,
          model: { defaultServiceExportTo: ["."] },
          istiod: { meshConfig: { defaultServiceExportTo: ["."] } },
        },
        {
          name: "defaultServiceExportTo: [.], no exportTo annotation",
          objects: structuredClone(front.objects).map((o) =>
            o.kind === "Service" ? { ...o, metadata: { ...o.metadata, annotations: undefined } } : o,
          ),
          model: { defaultServiceExportTo: ["."] },
          istiod: { meshConfig: { defaultServiceExportTo: ["."] } },
        },
        {
          name: "no listener filter",
          objects: front.objects.filter(
            (o) => !(o.kind === "EnvoyFilter" && o.metadata?.name?.endsWith("-connect-gateway-connect")),
          ),
          model: {},
          istiod: {},
        },
      ];
      for (const c of cases) {
        const { model, real: realSide } = modelVersusReal(
          buildGatewayEnvoy({ objects: c.objects, gatewayName, ...c.model }),
          envoyOf(await istiod(c.objects, c.istiod), c.objects),
        );
        expect({ case: c.name, ...model }).toEqual({ case: c.name, ...realSide });
      }
    },
    20 * 60_000,
  );
});

/**
 * The analyzer messages left on the renderings, each with why it is not a fault of the manifests.
 * Any other message fails the tests below.
 */
const EXPECTED_ANALYZE_MESSAGES: Record<string, string> = {
  IST0133:
    "Istio's validation warns on every EnvoyFilter (pkg/config/validation/envoyfilter/envoyfilter.go: " +
    '"EnvoyFilter exposes internal implementation details"); CONNECT routing to a workspace has no other Istio API, ' +
    "which is why this file exists: the real istiod output above is what upgrades are checked against.",
  IST0101:
    "Only for a Gateway's TLS credentialName (the SSH TLS scenario's, the dev stack's exec gateway's): the Secret " +
    "is the operator's to make (docs/ssh-workspaces.md, docs/exec-gateway.md); it is not part of a rendering.",
  IST0102:
    "Info: the gateway's namespace has no istio-injection label; the gateway Pod opts in with its own " +
    'sidecar.istio.io/inject: "true" label, which Istio\'s object-selector webhook matches (no IST0146 below).',
};

describe("5. istioctl analyze (built from the same module) on every rendering", () => {
  it(
    "local files only: no error, only the listed messages; it skips every analyzer that needs Kubernetes objects",
    async () => {
      for (const front of fronts) {
        const analysis = await istioctlAnalyze(front.objects);
        expect({
          front: front.name,
          unexplained: messageLines(
            analysis.messages.filter((m) => !(m.code in EXPECTED_ANALYZE_MESSAGES) || m.level === "Error"),
          ),
        }).toEqual({ front: front.name, unexplained: [] });
        expect(analysis.messages.filter((m) => m.code === "IST0133").length).toBe(
          front.objects.filter((o) => o.kind === "EnvoyFilter").length,
        );
        expect(analysis.skipped).toEqual(
          expect.arrayContaining([
            "gateway.IngressGatewayPortAnalyzer",
            "applicationUID.Analyzer",
            "injection.ImageAutoAnalyzer",
          ]),
        );
      }
    },
    10 * 60_000,
  );

  it(
    "with the Kubernetes objects a cluster would hold (the gateway Pod, Istio's own injector webhooks): no error, only the listed messages, no analyzer skipped",
    async () => {
      for (const front of fronts) {
        const analysis = await analyzeWithWorkloads(front.objects, { gatewayName: connectGatewayName(front.objects) });
        expect({
          front: front.name,
          unexplained: messageLines(
            analysis.messages.filter(
              (m) => !(m.code in EXPECTED_ANALYZE_MESSAGES) || (m.level === "Error" && m.code !== "IST0101"),
            ),
          ),
          skipped: analysis.skipped,
        }).toEqual({ front: front.name, unexplained: [], skipped: [] });
        // IST0101 only for the Gateways' credentialName Secrets, which the operator makes.
        const credentials = (front.objects as Obj[])
          .filter((o) => o.kind === "Gateway")
          .flatMap((g) =>
            (g.spec as { servers: { tls?: { credentialName?: string } }[] }).servers
              .filter((server) => server.tls?.credentialName)
              .map(
                (server) =>
                  `IST0101 Error Gateway ${g.metadata.namespace}/${g.metadata.name}: Referenced credentialName not found: "${server.tls!.credentialName}"`,
              ),
          );
        expect(messageLines(analysis.messages.filter((m) => m.code === "IST0101")).sort()).toEqual(credentials.sort());
      }
    },
    10 * 60_000,
  );

  it(
    "catches what it exists for: the gateway pod's uid 1337 on the pod (IST0144, fixed), and a gateway Istio's injector would not inject (IST0146)",
    async () => {
      const front = fronts[0];
      const gatewayName = connectGatewayName(front.objects);
      type Deployment = Obj & {
        spec: {
          template: {
            metadata: { labels: Record<string, string> };
            spec: { securityContext: Record<string, unknown> };
          };
        };
      };
      const deploymentOf = (objects: ObjectLike[]) =>
        (objects as Deployment[]).find((o) => o.kind === "Deployment" && o.metadata.name === gatewayName)!;
      const podUid = structuredClone(front.objects);
      Object.assign(deploymentOf(podUid).spec.template.spec.securityContext, { runAsUser: 1337, runAsGroup: 1337 });
      const codes = async (objects: ObjectLike[], revision?: string) =>
        (await analyzeWithWorkloads(objects, { gatewayName, revision })).messages.map((m) => `${m.code} ${m.origin}`);
      expect(await codes(podUid)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^IST0144 Deployment .*\/entryway-connect-gateway$/)]),
      );
      const notInjected = structuredClone(front.objects);
      delete deploymentOf(notInjected).spec.template.metadata.labels["sidecar.istio.io/inject"];
      expect(await codes(notInjected)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^IST0146 Deployment .*\/entryway-connect-gateway$/)]),
      );
    },
    10 * 60_000,
  );

  it(
    "a gateway on an Istio revision (connectGateway.revision) is injected by that revision's webhooks, and by no other",
    async () => {
      const helm = helmBinaries()[0];
      const objects = renderScenario(
        helm,
        sshScenarios().find((s) => s.endsWith("ssh-one-workspace.yaml"))!,
        ["connectGateway.revision=canary"],
      );
      const gatewayName = connectGatewayName(objects);
      const injection = async (revision: string) =>
        (await analyzeWithWorkloads(objects, { gatewayName, revision })).messages
          .filter((m) => m.code === "IST0146")
          .map((m) => m.origin);
      expect(await injection("canary")).toEqual([]);
      expect(await injection("")).toEqual([expect.stringMatching(/entryway-connect-gateway$/)]);
    },
    10 * 60_000,
  );
});
