/**
 * `entryway-connect-static-clusters`, mandatory: an EnvoyFilter's routes go only to static
 * `outbound|<port>||<fqdn>` clusters, and no patch brings in a dynamic forward proxy, an original
 * destination cluster or a cluster header: each of those lets a client pick any destination, which
 * makes the CONNECT gateway an open proxy.
 *
 * Upstream:
 * - https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/http/upgrades (CONNECT support:
 *   a CONNECT route tunnels to its route's cluster);
 * - https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_filters/dynamic_forward_proxy_filter,
 *   https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/service_discovery#original-destination
 *   and the route's `cluster_header` (envoy config/route/v3 RouteAction): the destination comes from the request;
 * - istio pilot/pkg/model/service.go (BuildSubsetKey): Istio's outbound cluster names,
 *   `outbound|<port>|<subset>|<fqdn>` (docs/upstream-facts.md, "Istio and Envoy").
 */
import { label, resourcePolicy, type K8sObject, type Obj } from "./helpers";

/** A static Istio outbound cluster: outbound|<port>||<fqdn>. */
const STATIC_CLUSTER = /^outbound\|\d{1,5}\|\|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const OPEN_PROXY_MARKERS = [
  /dynamic_forward_proxy/i,
  /original_dst/i,
  /ORIGINAL_DST/,
  /cluster_header/i,
  /clusterHeader/,
];

/** Every object under `node` that has a `route` with routing fields, wherever it sits. */
function routesIn(node: unknown, found: Obj[] = []): Obj[] {
  if (Array.isArray(node)) node.forEach((n) => routesIn(n, found));
  else if (typeof node === "object" && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "route" && typeof value === "object" && value !== null && !Array.isArray(value))
        found.push(value as Obj);
      routesIn(value, found);
    }
  }
  return found;
}

export function checkConnectStaticClusters(o: K8sObject): string[] {
  if (o.kind !== "EnvoyFilter") return [];
  const problems: string[] = [];
  for (const [i, patch] of ((o.spec as Obj | undefined)?.configPatches ?? []).entries()) {
    const value = patch?.patch?.value;
    const text = JSON.stringify(value ?? {});
    for (const marker of OPEN_PROXY_MARKERS) {
      if (marker.test(text))
        problems.push(
          `${label(o)} patch ${i}: ${marker.source} makes an open proxy; CONNECT routes go only to static outbound|port||fqdn clusters`,
        );
    }
    for (const route of routesIn(value)) {
      if (typeof route.cluster !== "string" || !STATIC_CLUSTER.test(route.cluster)) {
        problems.push(
          `${label(o)} patch ${i}: route cluster ${JSON.stringify(route.cluster ?? Object.keys(route))} is not a static outbound|port||fqdn cluster`,
        );
      }
    }
  }
  return problems;
}

export const connectStaticClusters = resourcePolicy(
  "entryway-connect-static-clusters",
  "CONNECT routes go only to static outbound|port||fqdn clusters: no dynamic forward proxy, original destination or cluster header.",
  "mandatory",
  checkConnectStaticClusters,
);
