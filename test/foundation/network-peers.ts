/**
 * NetworkPolicy peers and rules as the components (components/shared/network.ts) and the chart
 * write them, for the tests of every part that expects them: a namespace is chosen by its
 * `kubernetes.io/metadata.name` label, which Kubernetes sets on every namespace.
 */

/** Pods in `namespace` (all of them, or those with `podLabels`). */
export function namespacePeer(namespace: string, podLabels?: Record<string, string>) {
  return {
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
    ...(podLabels ? { podSelector: { matchLabels: podLabels } } : {}),
  };
}

/** The egress rule to the cluster DNS (networkPolicy.dns, here its default: kube-dns in kube-system) every part's policy starts with. */
export const DNS_RULE = {
  to: [namespacePeer("kube-system", { "k8s-app": "kube-dns" })],
  ports: [
    { port: 53, protocol: "UDP" },
    { port: 53, protocol: "TCP" },
  ],
};
