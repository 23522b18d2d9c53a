// The Istio and Envoy documents of the SSH path: the gateway's one listener-level EnvoyFilter, each
// workspace's VIRTUAL_HOST patch, and the route configuration name Istio gives the port.
import { WORKSPACE_SERVICE_PORT } from "./contract";

/**
 * The name of the Envoy route configuration Istio gives a gateway port: `http.<port>` for a plain
 * HTTP server, `https.<port>.<portName>.<gatewayName>.<namespace>` for a TLS-terminating one
 * (istio pilot/pkg/model gateway.go, gatewayRDSRouteName).
 * @internal
 */
export function gatewayRouteConfigurationName(
  port: number,
  tls: { portName: string; gatewayName: string; namespace: string } | undefined,
): string {
  return tls ? `https.${port}.${tls.portName}.${tls.gatewayName}.${tls.namespace}` : `http.${port}`;
}

/** The port name of the Gateway server (part of the TLS route configuration name). @internal */
export const CONNECT_PORT_NAME = "connect";

/**
 * What the connect filter merges into the port's HTTP connection manager: CONNECT upgrades over
 * HTTP/1.1, HTTP/1.0 and HTTP/2, and no idle cut of a stream. @internal
 */
export const CONNECT_CONNECTION_MANAGER = {
  "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
  upgrade_configs: [{ upgrade_type: "CONNECT" }],
  // ncat, socat and Windows' connect.exe send HTTP/1.0 CONNECT.
  http_protocol_options: { accept_http_10: true },
  http2_protocol_options: { allow_connect: true },
  // An idle SSH session must not be cut by the connection manager.
  stream_idle_timeout: "0s",
};

/** The spec of the one listener-level EnvoyFilter: CONNECT on the port, and nothing per workspace. @internal */
export function connectFilterSpec(selector: Record<string, string>, port: number): Record<string, unknown> {
  return {
    workloadSelector: { labels: selector },
    configPatches: [
      {
        applyTo: "NETWORK_FILTER",
        match: {
          context: "GATEWAY",
          listener: {
            portNumber: port,
            filterChain: { filter: { name: "envoy.filters.network.http_connection_manager" } },
          },
        },
        patch: {
          operation: "MERGE",
          value: {
            typed_config: CONNECT_CONNECTION_MANAGER,
          },
        },
      },
    ],
  };
}

/**
 * With PILOT_FILTER_GATEWAY_CLUSTER_CONFIG=true istiod sends a gateway only the clusters of services
 * something references; a route added by EnvoyFilter does not count, and its CONNECT would fail
 * with 503 (NC: no cluster). Istio >= 1.26 counts the services an EnvoyFilter names in this
 * annotation (istio pilot/pkg/model/envoyfilter.go convertToEnvoyFilterWrapper, read by
 * push_context.go extraServicesForProxy; istio PR 55038). Older Istio ignores it.
 * @internal
 */
export function workspaceRouteFilterAnnotations(namespace: string, fqdn: string): Record<string, string> {
  return { "envoyfilter.istio.io/referenced-services": `${namespace}/${fqdn}` };
}

/**
 * The workspace's one patch: a virtual host for the domain `<fqdn>` whose one route takes only
 * `CONNECT <fqdn>:22`, to a static cluster.
 *
 * The domain carries no port because Istio builds every gateway route configuration with
 * `ignore_port_in_host_matching: true` (istio pilot/pkg/networking/core/gateway.go,
 * buildGatewayHTTPRouteConfig), and Envoy then cuts the port from the request's authority, never
 * from `domains`, before the virtual-host lookup (envoy source/common/router/config_impl.cc,
 * RouteMatcher::findVirtualHost): a domain `<fqdn>:22` would never match. The port is pinned by
 * the route's exact `:authority` header match instead, which sees the authority as sent (for
 * CONNECT over HTTP/1 the request-target `host:port`: envoy source/common/http/http1/codec_impl.cc,
 * ServerConnectionImpl::handlePath), so CONNECT to the host on any other port gets 404.
 * @internal
 */
export function workspaceRouteFilterSpec(route: {
  selector: Record<string, string>;
  port: number;
  routeConfigurationName: string;
  virtualHostName: string;
  fqdn: string;
  idleTimeout: string;
}): Record<string, unknown> {
  return {
    workloadSelector: { labels: route.selector },
    configPatches: [
      {
        applyTo: "VIRTUAL_HOST",
        match: {
          context: "GATEWAY",
          routeConfiguration: { portNumber: route.port, name: route.routeConfigurationName },
        },
        patch: {
          operation: "ADD",
          value: {
            name: route.virtualHostName,
            domains: [route.fqdn],
            routes: [
              {
                match: {
                  connect_matcher: {},
                  headers: [{ name: ":authority", string_match: { exact: `${route.fqdn}:${WORKSPACE_SERVICE_PORT}` } }],
                },
                route: {
                  cluster: `outbound|${WORKSPACE_SERVICE_PORT}||${route.fqdn}`,
                  // Routes added by EnvoyFilter default to a 15 s timeout: an SSH session has none.
                  timeout: "0s",
                  idle_timeout: route.idleTimeout,
                  upgrade_configs: [{ upgrade_type: "CONNECT", connect_config: {} }],
                },
              },
            ],
          },
        },
      },
    ],
  };
}
