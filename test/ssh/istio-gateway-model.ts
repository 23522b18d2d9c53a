/**
 * A model of an Istio ingress gateway's Envoy, built from rendered manifests, for the SSH tests:
 * what route configuration, listener and clusters istiod would give the gateway, and how Envoy
 * then answers an HTTP/1 CONNECT. It is a test stand-in, written from these sources:
 *
 * - istio pilot/pkg/networking/core/gateway.go, buildGatewayHTTPRouteConfig: one virtual host per
 *   host a bound VirtualService shares with the server; none bound -> the `blackhole:<port>`
 *   virtual host with domain `*` and no routes; `ignore_port_in_host_matching: true` on every
 *   gateway route configuration (not for proxyless gRPC).
 * - istio pilot/pkg/model/gateway.go, gatewayRDSRouteName: `http.<port>`, or
 *   `https.<port>.<portName>.<gateway>.<namespace>`; GetSNIHostsForServer: a TLS server's filter
 *   chain matches the SNI of its hosts.
 * - istio pilot/pkg/networking/core/gateway.go, buildGatewayConnectionManager, and
 *   listener_builder.go: the HCM (RDS, websocket upgrade, stream_idle_timeout 0s on every HCM,
 *   accept_http_10 only when asked).
 * - istio pilot/pkg/networking/core/envoyfilter/rc_patch.go (patchVirtualHosts: VIRTUAL_HOST ADD
 *   appends after Istio's own virtual hosts; routeConfigurationMatch: name and port) and
 *   listener_patch.go (patchNetworkFilter: MERGE of typed_config through util.MergeAnyWithAny,
 *   a proto merge, istio pkg/proto/merge: repeated fields append, a scalar's default value (false,
 *   0, "") changes nothing, a Duration is replaced whole, so `0s` does replace `300s`; in JSON a
 *   Duration is a string, which protoMerge below sets).
 * - istio pilot/pkg/model/push_context.go (GatewayServices, extraServicesForProxy) and
 *   envoyfilter.go: with PILOT_FILTER_GATEWAY_CLUSTER_CONFIG only referenced services get clusters
 *   (VirtualService destinations, and EnvoyFilter annotation envoyfilter.istio.io/referenced-services);
 *   serviceregistry/kube/conversion.go: the Service annotation networking.istio.io/exportTo.
 * - envoy source/common/router/config_impl.cc: RouteMatcher (a duplicate domain, or a second `*`,
 *   rejects the whole route configuration), RouteMatcher::findVirtualHost (port cut from the
 *   authority when ignore_port_in_host_matching is set; exact, then suffix wildcards, then prefix
 *   wildcards, longest first, then `*`), ConnectRouteEntryImpl::matches (connect_matcher: CONNECT
 *   only, then the header matchers), no route -> 404.
 * - envoy source/common/http/http1/codec_impl.cc: a CONNECT's :authority is its request-target
 *   (ServerConnectionImpl::handlePath); HTTP/1.0 without accept_http_10 -> 426 (checkProtocolVersion).
 * - envoy source/common/http/conn_manager_impl.cc: a matched route that does not allow the upgrade
 *   -> 403 (UpgradeFailed). envoy source/common/router/router.cc: an unknown cluster -> 503 (NC).
 * - envoy source/extensions/upstreams/http/tcp/upstream_request.h (enableTcpTunneling: half-close
 *   on the upstream connection of a terminated CONNECT) and test/integration/
 *   tcp_tunneling_integration_test.cc (ConnectTerminationIntegrationTest, enable_half_close_): the
 *   tunnel carries each direction's end on its own, so a client that half-closes still gets the
 *   workspace's answer.
 *
 * Not modelled (the manifests here do not use them; the model throws rather than guess): routes
 * from VirtualServices, EnvoyFilter operations other than VIRTUAL_HOST ADD and NETWORK_FILTER
 * MERGE, an inline route_config merged into the HCM (it would replace Istio's RDS). Not modelled
 * at all: the AuthorizationPolicy (RBAC), HTTP/2, load balancing (one local endpoint per cluster).
 *
 * Everything listens on 127.0.0.1 only; upstreams are local ports the test names.
 */
import net from "node:net";
import tls from "node:tls";
import type { ObjectLike } from "../../testkit/harness/validate";

