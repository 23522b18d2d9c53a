/**
 * Istio's REAL config generation and analyzers on rendered manifests, for the SSH tests. The tools
 * come from the istio.io/istio module (scripts/realcp/istio, built by scripts/realcp/build.sh):
 *
 * - `istiod-gateway-config` loads the Istio objects into istiod's config store and the Services,
 *   Namespaces and the gateway's Pod into a fake Kubernetes cluster (istio pilot/test/xds
 *   NewFakeDiscoveryServer), sets up the gateway's router proxy and prints the listeners, route
 *   configurations and clusters istiod's own code generates for it (pilot/pkg/networking/core).
 *   istiod runs with the mesh config of Istio's own istiod chart (`istioInstall`).
 * - `istioctl analyze --use-kube=false` on the rendered files, and `istio-analyze-with-workloads`:
 *   the same analyzers reading the files' Kubernetes objects too, with the gateway's Pod and
 *   Istio's own sidecar-injector webhooks, as a cluster would hold them.
 *
 * Only Envoy's side (what it does with that config) stays modelled, in istio-gateway-model.ts:
 * `gatewayEnvoyFromIstiod` turns istiod's output into the model's input.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse, stringify } from "yaml";
import { helmBinaries, helmTemplate } from "../../testkit/harness/helm";
import { realTool } from "../../testkit/harness/realcp";
import { run } from "../../testkit/harness/process";
import type { ObjectLike } from "../../testkit/harness/validate";
import {
  validateRouteConfiguration,
  type ConnectionManager,
  type GatewayEnvoy,
  type RouteConfiguration,
} from "./istio-gateway-model";

type Json = Record<string, unknown>;

/** One resource as istiod generated it (protojson with proto field names). */
export interface XdsResource<T = Json> {
  readonly name: string;
  /** SHA-256 of its deterministic protobuf encoding: equal hashes, byte-identical resources. */
  readonly wireSha256: string;
  readonly resource: T;
}

export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/** What istiod sends the gateway proxy (istiod-gateway-config's JSON). */
export interface IstiodGatewayConfig {
  readonly istio: { readonly version: string; readonly gitRevision: string };
  readonly proxy: {
    readonly id: string;
    readonly namespace: string;
    readonly ip: string;
    readonly labels: Record<string, string>;
  };
  readonly settings: { readonly PILOT_FILTER_GATEWAY_CLUSTER_CONFIG: boolean };
  readonly istioConfigs: readonly ObjectRef[];
  readonly kubernetesObjects: readonly ObjectRef[];
  readonly ignored: readonly ObjectRef[];
  readonly listeners: readonly XdsResource[];
  readonly routes: readonly XdsResource<RouteConfiguration & Json>[];
  readonly clusters: readonly XdsResource[];
  /** istiod's own log lines, warning and above, as JSON objects (level, scope, msg). */
  readonly istiodLog: readonly { level: string; scope?: string; msg: string }[];
}

export interface IstiodOptions {
  /** The Istio Gateway whose proxy to ask for, when the objects hold more than one. */
  readonly gatewayName?: string;
  /**
   * The gateway's workload when the rendering does not hold it (Istio's shared ingress gateway,
   * installed with Istio): a Pod of that name and namespace carrying the Gateway's selector labels.
   */
  readonly gatewayWorkload?: { readonly namespace: string; readonly name: string };
  /** istiod's PILOT_FILTER_GATEWAY_CLUSTER_CONFIG (Istio's default: false). */
  readonly filterGatewayClusterConfig?: boolean;
  /** MeshConfig fields set over the mesh config of Istio's istiod chart (`istioInstall`). */
  readonly meshConfig?: Json;
}

type Obj = ObjectLike & {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Json;
};

const istioGateways = (objects: readonly ObjectLike[]) =>
  (objects as Obj[]).filter((o) => o.kind === "Gateway" && o.apiVersion.startsWith("networking.istio.io/"));

/** The Istio Gateway object the options name (or the only one). */
export function istioGateway(objects: readonly ObjectLike[], gatewayName?: string): Obj {
  const found = istioGateways(objects).filter((g) => gatewayName === undefined || g.metadata.name === gatewayName);
  if (found.length !== 1)
    throw new Error(
      `istiod: expected one Istio Gateway${gatewayName ? ` named ${gatewayName}` : ""}, found ${found.length}`,
    );
  return found[0];
}

