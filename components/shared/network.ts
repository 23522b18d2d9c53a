/**
 * NetworkPolicy pieces shared by every component: the in-cluster peers the stack's workloads talk
 * to (cluster DNS, istiod), the DNS egress rule, the two namespace-wide policies the Stack puts
 * in every namespace it owns (a default deny of all ingress and egress, and DNS for every pod), and
 * the shapes of the peers and egress rules the settings take (an SSH workspace's `egress`,
 * AnsibleForms' `allowFrom` and `allowEgressTo`), which the components pass on as written.
 * charts/entryway/templates/_helpers.tpl (entryway.dnsEgressRule, entryway.namespacePolicies)
 * writes the same objects.
 *
 * Semantics relied on (https://kubernetes.io/docs/concepts/services-networking/network-policies/):
 * a pod selected by a policy with an Ingress/Egress policyType admits only what some policy
 * selecting it allows, policies add up, and an empty podSelector selects every pod of the
 * namespace. Namespaces are matched by the `kubernetes.io/metadata.name` label, which the API
 * server sets on every namespace.
 */
import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import type { ValueOf } from "./enum";
import { objectName } from "./names";

type K8sNetworkPolicyPeer = k8s.types.input.networking.v1.NetworkPolicyPeer;
type K8sNetworkPolicyEgressRule = k8s.types.input.networking.v1.NetworkPolicyEgressRule;
type NetworkPolicySpec = k8s.types.input.networking.v1.NetworkPolicySpec;

/** A NetworkPolicy port's protocol. */
export const NetworkProtocol = { TCP: "TCP", UDP: "UDP", SCTP: "SCTP" } as const;
export type NetworkProtocol = ValueOf<typeof NetworkProtocol>;

/** Objects by their labels. */
export interface MatchLabels {
  /** Labels the selected objects carry (none or empty: every object). */
  matchLabels?: Record<string, string>;
}

/** A block of addresses. */
export interface IpBlock {
  /** A CIDR. */
  cidr: string;
  /** CIDRs left out. */
  except?: string[];
}

/**
 * Pods, namespaces or addresses a NetworkPolicy rule admits or reaches: pods by labels,
 * namespaces by labels (both: those pods in those namespaces), or an IP block. Kubernetes refuses
 * a peer with none of them.
 * @minProperties 1
 */
export interface NetworkPolicyPeer {
  /** Namespaces by their labels (e.g. kubernetes.io/metadata.name). */
  namespaceSelector?: MatchLabels;
  /** Pods by their labels (in the policy's namespace, or in those namespaceSelector picks). */
  podSelector?: MatchLabels;
  /** Addresses: a CIDR and the CIDRs left out. */
  ipBlock?: IpBlock;
}

/**
 * A port or port range a NetworkPolicy rule opens. A port may be left out (every port of the
 * protocol), but not under a range's end: Kubernetes refuses an endPort without a port.
 * @if {"required": ["endPort"]}
 * @then {"required": ["port"]}
 */
export interface NetworkPolicyPort {
  /**
   * The port (none: every port of the protocol).
   * @minimum 1
   * @maximum 65535
   * @asType integer
   */
  port?: number;
  /**
   * The end of a port range from `port` (which it needs).
   * @minimum 1
   * @maximum 65535
   * @asType integer
   */
  endPort?: number;
  /** The protocol (default TCP). */
  protocol?: NetworkProtocol;
}

/** A NetworkPolicy egress rule: where to (peers) and on which ports; an empty field means any. */
export interface NetworkPolicyEgressRule {
  /** The destinations (namespaceSelector, podSelector, ipBlock); none: anywhere. */
  to?: NetworkPolicyPeer[];
  /** The ports; none: every port. */
  ports?: NetworkPolicyPort[];
}

/** Pods in one namespace, by label. */
export interface InClusterPeer {
  /**
   * The namespace.
   * @pattern ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$
   */
  namespace: string;
  /**
   * Labels of the pods.
   * @minProperties 1
   */
  podSelector: Record<string, string>;
}

/** The cluster DNS: CoreDNS/kube-dns keeps the `k8s-app: kube-dns` label in kube-system. @internal */
export const DEFAULT_DNS: InClusterPeer = { namespace: "kube-system", podSelector: { "k8s-app": "kube-dns" } };
/** istiod, in Istio's default namespace (its pods carry `app: istiod`, whatever the revision). @internal */
export const DEFAULT_ISTIOD: InClusterPeer = { namespace: "istio-system", podSelector: { app: "istiod" } };
/** istiod's port for xDS and certificates over TLS (the injected proxy's CA_ADDR and discovery address). @internal */
export const ISTIOD_XDS_PORT = 15012;
/** An Istio proxy's readiness port (the injected readinessProbe) and its Envoy metrics port. @internal */
export const ISTIO_HEALTH_PORT = 15021;
/** @internal */
export const ISTIO_METRICS_PORT = 15090;

/** A peer for pods in a namespace known by name. @internal */
export function peerIn(peer: InClusterPeer): K8sNetworkPolicyPeer {
  return {
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": peer.namespace } },
    podSelector: { matchLabels: peer.podSelector },
  };
}

/** Egress to the cluster DNS on 53, UDP and TCP (TCP for answers over 512 bytes). @internal */
export function dnsEgressRule(dns: InClusterPeer = DEFAULT_DNS): K8sNetworkPolicyEgressRule {
  return {
    to: [peerIn(dns)],
    ports: [
      { port: 53, protocol: "UDP" },
      { port: 53, protocol: "TCP" },
    ],
  };
}

/** Every pod of the namespace: no ingress, no egress, unless another policy allows it. @internal */
export function defaultDenySpec(): NetworkPolicySpec {
  return { podSelector: {}, policyTypes: ["Ingress", "Egress"] };
}

/** Every pod of the namespace may ask the cluster DNS. @internal */
export function allowDnsSpec(dns: InClusterPeer = DEFAULT_DNS): NetworkPolicySpec {
  return { podSelector: {}, policyTypes: ["Egress"], egress: [dnsEgressRule(dns)] };
}

/**
 * The two policies of a namespace the stack owns, `<base>-default-deny` and `<base>-allow-dns`;
 * each workload's own policy allows the rest. `resourceName` keeps Pulumi names unique per namespace.
 * @internal
 */
export function namespaceNetworkPolicies(
  resourceName: string,
  base: string,
  namespace: string,
  labels: Record<string, string>,
  dns: InClusterPeer,
  opts: pulumi.CustomResourceOptions,
): void {
  const deny = objectName(base, "default-deny");
  new k8s.networking.v1.NetworkPolicy(
    `${resourceName}-default-deny`,
    { metadata: { name: deny, namespace, labels }, spec: defaultDenySpec() },
    opts,
  );
  const allowDns = objectName(base, "allow-dns");
  new k8s.networking.v1.NetworkPolicy(
    `${resourceName}-allow-dns`,
    { metadata: { name: allowDns, namespace, labels }, spec: allowDnsSpec(dns) },
    opts,
  );
}