type Json = Record<string, unknown>;

export interface HeaderMatcher {
  name: string;
  string_match?: { exact?: string; prefix?: string; suffix?: string; contains?: string; ignore_case?: boolean };
  exact_match?: string;
  present_match?: boolean;
  invert_match?: boolean;
}
export interface EnvoyRoute {
  match: { connect_matcher?: Json; prefix?: string; path?: string; headers?: HeaderMatcher[] };
  route?: { cluster?: string; upgrade_configs?: { upgrade_type: string; enabled?: boolean }[] };
}
export interface VirtualHost {
  name: string;
  domains: string[];
  routes: EnvoyRoute[];
}
export interface RouteConfiguration {
  name: string;
  virtual_hosts: VirtualHost[];
  ignore_port_in_host_matching: boolean;
}
export interface ConnectionManager {
  rds: { route_config_name: string };
  http_protocol_options: { accept_http_10?: boolean };
  upgrade_configs: { upgrade_type: string; enabled?: boolean }[];
  [field: string]: unknown;
}

export interface GatewayModelOptions {
  /** The rendered objects (Pulumi or Helm): Gateway, gateway Deployment, EnvoyFilters, Services. */
  objects: readonly ObjectLike[];
  /** PILOT_FILTER_GATEWAY_CLUSTER_CONFIG (Istio's default: false). */
  filterGatewayClusterConfig?: boolean;
  /** The namespaces istiod sees (meshConfig.discoverySelectors); default: all. */
  discoveredNamespaces?: readonly string[];
  /** meshConfig.defaultServiceExportTo (default ["*"]). */
  defaultServiceExportTo?: readonly string[];
  /** As Istio sets it: true. False only to show what a non-Istio router would do. */
  ignorePortInHostMatching?: boolean;
  /** The Gateway object to model, when the objects hold more than one. */
  gatewayName?: string;
}

/** What istiod would send the gateway, or why Envoy would reject it. */
export interface GatewayEnvoy {
  readonly port: number;
  readonly routeConfig: RouteConfiguration;
  readonly connectionManager: ConnectionManager;
  /** Cluster names Envoy has (`outbound|<port>||<host>`). */
  readonly clusters: ReadonlySet<string>;
  /** The TLS server's SNI hosts (undefined: plain HTTP server). */
  readonly sniHosts?: readonly string[];
  /** Envoy's message when it rejects the route configuration (nothing is routed then). */
  readonly rejected?: string;
}

const HCM_TYPE =
  "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const HCM_NAME = "envoy.filters.network.http_connection_manager";
const ROOT_NAMESPACE = "istio-system";

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Protobuf JSON with lowerCamelCase keys turned to the proto field names (both are accepted). */
function protoNames(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(protoNames);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.startsWith("@") ? k : snake(k), protoNames(v)]));
}

/** proto.Merge on JSON: messages merge, repeated fields append, a scalar's default value is no change. */
export function protoMerge(dst: Json, src: Json): Json {
  for (const [key, value] of Object.entries(src)) {
    if (Array.isArray(value)) dst[key] = [...((dst[key] as unknown[]) ?? []), ...value];
    else if (typeof value === "object" && value !== null)
      dst[key] = protoMerge((dst[key] as Json) ?? {}, value as Json);
    else if (value !== false && value !== 0 && value !== "") dst[key] = value;
  }
  return dst;
}

const labelsMatch = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);

function one<T>(items: T[], what: string): T {
  if (items.length !== 1) throw new Error(`istio gateway model: expected one ${what}, found ${items.length}`);
  return items[0];
}

