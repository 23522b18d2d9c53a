/**
 * NetworkPolicy pieces shared by every component: the in-cluster peers the stack's workloads talk
 * to (cluster DNS, istiod), the DNS egress rule, and the two namespace-wide policies the Stack puts
 * in every namespace it owns (a default deny of all ingress and egress, and DNS for every pod).
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
import { objectName } from "./names";

type NetworkPolicyPeer = k8s.types.input.networking.v1.NetworkPolicyPeer;
type NetworkPolicyEgressRule = k8s.types.input.networking.v1.NetworkPolicyEgressRule;
type NetworkPolicySpec = k8s.types.input.networking.v1.NetworkPolicySpec;

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

/** The cluster DNS: CoreDNS/kube-dns keeps the `k8s-app: kube-dns` label in kube-system. */
export const DEFAULT_DNS: InClusterPeer = { namespace: "kube-system", podSelector: { "k8s-app": "kube-dns" } };
/** istiod, in Istio's default namespace (its pods carry `app: istiod`, whatever the revision). */
export const DEFAULT_ISTIOD: InClusterPeer = { namespace: "istio-system", podSelector: { app: "istiod" } };
/** istiod's port for xDS and certificates over TLS (the injected proxy's CA_ADDR and discovery address). */
export const ISTIOD_XDS_PORT = 15012;
/** An Istio proxy's readiness port (the injected readinessProbe) and its Envoy metrics port. */
export const ISTIO_HEALTH_PORT = 15021;
export const ISTIO_METRICS_PORT = 15090;

/** A peer for pods in a namespace known by name. */
export function peerIn(peer: InClusterPeer): NetworkPolicyPeer {
  return { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": peer.namespace } }, podSelector: { matchLabels: peer.podSelector } };
}

/** Egress to the cluster DNS on 53, UDP and TCP (TCP for answers over 512 bytes). */
export function dnsEgressRule(dns: InClusterPeer = DEFAULT_DNS): NetworkPolicyEgressRule {
  return { to: [peerIn(dns)], ports: [{ port: 53, protocol: "UDP" }, { port: 53, protocol: "TCP" }] };
}

/** Every pod of the namespace: no ingress, no egress, unless another policy allows it. */
export function defaultDenySpec(): NetworkPolicySpec {
  return { podSelector: {}, policyTypes: ["Ingress", "Egress"] };
}

/** Every pod of the namespace may ask the cluster DNS. */
export function allowDnsSpec(dns: InClusterPeer = DEFAULT_DNS): NetworkPolicySpec {
  return { podSelector: {}, policyTypes: ["Egress"], egress: [dnsEgressRule(dns)] };
}

/**
 * The two policies of a namespace the stack owns, `<base>-default-deny` and `<base>-allow-dns`;
 * each workload's own policy allows the rest. `resourceName` keeps Pulumi names unique per namespace.
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
  new k8s.networking.v1.NetworkPolicy(`${resourceName}-default-deny`, { metadata: { name: deny, namespace, labels }, spec: defaultDenySpec() }, opts);
  const allowDns = objectName(base, "allow-dns");
  new k8s.networking.v1.NetworkPolicy(`${resourceName}-allow-dns`, { metadata: { name: allowDns, namespace, labels }, spec: allowDnsSpec(dns) }, opts);
}
