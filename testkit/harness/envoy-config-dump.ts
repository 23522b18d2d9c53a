/** What a real Envoy applies, read from its config dump (admin /config_dump, e.g. `pilot-agent request GET config_dump`). */

/**
 * The timeouts the CONNECT gateway's Envoy applies, from its config dump (admin /config_dump):
 * each workspace route's `idle_timeout` (envoy.config.route.v3.RouteAction) and the listeners'
 * HTTP connection managers' `stream_idle_timeout` (unset: Envoy's default, 5 minutes; a route's
 * idle_timeout overrides it, envoy route_components.proto).
 */
export function envoyTimeouts(
  dump: { configs: Record<string, unknown>[] },
  hosts: string[],
): { routes: Record<string, string>; streamIdle: string[] } {
  const routes: Record<string, string> = {};
  const streamIdle = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (!value || typeof value !== "object") return;
    const object = value as Record<string, unknown>;
    const domains = object.domains as string[] | undefined;
    if (domains && Array.isArray(object.routes))
      // A workspace's virtual host: its Service's name, the port pinned by the route's :authority match.
      for (const domain of domains.filter((d) => hosts.includes(d)))
        for (const route of object.routes as { route?: { idle_timeout?: string } }[])
          if (route.route?.idle_timeout) routes[domain] = route.route.idle_timeout;
    if (
      object["@type"] ===
      "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
    )
      streamIdle.add((object.stream_idle_timeout as string | undefined) ?? "default (300s)");
    Object.values(object).forEach(walk);
  };
  walk(dump.configs);
  return { routes, streamIdle: [...streamIdle] };
}
