/**
 * A model of Kubernetes NetworkPolicy ingress admission, for checking that rendered policies let
 * a given pod reach a given pod and port. It follows the API's documented semantics
 * (https://kubernetes.io/docs/concepts/services-networking/network-policies/ and the
 * networking.k8s.io/v1 NetworkPolicySpec field docs in kubernetes/api networking/v1/types.go):
 *  - a pod is isolated for ingress when any policy in its namespace selects it and has "Ingress"
 *    in policyTypes (policyTypes left out means ["Ingress"], plus "Egress" when egress rules exist);
 *  - policies add up: a connection to an isolated pod is allowed when any selecting policy has a
 *    rule whose `from` is empty or has a matching peer, and whose `ports` are empty or name the port
 *    (a number, or the name of a container port of the target), protocol TCP by default;
 *  - a peer with only podSelector matches pods in the policy's own namespace; with only
 *    namespaceSelector, every pod in matching namespaces; with both, matching pods in matching
 *    namespaces. Namespaces carry kubernetes.io/metadata.name. ipBlock peers match no pod here
 *    (pod addresses are unknown to a rendering; the cluster may or may not include them).
 * Only what the chart uses is modelled: matchLabels and matchExpressions, TCP, no endPort.
 */

type Labels = Record<string, string>;
interface Selector {
  matchLabels?: Labels;
  matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[];
}
interface Peer {
  podSelector?: Selector;
  namespaceSelector?: Selector;
  ipBlock?: unknown;
}
interface PolicyPort {
  port?: number | string;
  protocol?: string;
}
export interface NetworkPolicy {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: {
    podSelector: Selector;
    policyTypes?: string[];
    ingress?: { from?: Peer[]; ports?: PolicyPort[] }[];
    egress?: unknown[];
  };
}

/** A pod as the model sees it: where it is, its labels, and its named container ports. */
export interface PodLike {
  namespace: string;
  labels: Labels;
  namedPorts?: Record<string, number>;
}

export function selects(selector: Selector | undefined, labels: Labels): boolean {
  if (!selector) return false;
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpressions = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    switch (operator) {
      case "In": return key in labels && values.includes(labels[key]);
      case "NotIn": return !(key in labels) || !values.includes(labels[key]);
      case "Exists": return key in labels;
      case "DoesNotExist": return !(key in labels);
    }
  });
  return byLabels && byExpressions;
}

function policyTypes(policy: NetworkPolicy): string[] {
  return policy.spec.policyTypes ?? ["Ingress", ...(policy.spec.egress ? ["Egress"] : [])];
}

function peerMatches(peer: Peer, policyNamespace: string, from: PodLike): boolean {
  if (peer.ipBlock) return false;
  const namespaceOk = peer.namespaceSelector
    ? selects(peer.namespaceSelector, { "kubernetes.io/metadata.name": from.namespace })
    : from.namespace === policyNamespace;
  const podOk = peer.podSelector ? selects(peer.podSelector, from.labels) : true;
  return namespaceOk && podOk;
}

function portMatches(port: PolicyPort, target: PodLike, targetPort: number): boolean {
  if ((port.protocol ?? "TCP") !== "TCP") return false;
  if (port.port === undefined) return true;
  return typeof port.port === "number" ? port.port === targetPort : target.namedPorts?.[port.port] === targetPort;
}

/** The policies (of any namespace) that isolate `pod` in `direction`. */
export function isolating(policies: readonly NetworkPolicy[], pod: PodLike, direction: "Ingress" | "Egress"): NetworkPolicy[] {
  return policies.filter((p) => (p.metadata.namespace ?? pod.namespace) === pod.namespace && selects(p.spec.podSelector, pod.labels) && policyTypes(p).includes(direction));
}

/** Whether `from` may open a TCP connection to `target` on `targetPort`, by ingress rules. */
export function ingressAllowed(policies: readonly NetworkPolicy[], from: PodLike, target: PodLike, targetPort: number): boolean {
  const selecting = isolating(policies, target, "Ingress");
  if (selecting.length === 0) return true;
  return selecting.some((policy) =>
    (policy.spec.ingress ?? []).some((rule) =>
      (!rule.from || rule.from.length === 0 || rule.from.some((peer) => peerMatches(peer, policy.metadata.namespace ?? target.namespace, from))) &&
      (!rule.ports || rule.ports.length === 0 || rule.ports.some((port) => portMatches(port, target, targetPort)))));
}
