/**
 * A model of Kubernetes NetworkPolicy, for tests that walk rendered manifests: would a connection
 * from one endpoint to a pod's port be allowed? Written from the Kubernetes documentation
 * (https://kubernetes.io/docs/concepts/services-networking/network-policies/) and the API
 * reference of networking.k8s.io/v1 NetworkPolicy:
 *
 * - a pod is isolated for ingress (egress) when some policy of its namespace selects it and lists
 *   Ingress (Egress) in policyTypes; policyTypes left out means Ingress, plus Egress when the policy
 *   has egress rules;
 * - an isolated pod admits only what some selecting policy allows; policies add up; a connection
 *   needs the source's egress and the destination's ingress;
 * - a rule with no `from`/`to` matches every peer, with no `ports` every port; a peer with both
 *   namespaceSelector and podSelector matches pods in those namespaces with those labels (AND);
 *   podSelector alone means the policy's namespace; an empty selector matches everything; ipBlock
 *   matches addresses (cluster-external endpoints here) in the CIDR but not in `except`;
 * - a named port is the destination pod's container port of that name; endPort makes a range;
 * - traffic from the pod's own node is always allowed (kubelet probes), so it is not modelled.
 *
 * Namespaces carry only the `kubernetes.io/metadata.name` label (set by the API server on every
 * namespace). Not modelled, and refused rather than guessed: matchExpressions.
 */
import type { ObjectLike } from "./validate";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A pod: its namespace, labels and container ports. */
export interface PodEndpoint {
  readonly namespace: string;
  readonly labels: Record<string, string>;
  readonly ports?: readonly { name?: string; containerPort: number; protocol?: string }[];
  readonly name?: string;
}
/** Something outside the cluster, by address. */
export interface ExternalEndpoint {
  readonly ip: string;
}
export type Endpoint = PodEndpoint | ExternalEndpoint;

const isPod = (e: Endpoint): e is PodEndpoint => "namespace" in e;

function selects(selector: Json | undefined, labels: Record<string, string>): boolean {
  if (selector === undefined) return false;
  if (selector.matchExpressions?.length) throw new Error("network policy model: matchExpressions are not modelled");
  return Object.entries((selector.matchLabels ?? {}) as Record<string, string>).every(([k, v]) => labels[k] === v);
}

function ipToNumber(ip: string): number {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255))
    throw new Error(`network policy model: only IPv4 is modelled, not ${ip}`);
  return ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
}
function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split("/");
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return (ipToNumber(ip) & mask) === (ipToNumber(base) & mask);
}

function peerMatches(peer: Json, policyNamespace: string, endpoint: Endpoint): boolean {
  if (peer.ipBlock) {
    if (isPod(endpoint)) return false; // pod addresses are not modelled; the stack names pods by label
    return (
      inCidr(endpoint.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((c: string) => inCidr(endpoint.ip, c))
    );
  }
  if (!isPod(endpoint)) return false;
  const namespaceOk =
    peer.namespaceSelector !== undefined
      ? selects(peer.namespaceSelector, { "kubernetes.io/metadata.name": endpoint.namespace })
      : endpoint.namespace === policyNamespace;
  const podOk = peer.podSelector === undefined || selects(peer.podSelector, endpoint.labels);
  return namespaceOk && podOk;
}

function portMatches(rulePort: Json, port: number, protocol: string, destination: PodEndpoint | undefined): boolean {
  if ((rulePort.protocol ?? "TCP") !== protocol) return false;
  if (rulePort.port === undefined) return true;
  let number = rulePort.port as number | string;
  if (typeof number === "string") {
    const named = destination?.ports?.find((p) => p.name === number && (p.protocol ?? "TCP") === protocol);
    if (!named) return false;
    number = named.containerPort;
  }
  return rulePort.endPort !== undefined ? port >= number && port <= rulePort.endPort : port === number;
}

function typesOf(spec: Json): string[] {
  return spec.policyTypes ?? ["Ingress", ...(spec.egress ? ["Egress"] : [])];
}

/** The NetworkPolicies among rendered objects. */
export function networkPolicies(objects: readonly ObjectLike[]): (ObjectLike & { spec: Json })[] {
  return objects.filter((o) => o.kind === "NetworkPolicy") as (ObjectLike & { spec: Json })[];
}

function allowedOneWay(
  policies: readonly (ObjectLike & { spec: Json })[],
  direction: "Ingress" | "Egress",
  subject: PodEndpoint,
  peer: Endpoint,
  port: number,
  protocol: string,
  destination: PodEndpoint | undefined,
): boolean {
  const selecting = policies.filter(
    (p) =>
      p.metadata?.namespace === subject.namespace &&
      selects(p.spec.podSelector ?? {}, subject.labels) &&
      typesOf(p.spec).includes(direction),
  );
  if (selecting.length === 0) return true;
  const rulesKey = direction === "Ingress" ? "ingress" : "egress";
  const peersKey = direction === "Ingress" ? "from" : "to";
  return selecting.some((p) =>
    ((p.spec[rulesKey] ?? []) as Json[]).some(
      (rule) =>
        (rule[peersKey] === undefined ||
          rule[peersKey].length === 0 ||
          rule[peersKey].some((peerSpec: Json) => peerMatches(peerSpec, p.metadata!.namespace!, peer))) &&
        (rule.ports === undefined ||
          rule.ports.length === 0 ||
          rule.ports.some((rp: Json) => portMatches(rp, port, protocol, destination))),
    ),
  );
}

/** Whether the policies let `from` open a connection to `to` on the port (the destination's container port). */
export function allows(
  policies: readonly (ObjectLike & { spec: Json })[],
  from: Endpoint,
  to: Endpoint,
  port: number,
  protocol = "TCP",
): boolean {
  const destination = isPod(to) ? to : undefined;
  const egress = !isPod(from) || allowedOneWay(policies, "Egress", from, to, port, protocol, destination);
  const ingress = !isPod(to) || allowedOneWay(policies, "Ingress", to, from, port, protocol, destination);
  return egress && ingress;
}

/** Whether some policy admits the port on the pod from anywhere at all (any source some rule names). */
export function portAdmitted(
  policies: readonly (ObjectLike & { spec: Json })[],
  pod: PodEndpoint,
  port: number,
  protocol = "TCP",
): boolean {
  const selecting = policies.filter(
    (p) =>
      p.metadata?.namespace === pod.namespace &&
      selects(p.spec.podSelector ?? {}, pod.labels) &&
      typesOf(p.spec).includes("Ingress"),
  );
  if (selecting.length === 0) return true;
  return selecting.some((p) =>
    ((p.spec.ingress ?? []) as Json[]).some(
      (rule) =>
        rule.ports === undefined ||
        rule.ports.length === 0 ||
        rule.ports.some((rp: Json) => portMatches(rp, port, protocol, pod)),
    ),
  );
}

/** The pods the rendered workloads would run (one per pod template), with their container ports. */
export function podsOf(objects: readonly ObjectLike[]): PodEndpoint[] {
  const pods: PodEndpoint[] = [];
  for (const o of objects as (ObjectLike & { spec?: Json })[]) {
    if (!["Deployment", "StatefulSet", "DaemonSet"].includes(o.kind)) continue;
    const template = o.spec?.template;
    pods.push({
      name: `${o.kind}/${o.metadata?.namespace}/${o.metadata?.name}`,
      namespace: o.metadata!.namespace!,
      labels: template?.metadata?.labels ?? {},
      ports: ((template?.spec?.containers ?? []) as Json[]).flatMap((c) => c.ports ?? []),
    });
  }
  return pods;
}