/** Builds what istiod sends the gateway from the rendered objects. */
export function buildGatewayEnvoy(options: GatewayModelOptions): GatewayEnvoy {
  const objects = options.objects as (ObjectLike & {
    spec?: Json;
    metadata?: {
      name?: string;
      namespace?: string;
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
    };
  })[];
  const gateway = one(
    objects.filter(
      (o) =>
        o.kind === "Gateway" &&
        String(o.apiVersion).startsWith("networking.istio.io/") &&
        (options.gatewayName === undefined || o.metadata?.name === options.gatewayName),
    ),
    "Istio Gateway",
  );
  const gwName = gateway.metadata!.name!;
  const gwNamespace = gateway.metadata!.namespace!;
  const gwSpec = gateway.spec as {
    selector: Record<string, string>;
    servers: { port: { number: number; name: string; protocol: string }; hosts: string[]; tls?: Json }[];
  };
  const server = one(gwSpec.servers, "Gateway server");
  // The gateway's pod labels: EnvoyFilter workloadSelectors are matched against them.
  const deployment = one(
    objects.filter(
      (o) =>
        o.kind === "Deployment" &&
        labelsMatch(
          gwSpec.selector,
          (o.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels,
        ),
    ),
    "gateway Deployment",
  );
  const podLabels = (deployment.spec as { template: { metadata: { labels: Record<string, string> } } }).template
    .metadata.labels;

  const port = server.port.number;
  const protocol = server.port.protocol.toUpperCase();
  if (protocol !== "HTTP" && protocol !== "HTTPS")
    throw new Error(`istio gateway model: server protocol ${protocol} is not modelled`);
  const routeName = protocol === "HTTP" ? `http.${port}` : `https.${port}.${server.port.name}.${gwName}.${gwNamespace}`;
  const sniHosts =
    protocol === "HTTPS"
      ? [...new Set(server.hosts.map((h) => (h.includes("/") ? h.split("/")[1] : h)))].sort()
      : undefined;

  const bound = objects.filter(
    (o) =>
      o.kind === "VirtualService" &&
      ((o.spec as { gateways?: string[] }).gateways ?? []).some(
        (g) => g === gwName || g === `${gwNamespace}/${gwName}`,
      ),
  );
  if (bound.length > 0) throw new Error("istio gateway model: VirtualServices bound to the gateway are not modelled");
  const routeConfig: RouteConfiguration = {
    name: routeName,
    virtual_hosts: [{ name: `blackhole:${port}`, domains: ["*"], routes: [] }],
    ignore_port_in_host_matching: options.ignorePortInHostMatching ?? true,
  };
  let connectionManager: ConnectionManager = {
    rds: { route_config_name: routeName },
    http_protocol_options: {},
    upgrade_configs: [{ upgrade_type: "websocket" }],
    // Found missing by comparing with istiod's real output (istiod.test.ts): istiod sets it on every
    // connection manager (listener_builder.go, buildHTTPConnectionManager).
    stream_idle_timeout: "0s",
  };

  const filters = objects.filter(
    (o) =>
      o.kind === "EnvoyFilter" &&
      (o.metadata!.namespace === gwNamespace || o.metadata!.namespace === ROOT_NAMESPACE) &&
      labelsMatch(
        (o.spec as { workloadSelector?: { labels?: Record<string, string> } }).workloadSelector?.labels,
        podLabels,
      ),
  );
  const referenced = new Set<string>();
  for (const filter of filters) {
    for (const ref of (filter.metadata!.annotations?.["envoyfilter.istio.io/referenced-services"] ?? "")
      .split(",")
      .filter(Boolean))
      referenced.add(ref.trim());
    for (const patch of (
      filter.spec as { configPatches: { applyTo: string; match?: Json; patch: { operation: string; value: Json } }[] }
    ).configPatches) {
      const match = (patch.match ?? {}) as {
        context?: string;
        routeConfiguration?: { portNumber?: number; name?: string };
        listener?: { portNumber?: number; filterChain?: { filter?: { name?: string } } };
      };
      if (match.context !== undefined && match.context !== "GATEWAY" && match.context !== "ANY") continue;
      const value = protoNames(patch.patch.value) as Json;
      if (patch.applyTo === "VIRTUAL_HOST" && patch.patch.operation === "ADD") {
        const rc = match.routeConfiguration ?? {};
        if (
          (rc.name === undefined || rc.name === routeName) &&
          (rc.portNumber === undefined || rc.portNumber === port)
        ) {
          routeConfig.virtual_hosts.push(structuredClone(value) as unknown as VirtualHost);
        }
      } else if (patch.applyTo === "NETWORK_FILTER" && patch.patch.operation === "MERGE") {
        const listener = match.listener ?? {};
        const name = listener.filterChain?.filter?.name;
        if (
          (listener.portNumber === undefined || listener.portNumber === port) &&
          (name === undefined || name === HCM_NAME)
        ) {
          const typed = value.typed_config as Json | undefined;
          // MergeAnyWithAny needs the same type on both sides; otherwise Istio keeps the filter as is.
          if (typed?.["@type"] === HCM_TYPE) {
            const { "@type": _type, ...fields } = typed;
            connectionManager = protoMerge(structuredClone(connectionManager) as Json, fields) as ConnectionManager;
          }
        }
      } else {
        throw new Error(`istio gateway model: ${patch.applyTo} ${patch.patch.operation} is not modelled`);
      }
    }
  }
  if ("route_config" in connectionManager)
    throw new Error("istio gateway model: an inline route_config replaces Istio's RDS and is not modelled");

  const clusters = new Set<string>();
  const discovered = options.discoveredNamespaces ? new Set(options.discoveredNamespaces) : undefined;
  for (const service of objects.filter((o) => o.kind === "Service")) {
    const { name, namespace, annotations } = service.metadata as {
      name: string;
      namespace: string;
      annotations?: Record<string, string>;
    };
    if (discovered && !discovered.has(namespace)) continue;
    const exportTo = annotations?.["networking.istio.io/exportTo"]?.split(",").map((s) => s.trim()) ?? [
      ...(options.defaultServiceExportTo ?? ["*"]),
    ];
    const visible =
      !exportTo.includes("~") &&
      (exportTo.includes("*") ||
        exportTo.includes(gwNamespace) ||
        (exportTo.includes(".") && namespace === gwNamespace));
    if (!visible) continue;
    const host = `${name}.${namespace}.svc.cluster.local`;
    if (options.filterGatewayClusterConfig && !referenced.has(host) && !referenced.has(`${namespace}/${host}`))
      continue;
    for (const servicePort of (service.spec as { ports: { port: number }[] }).ports)
      clusters.add(`outbound|${servicePort.port}||${host}`);
  }

  return {
    port,
    routeConfig,
    connectionManager,
    clusters,
    sniHosts,
    rejected: validateRouteConfiguration(routeConfig),
  };
}

/** Envoy's RouteMatcher constructor checks: a message when the whole configuration is rejected. */
export function validateRouteConfiguration(rc: RouteConfiguration): string | undefined {
  const seen = new Set<string>();
  let wildcard = false;
  for (const vhost of rc.virtual_hosts) {
    for (const raw of vhost.domains) {
      const domain = raw.toLowerCase();
      if (domain === "*") {
        if (wildcard) return `Only a single wildcard domain is permitted in route ${rc.name}`;
        wildcard = true;
      } else if (seen.has(domain)) {
        return `Only unique values for domains are permitted. Duplicate entry of domain ${domain} in route ${rc.name}`;
      } else {
        seen.add(domain);
      }
    }
  }
  return undefined;
}

/** Envoy's HeaderUtility::getPortStart: where `:port` starts, if the authority ends in one. */
function portStart(authority: string): number {
  const colon = authority.lastIndexOf(":");
  if (colon < 0) return -1;
  if (authority.startsWith("[") && authority.lastIndexOf("]") > colon) return -1; // a bare IPv6 literal
  return /^\d+$/.test(authority.slice(colon + 1)) ? colon : -1;
}

/** RouteMatcher::findVirtualHost. */
export function findVirtualHost(rc: RouteConfiguration, authority: string): VirtualHost | undefined {
  let host = authority;
  if (rc.ignore_port_in_host_matching) {
    const start = portStart(host);
    if (start >= 0) host = host.slice(0, start);
  }
  host = host.toLowerCase();
  const domains = rc.virtual_hosts.flatMap((vhost) => vhost.domains.map((d) => ({ domain: d.toLowerCase(), vhost })));
  const exact = domains.find((d) => d.domain === host);
  if (exact) return exact.vhost;
  const byLength = (a: { domain: string }, b: { domain: string }) => b.domain.length - a.domain.length;
  // Wildcards must match at least one character of the host, longest first.
  const suffix = domains
    .filter((d) => d.domain.length > 1 && d.domain.startsWith("*"))
    .sort(byLength)
    .find((d) => host.length > d.domain.length - 1 && host.endsWith(d.domain.slice(1)));
  if (suffix) return suffix.vhost;
  const prefix = domains
    .filter((d) => d.domain.length > 1 && d.domain.endsWith("*"))
    .sort(byLength)
    .find((d) => host.length > d.domain.length - 1 && host.startsWith(d.domain.slice(0, -1)));
  if (prefix) return prefix.vhost;
  return domains.find((d) => d.domain === "*")?.vhost;
}

function headerMatches(matcher: HeaderMatcher, headers: Map<string, string>): boolean {
  const value = headers.get(matcher.name.toLowerCase());
  let matched: boolean;
  if (matcher.present_match !== undefined) matched = (value !== undefined) === matcher.present_match;
  else if (value === undefined) matched = false;
  else if (matcher.exact_match !== undefined) matched = value === matcher.exact_match;
  else if (matcher.string_match) {
    const m = matcher.string_match;
    const v = m.ignore_case ? value.toLowerCase() : value;
    const c = (s: string) => (m.ignore_case ? s.toLowerCase() : s);
    matched =
      m.exact !== undefined
        ? v === c(m.exact)
        : m.prefix !== undefined
          ? v.startsWith(c(m.prefix))
          : m.suffix !== undefined
            ? v.endsWith(c(m.suffix))
            : m.contains !== undefined
              ? v.includes(c(m.contains))
              : false;
  } else matched = value !== undefined;
  return matcher.invert_match ? !matched : matched;
}

/** RouteEntryImplBase::matchRoute for the route kinds Istio and our filters use. */
function routeMatches(route: EnvoyRoute, method: string, headers: Map<string, string>): boolean {
  const isConnect = method === "CONNECT";
  if (route.match.connect_matcher !== undefined) {
    if (!isConnect) return false;
  } else {
    const path = headers.get(":path");
    // A CONNECT has no :path: path and prefix matchers never match it.
    if (path === undefined) return false;
    if (route.match.prefix !== undefined && !path.startsWith(route.match.prefix)) return false;
    if (route.match.path !== undefined && path !== route.match.path) return false;
  }
  return (route.match.headers ?? []).every((m) => headerMatches(m, headers));
}

export interface Decision {
  readonly status: number;
  /** Envoy's response code details / flag, for messages. */
  readonly details: string;
  readonly cluster?: string;
}

/** How the gateway answers a request: the status, or 200 with the cluster a CONNECT tunnels to. */
export function decide(
  envoy: GatewayEnvoy,
  request: { method: string; authority: string; path?: string; httpVersion: "1.0" | "1.1" },
): Decision {
  if (envoy.rejected) return { status: 404, details: `route configuration rejected: ${envoy.rejected}` };
  if (request.httpVersion === "1.0" && !envoy.connectionManager.http_protocol_options.accept_http_10)
    return { status: 426, details: "low_version" };
  const headers = new Map([
    [":authority", request.authority],
    [":method", request.method],
  ]);
  if (request.path !== undefined) headers.set(":path", request.path);
  const vhost = findVirtualHost(envoy.routeConfig, request.authority);
  const route = vhost?.routes.find((r) => routeMatches(r, request.method, headers));
  if (!route) return { status: 404, details: "route_not_found (NR)" };
  if (request.method === "CONNECT") {
    // The route's upgrade config decides when it names CONNECT; otherwise the HCM's must allow it
    // (envoy source/extensions/filters/network/http_connection_manager/config.cc, createUpgradeFilterChain).
    const connectIn = (configs: { upgrade_type: string; enabled?: boolean }[] | undefined) =>
      configs?.find((c) => c.upgrade_type.toUpperCase() === "CONNECT");
    const decider = connectIn(route.route?.upgrade_configs) ?? connectIn(envoy.connectionManager.upgrade_configs);
    if (!decider || decider.enabled === false) return { status: 403, details: "upgrade_failed" };
  }
  const cluster = route.route?.cluster;
  if (!cluster) throw new Error("istio gateway model: only routes to a cluster are modelled");
  if (!envoy.clusters.has(cluster)) return { status: 503, details: "cluster_not_found (NC)", cluster };
  return { status: 200, details: "via_upstream", cluster };
}

const REASONS: Record<number, string> = {
  200: "OK",
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  426: "Upgrade Required",
  431: "Request Header Fields Too Large",
  503: "Service Unavailable",
};
const MAX_HEAD = 60 * 1024; // Envoy's default max_request_headers_kb

export interface RunningGatewayModel {
  readonly port: number;
  /** Each request's decision, in order (for assertions). */
  readonly log: readonly (Decision & { method: string; authority: string })[];
  close(): Promise<void>;
}

/**
 * Serves the modelled gateway on 127.0.0.1. `endpoints` maps a cluster name to the local port of
 * its one endpoint. `tlsMaterial` is needed when the Gateway server is HTTPS.
 */
export function startGatewayModel(
  envoy: GatewayEnvoy,
  endpoints: Record<string, number>,
  tlsMaterial?: { cert: Buffer; key: Buffer },
): Promise<RunningGatewayModel> {
  if (envoy.sniHosts && !tlsMaterial)
    throw new Error("istio gateway model: the Gateway server is HTTPS; give the test certificate");
  const log: (Decision & { method: string; authority: string })[] = [];
  const sockets = new Set<net.Socket>();

  const onConnection = (client: net.Socket) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    let head = Buffer.alloc(0);
    const reply = (status: number) =>
      client.end(
        `HTTP/1.1 ${status} ${REASONS[status] ?? ""}\r\ncontent-length: 0\r\nserver: istio-envoy\r\nconnection: close\r\n\r\n`,
      );
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > MAX_HEAD) reply(431);
        return;
      }
      client.off("data", onData);
      client.pause();
      const lines = head.subarray(0, end).toString("latin1").split("\r\n");
      const rest = head.subarray(end + 4);
      const requestLine = /^([A-Z]+) (\S+) HTTP\/1\.([01])$/.exec(lines[0]);
      const headers = new Map<string, string>();
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(":");
        if (colon <= 0) return reply(400);
        headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      if (!requestLine) return reply(400);
      const [, method, target, minor] = requestLine;
      const isConnect = method === "CONNECT";
      // A CONNECT's authority is its request-target, host:port; the Host header does not count.
      if (isConnect && !/^[A-Za-z0-9.-]+:\d{1,5}$/.test(target)) return reply(400);
      const authority = isConnect ? target : headers.get("host");
      if (authority === undefined) return reply(400);
      const decision = decide(envoy, {
        method,
        authority,
        path: isConnect ? undefined : target,
        httpVersion: minor === "0" ? "1.0" : "1.1",
      });
      log.push({ ...decision, method, authority });
      if (decision.status !== 200 || !isConnect) return reply(decision.status === 200 ? 404 : decision.status);
      const endpoint = endpoints[decision.cluster!];
      if (endpoint === undefined) {
        log[log.length - 1] = { ...decision, status: 503, details: "no_healthy_upstream (UH)", method, authority };
        return reply(503);
      }
      const upstream = net.connect({ host: "127.0.0.1", port: endpoint, allowHalfOpen: true }, () => {
        client.write("HTTP/1.1 200 OK\r\n\r\n");
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      sockets.add(upstream);
      upstream.on("close", () => sockets.delete(upstream));
      upstream.on("error", () =>
        client.writable && !client.destroyed && upstream.connecting ? reply(503) : client.destroy(),
      );
      client.on("close", () => upstream.destroy());
    };
    client.on("data", onData);
  };

  const server: net.Server = envoy.sniHosts
    ? tls
        .createServer({ cert: tlsMaterial!.cert, key: tlsMaterial!.key, minVersion: "TLSv1.2", allowHalfOpen: true })
        .on("secureConnection", (socket: tls.TLSSocket) => {
          // The server's filter chain matches only its hosts' SNI; anything else finds no filter chain.
          const sni = (socket as tls.TLSSocket & { servername?: string | false }).servername;
          const anyHost = envoy.sniHosts!.includes("*");
          if (
            !anyHost &&
            !(
              typeof sni === "string" &&
              envoy.sniHosts!.some((h) => h === sni || (h.startsWith("*.") && sni.endsWith(h.slice(1))))
            )
          ) {
            socket.destroy();
            return;
          }
          onConnection(socket);
        })
    : net.createServer({ allowHalfOpen: true }, onConnection);

  // Every accepted connection, TLS handshakes included, so that close() ends them all: half-open
  // tunnels do not close by themselves.
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      resolve({
        port: (server.address() as net.AddressInfo).port,
        log,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