/** The gateway's IP in the fake cluster: any address; the proxy announces its Pod's. */
const GATEWAY_POD_IP = "10.244.0.10";
/**
 * What Istio's sidecar injector puts in place of `image: auto` (its gateway template's
 * `{{ .ProxyImage }}`, istio-discovery/files/gateway-injection-template.yaml): a Running pod never
 * keeps `auto`.
 */
const INJECTED_PROXY_IMAGE = "docker.io/istio/proxyv2:1.31-dev";

/**
 * A Running Pod of the Deployment the Gateway selects, as the cluster would have it once Istio's
 * injector made it: istiod finds the proxy's workload, and the Service ports that map the Gateway's
 * server ports, through it.
 */
export function gatewayPod(
  objects: readonly ObjectLike[],
  gatewayName?: string,
  workload?: IstiodOptions["gatewayWorkload"],
): Obj {
  const gateway = istioGateway(objects, gatewayName);
  const selector = (gateway.spec as { selector: Record<string, string> }).selector;
  const status = {
    phase: "Running",
    podIP: GATEWAY_POD_IP,
    podIPs: [{ ip: GATEWAY_POD_IP }],
    conditions: [{ type: "Ready", status: "True" }],
  };
  if (workload) {
    return {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { ...workload, labels: selector },
      spec: { containers: [{ name: "istio-proxy", image: INJECTED_PROXY_IMAGE }] },
      status,
    };
  }
  type Deployment = Obj & {
    spec: {
      template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: Json };
    };
  };
  const deployments = (objects as Deployment[]).filter(
    (o) =>
      o.kind === "Deployment" &&
      o.metadata.namespace === gateway.metadata.namespace &&
      Object.entries(selector).every(([k, v]) => o.spec.template.metadata.labels?.[k] === v),
  );
  if (deployments.length !== 1)
    throw new Error(
      `istiod: expected one Deployment for Gateway ${gateway.metadata.name}'s selector, found ${deployments.length}`,
    );
  const [deployment] = deployments;
  const podSpec = structuredClone(deployment.spec.template.spec) as { containers: { name: string; image: string }[] };
  for (const container of podSpec.containers) if (container.image === "auto") container.image = INJECTED_PROXY_IMAGE;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `${deployment.metadata.name}-0`,
      namespace: deployment.metadata.namespace,
      labels: deployment.spec.template.metadata.labels,
      annotations: deployment.spec.template.metadata.annotations,
    },
    spec: podSpec,
    status,
  };
}

const yamlStream = (objects: readonly unknown[]) => objects.map((o) => stringify(o, { lineWidth: 0 })).join("---\n");

function withTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "entryway-istiod-"));
  return work(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

export interface IstioInstall {
  /** The mesh config istiod reads (the `istio` ConfigMap's `mesh`), parsed. */
  readonly meshConfig: Json;
  /**
   * The sidecar injector: its MutatingWebhookConfiguration (the webhooks' selectors decide
   * injection) and the istiod Service the webhooks call.
   */
  readonly injector: ObjectLike[];
}

const installs = new Map<string, IstioInstall>();

/**
 * Istio as its own istiod chart installs it (manifests/charts/istio-control/istio-discovery of the
 * same module, copied by the recipe), rendered with Helm 4 and default values, or with a revision.
 */
export function istioInstall(revision = ""): IstioInstall {
  const known = installs.get(revision);
  if (known) return known;
  const chartDir = path.join(realTool("istio"), "..", "share", "charts", "istio-discovery");
  const objects = helmTemplate(helmBinaries()[0], chartDir, {
    releaseName: "istiod",
    namespace: "istio-system",
    set: revision ? [`revision=${revision}`] : [],
  }) as Obj[];
  const meshMap = objects.find(
    (o) => o.kind === "ConfigMap" && o.metadata.name === (revision ? `istio-${revision}` : "istio"),
  ) as (Obj & { data: { mesh: string } }) | undefined;
  if (!meshMap) throw new Error("istio-discovery rendered no mesh config ConfigMap");
  type Webhooks = Obj & { webhooks: { clientConfig: { service?: { name: string; namespace: string } } }[] };
  const webhooks = objects.filter((o) => o.kind === "MutatingWebhookConfiguration") as Webhooks[];
  if (webhooks.length === 0) throw new Error("istio-discovery rendered no MutatingWebhookConfiguration");
  const called = new Set(
    webhooks.flatMap((w) =>
      w.webhooks.map((h) => `${h.clientConfig.service?.namespace}/${h.clientConfig.service?.name}`),
    ),
  );
  const services = objects.filter(
    (o) => o.kind === "Service" && called.has(`${o.metadata.namespace}/${o.metadata.name}`),
  );
  const install = { meshConfig: parse(meshMap.data.mesh) as Json, injector: [...webhooks, ...services] };
  installs.set(revision, install);
  return install;
}

/** What istiod's own code generates for the gateway's proxy from the rendered objects. */
export function istiodGatewayConfig(
  objects: readonly ObjectLike[],
  options: IstiodOptions = {},
): Promise<IstiodGatewayConfig> {
  const binary = path.join(realTool("istio"), "istiod-gateway-config");
  const pod = gatewayPod(objects, options.gatewayName, options.gatewayWorkload);
  const meshConfig = { ...istioInstall().meshConfig, ...options.meshConfig };
  return withTempDir(async (dir) => {
    const manifests = path.join(dir, "manifests.yaml");
    writeFileSync(manifests, yamlStream([...objects, pod]));
    writeFileSync(path.join(dir, "mesh.yaml"), stringify(meshConfig));
    const args = [
      "--manifests",
      manifests,
      "--gateway-pod",
      `${pod.metadata.namespace}/${pod.metadata.name}`,
      "--mesh-config",
      path.join(dir, "mesh.yaml"),
    ];
    const env = {
      ...process.env,
      PILOT_FILTER_GATEWAY_CLUSTER_CONFIG: String(options.filterGatewayClusterConfig ?? false),
    };
    const result = await run(binary, args, { env });
    if (result.status !== 0)
      throw new Error(
        `istiod-gateway-config failed (${result.status}): ${result.stderr.trim().split("\n").slice(-5).join("\n")}`,
      );
    const config = JSON.parse(result.stdout) as IstiodGatewayConfig;
    if (config.settings.PILOT_FILTER_GATEWAY_CLUSTER_CONFIG !== (options.filterGatewayClusterConfig ?? false)) {
      throw new Error("istiod-gateway-config did not take PILOT_FILTER_GATEWAY_CLUSTER_CONFIG from its environment");
    }
    return config;
  });
}

export interface AnalyzeMessage {
  readonly code: string;
  readonly level: "Error" | "Warning" | "Info";
  readonly message: string;
  readonly origin: string;
  readonly documentationUrl?: string;
}

export interface Analysis {
  readonly messages: AnalyzeMessage[];
  /** The analyzers that did not run (their inputs were not read). */
  readonly skipped: string[];
}

async function analyze(
  command: string,
  args: string[],
  objects: readonly ObjectLike[],
): Promise<{ messages: AnalyzeMessage[]; stderr: string }> {
  return withTempDir(async (dir) => {
    const manifests = path.join(dir, "rendered.yaml");
    writeFileSync(manifests, yamlStream(objects));
    const result = await run(command, [...args, manifests], { env: { ...process.env, HOME: dir } });
    // With `-o json`, istioctl's exit status does not follow the messages (istioctl/pkg/analyze/
    // analyze.go checks the failure threshold only for the log format); a file it cannot read is
    // reported on stderr as "Error(s) adding files".
    if (result.status !== 0 || /Error\(s\) adding files|could not be parsed/.test(result.stderr)) {
      throw new Error(`${path.basename(command)} ${args.join(" ")} failed (${result.status}): ${result.stderr.trim()}`);
    }
    return { messages: JSON.parse(result.stdout) as AnalyzeMessage[], stderr: result.stderr };
  });
}

/**
 * `istioctl analyze` of the rendered objects alone (`--use-kube=false`: no cluster, local files
 * only; every namespace; every level down to Info), with istioctl built from the same module.
 * `skipped` lists the analyzers istioctl leaves out for want of the files' Kubernetes objects
 * (its --verbose list).
 */
export async function istioctlAnalyze(objects: readonly ObjectLike[]): Promise<Analysis> {
  const binary = path.join(realTool("istio"), "istioctl");
  const { messages, stderr } = await analyze(
    binary,
    ["analyze", "--use-kube=false", "--all-namespaces", "--output", "json", "--output-threshold", "Info", "--verbose"],
    objects,
  );
  const skippedList = /Skipped analyzers:\n((?:\t.*\n)*)/.exec(stderr)?.[1] ?? "";
  return {
    messages,
    skipped: skippedList
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean),
  };
}

