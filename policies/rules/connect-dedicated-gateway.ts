/**
 * `entryway-connect-dedicated-gateway`, mandatory: an EnvoyFilter patch that enables CONNECT does
 * so only on a gateway (match.context GATEWAY, never sidecars), bound to one port of its own (never
 * 80 or 443, nor their 8080/8443 targets), on the dedicated CONNECT gateway (a workloadSelector that
 * is not the shared istio=ingressgateway), so plain web traffic never meets a CONNECT route.
 *
 * Upstream:
 * - https://istio.io/latest/docs/reference/config/networking/envoy-filter/ (workloadSelector: with
 *   none, a patch applies to every proxy of the namespace, or of the mesh in the root namespace;
 *   match.context GATEWAY or SIDECAR_*; listener and routeConfiguration portNumber);
 * - https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/http/upgrades (CONNECT is
 *   enabled per HTTP connection manager or route by upgrade_configs / connect_matcher);
 * - istio manifests/charts/gateways/istio-ingress/values.yaml: the shared istio-ingressgateway's
 *   Service (labels istio=ingressgateway) maps 80 and 443 to the targets 8080 and 8443.
 */
import { label, resourcePolicy, type K8sObject, type Obj } from "./helpers";

/** The CONNECT ports Istio's shared ingress uses for plain web traffic (service and target ports). */
export const FORBIDDEN_CONNECT_PORTS = [80, 443, 8080, 8443];

const mentionsConnect = (value: unknown) =>
  /"upgrade_type":\s*"CONNECT"|"connect_matcher"|"allow_connect":\s*true/i.test(JSON.stringify(value ?? {}));

export function checkConnectDedicatedGateway(o: K8sObject): string[] {
  if (o.kind !== "EnvoyFilter") return [];
  const spec = (o.spec as Obj | undefined) ?? {};
  const problems: string[] = [];
  for (const [i, patch] of (spec.configPatches ?? []).entries()) {
    if (!mentionsConnect(patch?.patch?.value)) continue;
    const where = `${label(o)} patch ${i}`;
    const match = patch.match ?? {};
    if (match.context !== "GATEWAY")
      problems.push(`${where}: CONNECT only on a gateway (match.context GATEWAY), never on sidecars`);
    const port = match.listener?.portNumber ?? match.routeConfiguration?.portNumber;
    if (typeof port !== "number")
      problems.push(
        `${where}: CONNECT must be bound to one dedicated port (match.listener.portNumber or routeConfiguration.portNumber)`,
      );
    else if (FORBIDDEN_CONNECT_PORTS.includes(port))
      problems.push(`${where}: CONNECT is never enabled on port ${port} (web traffic ports 80/443 and their targets)`);
    const selector: Record<string, string> = spec.workloadSelector?.labels ?? {};
    if (Object.keys(selector).length === 0) {
      problems.push(`${where}: CONNECT must select the dedicated CONNECT gateway (workloadSelector), not every proxy`);
    } else if (selector.istio === "ingressgateway") {
      problems.push(
        `${where}: CONNECT must not be enabled on the shared istio=ingressgateway; use the dedicated CONNECT gateway`,
      );
    }
  }
  return problems;
}

export const connectDedicatedGateway = resourcePolicy(
  "entryway-connect-dedicated-gateway",
  "CONNECT is enabled only on the dedicated gateway's own port, never on 80 or 443.",
  "mandatory",
  checkConnectDedicatedGateway,
);