/**
 * The same analyzers on the rendered objects as a cluster would hold them: with their Kubernetes
 * objects read, the gateway's Pod (`gatewayPod`) and Istio's sidecar-injector webhooks
 * (`istioInstall`). Returns the messages and the analyzers that still did not run.
 */
export async function analyzeWithWorkloads(
  objects: readonly ObjectLike[],
  options: { gatewayName?: string; revision?: string } = {},
): Promise<Analysis> {
  const binary = path.join(realTool("istio"), "istio-analyze-with-workloads");
  const { messages, stderr } = await analyze(
    binary,
    [],
    [...objects, gatewayPod(objects, options.gatewayName), ...istioInstall(options.revision).injector],
  );
  return { messages, skipped: [...stderr.matchAll(/^skipped analyzer: (\S+)$/gm)].map((m) => m[1]) };
}

type HcmJson = ConnectionManager & { "@type": string };
interface FilterChainJson {
  filter_chain_match?: { server_names?: string[] };
  filters: { name: string; typed_config?: Json }[];
}

/**
 * The model's Envoy input from istiod's real output: the listener on the Gateway server's port,
 * the connection manager on it (with the listener EnvoyFilter applied by istiod), the route
 * configuration it names, the TLS server names its filter chain matches, and every cluster.
 * Envoy's own check of the route configuration (duplicate domains) stays the model's.
 */
export function gatewayEnvoyFromIstiod(
  config: IstiodGatewayConfig,
  objects: readonly ObjectLike[],
  gatewayName?: string,
): GatewayEnvoy {
  const gateway = istioGateway(objects, gatewayName);
  const servers = (gateway.spec as { servers: { port: { number: number } }[] }).servers;
  if (servers.length !== 1)
    throw new Error(`istiod: Gateway ${gateway.metadata.name} has ${servers.length} servers; one is expected`);
  const port = servers[0].port.number;
  const listener = config.listeners.find((l) => l.name === `0.0.0.0_${port}`);
  if (!listener)
    throw new Error(
      `istiod sent no listener 0.0.0.0_${port}; listeners: ${config.listeners.map((l) => l.name).join(", ")}`,
    );
  const chains = (listener.resource as { filter_chains: FilterChainJson[] }).filter_chains;
  if (chains.length !== 1)
    throw new Error(`istiod: listener ${listener.name} has ${chains.length} filter chains; one is expected`);
  const [chain] = chains;
  const hcmFilter = chain.filters.find((f) => f.name === "envoy.filters.network.http_connection_manager");
  if (!hcmFilter) throw new Error(`istiod: listener ${listener.name} has no HTTP connection manager`);
  const { "@type": _type, ...connectionManager } = hcmFilter.typed_config as unknown as HcmJson;
  if (!connectionManager.rds)
    throw new Error(`istiod: the connection manager on ${listener.name} has no RDS (an inline route_config?)`);
  const routeName = connectionManager.rds.route_config_name;
  const route = config.routes.find((r) => r.name === routeName);
  if (!route) throw new Error(`istiod sent no route configuration ${routeName}`);
  // protojson leaves out empty lists (the blackhole virtual host's routes) and false/default scalars.
  const routeConfig: RouteConfiguration = {
    ...route.resource,
    virtual_hosts: (route.resource.virtual_hosts ?? []).map((v) => ({ ...v, routes: v.routes ?? [] })),
    ignore_port_in_host_matching: route.resource.ignore_port_in_host_matching ?? false,
  };
  const serverNames = chain.filter_chain_match?.server_names;
  return {
    port,
    routeConfig,
    connectionManager: {
      ...connectionManager,
      http_protocol_options: connectionManager.http_protocol_options ?? {},
      upgrade_configs: connectionManager.upgrade_configs ?? [],
    },
    clusters: new Set(config.clusters.map((c) => c.name)),
    sniHosts: serverNames ? [...serverNames].sort() : undefined,
    rejected: validateRouteConfiguration(routeConfig),
  };
}
